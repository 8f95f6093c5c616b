package engine

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// Shadow is a hit that lost conflict resolution.
type Shadow struct {
	Hit    search.Hit
	Winner search.Hit
	Reason string
}

// SimilarThreshold is the IDF-weighted Jaccard similarity of two
// sections' term sets at or above which sections at different paths in
// different repositories are taken for copies of one another. Over every
// pair of sections from distinct pages of openclaw-docs (9,777 sections),
// none reaches 0.9 (4 reach 0.85, 67 reach 0.7); with unweighted Jaccard,
// templated pages that differ only in a product name (plugin reference
// pages, channel "Related" lists) reach 0.9 in 17 pairs and 0.7 in 2,385.
const SimilarThreshold = 0.9

// minEditShared is the least share of words two sections of different
// repositories with the same file name and heading keep in common, around
// one run of words that differs, to be taken for copies of one another: an
// extension's copy of a core page that rewords a clause ("the
// authoritative core documentation" / "the extension documentation").
// Templated pages of different subjects differ where each names its
// subject, in several places, so they are no copies; sections of one
// repository are never compared.
const minEditShared = 0.75

// minSimilarTerms is the fewest distinct terms a section needs to be
// compared by content: a heading with a line under it is no copy.
const minSimilarTerms = 8

// TermSource gives the term sets of hits (search.Index).
type TermSource interface {
	TermCounts(hits []search.Hit) []int
	TermSets(hits []search.Hit, want []bool) []search.TermSet
}

// Resolve applies docs conflict resolution to hits (sorted by descending
// score): hits from different repositories whose normalised section paths
// match, or whose contents are near-identical (with terms given:
// SimilarTerms at least SimilarThreshold), form a group; the lowest priority number wins, core beats extension at equal
// priority, then the higher score. Hits of the winner's own repository
// stay. Winners are ordered by score; equal scores put the lower priority
// number first, then core before extension, then keep their order.
func Resolve(hits []search.Hit, terms TermSource) (kept []search.Hit, shadowed []Shadow) {
	if oneRepo(hits) {
		kept = slices.Clone(hits)
		sortKept(kept)
		return kept, nil // conflicts are between repositories
	}
	parent := make([]int, len(hits))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		if ri, rj := find(i), find(j); ri != rj {
			parent[max(ri, rj)] = min(ri, rj)
		}
	}
	first := make(map[string]int, len(hits))
	for i, h := range hits {
		if j, ok := first[h.Entry.SectionKey]; ok {
			union(j, i)
		} else {
			first[h.Entry.SectionKey] = i
		}
	}
	similar := make(map[[2]int]float64)
	if terms != nil {
		// Only pairs of similar sizes and scores from different
		// repositories can be copies; only their members' term sets are
		// built.
		counts := terms.TermCounts(hits)
		var pairs [][2]int
		want := make([]bool, len(hits))
		for i := range hits {
			for j := i + 1; j < len(hits); j++ {
				if hits[i].Entry.Source.Repo != hits[j].Entry.Source.Repo && find(i) != find(j) &&
					comparableScores(hits[i].Score, hits[j].Score) && comparableSizes(counts[i], counts[j]) {
					pairs = append(pairs, [2]int{i, j})
					want[i], want[j] = true, true
				}
			}
		}
		if len(pairs) > 0 {
			sets := terms.TermSets(hits, want)
			for _, p := range pairs {
				sim := SimilarTerms(sets[p[0]], sets[p[1]])
				copied := sim >= SimilarThreshold
				if a, b := hits[p[0]].Entry, hits[p[1]].Entry; !copied && sameName(a, b) {
					// A copy that rewords one run of words.
					if shared, ok := oneEditApart(a.Text, b.Text); ok && shared >= minEditShared {
						sim, copied = shared, true
					}
				}
				if copied {
					similar[p] = sim
					union(p[0], p[1])
				}
			}
		}
	}
	groups := make(map[int][]int, len(hits))
	order := make([]int, 0, len(hits))
	for i := range hits {
		r := find(i)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], i)
	}
	lost := make([]bool, len(hits))
	for _, r := range order {
		idx := groups[r]
		if len(idx) < 2 {
			continue
		}
		best := idx[0]
		for _, i := range idx[1:] {
			if beats(hits[i], hits[best]) {
				best = i
			}
		}
		winRepo := hits[best].Entry.Source.Repo
		for _, i := range idx {
			if hits[i].Entry.Source.Repo == winRepo {
				continue
			}
			lost[i] = true
			why := reason(hits[best], hits[i])
			if hits[i].Entry.SectionKey != hits[best].Entry.SectionKey {
				sim, ok := similar[[2]int{min(i, best), max(i, best)}]
				if ok {
					why = fmt.Sprintf("near-identical content (%.0f%% shared terms) to %s:%s; %s", 100*sim, winRepo, hits[best].Entry.Source.Path, why)
				} else {
					why = fmt.Sprintf("near-identical content to a section grouped with %s:%s; %s", winRepo, hits[best].Entry.Source.Path, why)
				}
			}
			shadowed = append(shadowed, Shadow{Hit: hits[i], Winner: hits[best], Reason: why})
		}
	}
	for i, h := range hits {
		if !lost[i] {
			kept = append(kept, h)
		}
	}
	sortKept(kept)
	sort.SliceStable(shadowed, func(i, j int) bool { return shadowed[i].Hit.Score > shadowed[j].Hit.Score })
	return kept, shadowed
}

// sameName reports whether two sections have the same file name (without
// its directory and extension) and the same last heading.
func sameName(a, b *search.Entry) bool {
	base := func(p string) string {
		p = path.Base(p)
		return strings.ToLower(strings.TrimSuffix(p, path.Ext(p)))
	}
	last := func(h []string) string {
		if len(h) == 0 {
			return ""
		}
		return strings.ToLower(strings.TrimSpace(h[len(h)-1]))
	}
	return base(a.Source.Path) == base(b.Source.Path) && last(a.HeadingPath) == last(b.HeadingPath)
}

// oneEditApart reports whether two texts differ in one run of words only,
// and what share of the longer one's words the rest is: the words they
// start with in common and those they end with. Case and the punctuation
// around words do not count.
func oneEditApart(a, b string) (shared float64, ok bool) {
	wa, wb := words(a), words(b)
	n := max(len(wa), len(wb))
	if min(len(wa), len(wb)) < minSimilarTerms {
		return 0, false
	}
	pre := 0
	for pre < len(wa) && pre < len(wb) && wa[pre] == wb[pre] {
		pre++
	}
	suf := 0
	for suf < len(wa)-pre && suf < len(wb)-pre && wa[len(wa)-1-suf] == wb[len(wb)-1-suf] {
		suf++
	}
	return float64(pre+suf) / float64(n), true
}

// words splits text into lower-case words without surrounding punctuation.
func words(text string) []string {
	f := strings.Fields(strings.ToLower(text))
	out := f[:0]
	for _, w := range f {
		if w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// sortKept orders hits by descending score; at equal scores the lower
// priority number first, then core before extension; otherwise the order
// stays (the index breaks ties by source key and ordinal).
func sortKept(hits []search.Hit) {
	slices.SortStableFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		am, bm := a.Entry.Source.Meta, b.Entry.Source.Meta
		if c := cmp.Compare(am.Priority, bm.Priority); c != 0 {
			return c
		}
		ac, bc := am.Type == contract.RepoCore, bm.Type == contract.RepoCore
		switch {
		case ac && !bc:
			return -1
		case bc && !ac:
			return 1
		}
		return 0
	})
}

// similarScoreRatio is the least ratio of two hits' scores for them to be
// compared as copies: sections that share nine tenths of their terms'
// weight score close together on any query.
const similarScoreRatio = 0.7

// comparableScores reports whether scores a and b are within
// similarScoreRatio of each other.
func comparableScores(a, b float64) bool {
	return min(a, b) >= similarScoreRatio*max(a, b)
}

// comparableSizes reports whether sections of a and b distinct terms are
// worth comparing: both at least minSimilarTerms, and no further apart
// than an unweighted Jaccard of SimilarThreshold allows (plus one term).
func comparableSizes(a, b int) bool {
	return a >= minSimilarTerms && b >= minSimilarTerms &&
		float64(min(a, b)) >= SimilarThreshold*float64(max(a, b))-1
}

// SimilarTerms is the IDF-weighted Jaccard similarity of two term sets:
// the IDF mass of the shared terms over that of all their terms. The rare
// terms that name a page's subject weigh most, so templated pages about
// different subjects stay apart while copies come out near 1. Sets too
// small to judge (fewer than minSimilarTerms), or whose sizes differ by
// more than SimilarThreshold allows an unweighted Jaccard, score 0 without
// being compared.
func SimilarTerms(x, y search.TermSet) float64 {
	a, b := x.IDs, y.IDs
	if !comparableSizes(len(a), len(b)) {
		return 0
	}
	var shared, all float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			shared += x.IDF[i]
			all += x.IDF[i]
			i++
			j++
		case a[i] < b[j]:
			all += x.IDF[i]
			i++
		default:
			all += y.IDF[j]
			j++
		}
	}
	for ; i < len(a); i++ {
		all += x.IDF[i]
	}
	for ; j < len(b); j++ {
		all += y.IDF[j]
	}
	if all == 0 {
		return 0
	}
	return shared / all
}

// beats reports whether a wins a conflict against b.
func beats(a, b search.Hit) bool {
	am, bm := a.Entry.Source.Meta, b.Entry.Source.Meta
	if am.Priority != bm.Priority {
		return am.Priority < bm.Priority
	}
	if ac, bc := am.Type == contract.RepoCore, bm.Type == contract.RepoCore; ac != bc {
		return ac
	}
	return a.Score > b.Score
}

func reason(w, l search.Hit) string {
	wm, lm := w.Entry.Source.Meta, l.Entry.Source.Meta
	switch {
	case wm.Priority != lm.Priority:
		return fmt.Sprintf("repository %s has priority %d, ahead of %s's %d", w.Entry.Source.Repo, wm.Priority, l.Entry.Source.Repo, lm.Priority)
	case wm.Type != lm.Type:
		return fmt.Sprintf("core repository %s beats %s repository %s at equal priority %d", w.Entry.Source.Repo, lm.Type, l.Entry.Source.Repo, wm.Priority)
	default:
		return fmt.Sprintf("same priority and type; %s scored higher (%.3f > %.3f)", w.Entry.Source.Repo, w.Score, l.Score)
	}
}

// oneRepo reports whether every hit comes from the same repository.
func oneRepo(hits []search.Hit) bool {
	for _, h := range hits[min(1, len(hits)):] {
		if h.Entry.Source.Repo != hits[0].Entry.Source.Repo {
			return false
		}
	}
	return true
}
