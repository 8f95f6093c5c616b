package engine

import (
	"cmp"
	"math"
	"slices"

	"github.com/knowhub/knowhub/internal/search"
)

// PageScoring weighs what a docs section draws from its page and from the
// share of the query it covers. A section lives on a page about
// something: the page whose subject is the question has many sections
// that match it, and together they cover the question's concepts, while
// a page that mentions them in passing matches in one section of many.
// The zero value leaves scores as BM25F made them.
type PageScoring struct {
	// Depth is how many of the best hits are rescored; the rest keep
	// their order below them.
	Depth int
	// Coord, when positive, scales a section by the IDF-weighted share of
	// the query's words it holds (title and summary included), raised to
	// Coord: a section matching most of the query's distinct concepts
	// beats one matching a single rare word many times.
	Coord float64
	// PageCoord is Coord for the words the page holds in any of its
	// rescored sections.
	PageCoord float64
	// Siblings adds to a section this share of the scores of its page's
	// other rescored sections, the k-th best of them divided by k.
	Siblings float64
	// Focus, when positive, scales a section by the share of its page's
	// sections among the rescored hits, raised to Focus: a long page
	// that matches in one section of many mentions the query in passing.
	// The share is taken over at most FocusSections sections, so a page
	// matching that many is not discounted.
	Focus         float64
	FocusSections int
	// Outline, when positive, scales every section of a page by 1 plus
	// Outline times the IDF-weighted share of the query's words its
	// heading outline holds (the headings of all its sections): a page
	// whose headings name the question is about it.
	Outline float64
	// CJKDamp and CJKRunPower weigh a query's CJK words against its
	// others. A run of n CJK characters is indexed as n-1 overlapping
	// bigrams, so a Chinese phrase ("模型提供商支持", six bigrams) would
	// outweigh the Latin word of the same query that names its subject (a
	// product, a provider) six times over, and a catalogue page repeating
	// the phrase on every line would beat the page about the product. Each
	// bigram of a run of m bigrams weighs (1 - CJKDamp) × m^-CJKRunPower.
	CJKDamp     float64
	CJKRunPower float64
	// Legacy and Dated are the shares of their scores that legacy and
	// dated pages (PageRole) lose, so that the current reference page wins
	// when both match: a superseded product's page describes what no
	// longer holds, and a release note or a blog post tells what changed
	// once, in passing, where the reference page is about it.
	Legacy float64
	Dated  float64
	// RepoFocus, when positive and several repositories are indexed,
	// scales a section by its repository's lift, relative to the best
	// lift of the head, raised to RepoFocus. A repository's lift is its
	// share of the rescored hits' scores over its share of the index's
	// sections: the repository the question is about holds more of the
	// head than its size explains, while a large repository's stray page
	// comes with few others.
	RepoFocus float64
	// OtherLanguage is the share of its score that a page in another
	// language than the query's loses, when the query's language is known
	// (lang.Query) and a page of the head is in it: a question is
	// answered first from the pages in its own language, and the others
	// stay as a fallback. Pages of undetermined language keep their score.
	OtherLanguage float64
}

// DefaultPageScoring returns the page parameters chosen on the dev
// halves of the judged docs sets (internal/eval/testdata/docs) by rounds
// of coordinate ascent (knowhub eval --sets ... --half dev --tune),
// maximising the mean over sets of hit@1 and nDCG@10 averaged (see
// docs/performance.md for the figures and the ablation). Focus carries
// most of the gain; siblings and CJK damping add less. Rescoring the best
// 100 hits rather than 50 scores no higher and would cost 1.8 times
// today's search median against 1.2 times (BenchmarkSearchDocs). CJK
// damping (CJKDamp 0.35, CJKRunPower 0.25) lifts the Chinese summaries
// from 0.753 to 0.802 hit@1 and holds the Chinese questions; it leaves
// queries without CJK text alone. Page coordination at 0.1 keeps a page
// that matches one stray word of a question (often the name of another
// feature) below the page that covers the question; it gains on the dev
// halves and costs SciFact one query at hit@1 (nDCG@10 0.7009 to 0.6999),
// which is noise. Legacy pages keep a fifth of their score (Legacy 0.8)
// and dated pages four fifths (Dated 0.2; 0.4 scored within 0.001 on the
// dev halves). Coordination over the section scored lower at every
// strength tried (0.1 to 3): BM25's saturation already keeps one repeated
// word from dominating, and long queries rarely match every word, so the
// share of them a section holds mostly grows with its length. The heading
// outline (Outline: the share of the query's words named by any of the
// page's headings) is built but off: it scored lower at every weight
// tried (0.05 to 1; sections already weigh their own headings at 2.5, so
// the outline mostly adds the headings of sections that did not match).
// Repository focus (RepoFocus 0.5) acts only when several repositories
// are indexed: with the four corpora of the question sets in one engine
// (knowhub eval --sets ... --together), the dev objective is 0.6750
// without it, 0.6796 at 0.25, 0.6880 at 0.5 and 0.6848 at 1.
// The language preference (OtherLanguage 0.95) acts only when the head
// holds pages in several languages; the sets indexed apart do not move.
// With the corpora together (English and Chinese), the dev objective is
// 0.6880 without it, 0.6884 at 0.3, 0.6909 at 0.5, and 0.6934 at 0.8 and
// 0.95 (the Chinese questions from 20 to 22 of 31 at hit@1; no set
// loses); 0.95 puts the pages in the query's language before the others
// almost always, which is what a reader of one language wants.
func DefaultPageScoring() PageScoring {
	return PageScoring{Depth: 50, Siblings: 0.05, Focus: 0.3, FocusSections: 64, CJKDamp: 0.35, CJKRunPower: 0.25, Legacy: 0.8, Dated: 0.2, PageCoord: 0.1, RepoFocus: 0.5, OtherLanguage: 0.95}
}

// rankPages rescores the head of hits (sorted, from Search on ix with
// terms) with the evidence of PageScoring and re-sorts it.
// qlang is the query's language, "" when unknown.
func rankPages(ix pageView, hits []search.Hit, terms []search.Term, p PageScoring, qlang string) {
	n := min(len(hits), p.Depth)
	coord := p.Coord > 0 || p.PageCoord > 0
	roles := p.Legacy > 0 || p.Dated > 0
	head := hits[:n]
	langs := p.OtherLanguage > 0 && qlang != "" && slices.ContainsFunc(head, func(h search.Hit) bool { return h.Entry.Source.Lang == qlang })
	if n == 0 || n < 2 && !coord && p.Outline <= 0 && !roles && !langs {
		return
	}
	var (
		groups  []uint64
		weights []float64
		total   float64
	)
	if coord {
		groups, weights = ix.Coverage(head, terms)
		for _, w := range weights {
			total += w
		}
		if total <= 0 {
			return
		}
	}
	share := func(m uint64) float64 { return groupShare(m, weights, total) }
	// Own scores, after coordination; then the head's pages, each hit's
	// page index and the hits of each page, best first.
	own := make([]float64, n)
	page := make([]int, n)
	var pages []*search.Source
	for i, h := range head {
		own[i] = h.Score
		if p.Coord > 0 {
			own[i] *= math.Pow(share(groups[i]), p.Coord)
		}
		page[i] = slices.Index(pages, h.Entry.Source) // a head holds few pages
		if page[i] < 0 {
			page[i] = len(pages)
			pages = append(pages, h.Entry.Source)
		}
	}
	var outline []uint64
	var outlineWeights []float64
	outlineTotal := 0.0
	if p.Outline > 0 {
		outline, outlineWeights = ix.OutlineCoverage(pages, terms)
		for _, w := range outlineWeights {
			outlineTotal += w
		}
	}
	var repoFactor map[string]float64
	if p.RepoFocus > 0 {
		repoFactor = repoLift(ix, head, own, p.RepoFocus)
	}
	byPage := make([]int, n)
	for i := range byPage {
		byPage[i] = i
	}
	slices.SortStableFunc(byPage, func(a, b int) int {
		if c := cmp.Compare(page[a], page[b]); c != 0 {
			return c
		}
		return cmp.Compare(own[b], own[a])
	})
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && page[byPage[hi]] == page[byPage[lo]] {
			hi++
		}
		members := byPage[lo:hi]
		src := pages[page[members[0]]]
		var union uint64
		for _, i := range members {
			if coord {
				union |= groups[i]
			}
		}
		factor := 1.0
		if p.PageCoord > 0 {
			factor *= math.Pow(share(union), p.PageCoord)
		}
		if p.Outline > 0 && outlineTotal > 0 {
			factor *= 1 + p.Outline*groupShare(outline[page[members[0]]], outlineWeights, outlineTotal)
		}
		if repoFactor != nil {
			factor *= repoFactor[src.Repo]
		}
		if roles {
			factor *= p.roleFactor(roleOfSource(src))
		}
		if langs && src.Lang != "" && src.Lang != qlang {
			factor *= 1 - p.OtherLanguage
		}
		if p.Focus > 0 && src.Chunks > 1 {
			c := max(p.FocusSections, 1)
			factor *= math.Pow(float64(min(len(members), c))/float64(min(src.Chunks, c)), p.Focus)
		}
		for _, i := range members {
			s := own[i]
			if p.Siblings > 0 {
				k := 1.0
				for _, j := range members {
					if j != i {
						s += p.Siblings * own[j] / k
						k++
					}
				}
			}
			head[i].Score = s * factor
		}
		lo = hi
	}
	slices.SortStableFunc(head, func(a, b search.Hit) int { return cmp.Compare(b.Score, a.Score) })
	// Keep the list descending across the boundary of the rescored head.
	if n < len(hits) && n > 0 {
		for i := n; i < len(hits) && hits[i].Score > head[n-1].Score; i++ {
			hits[i].Score = head[n-1].Score
		}
	}
}

// groupShare returns the share of total that the word groups set in m
// weigh: weights[b] is the weight of the group of bit b (see
// search.Index.Coverage).
func groupShare(m uint64, weights []float64, total float64) float64 {
	s := 0.0
	for b, w := range weights {
		if m&(1<<uint(min(b, search.MaxGroups-1))) != 0 {
			s += w
		}
	}
	return s / total
}

// repoLift returns, when the index holds several repositories, each head
// repository's factor under RepoFocus f (see PageScoring.RepoFocus), or nil.
// minFocusHead is the fewest hits a head needs for repository focus to
// weigh the repositories by it.
const minFocusHead = 4

func repoLift(ix pageView, head []search.Hit, own []float64, f float64) map[string]float64 {
	var repos []string
	var score []float64
	total := 0.0
	for i, h := range head {
		k := slices.Index(repos, h.Entry.Source.Repo)
		if k < 0 {
			k = len(repos)
			repos = append(repos, h.Entry.Source.Repo)
			score = append(score, 0)
		}
		score[k] += own[i]
		total += own[i]
	}
	shares, n := ix.RepoShares(repos)
	// A head of a few hits says nothing of which repository a question is
	// about: a tie between two repositories' copies of a page must stay a
	// tie for priority to decide it.
	if n < 2 || total <= 0 || len(head) < minFocusHead {
		return nil
	}
	lift := make([]float64, len(repos))
	best := 0.0
	for k := range repos {
		if shares[k] > 0 {
			lift[k] = score[k] / total / shares[k]
			best = max(best, lift[k])
		}
	}
	if best <= 0 {
		return nil
	}
	out := make(map[string]float64, len(repos))
	for k, r := range repos {
		out[r] = math.Pow(lift[k]/best, f)
	}
	return out
}
