package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// exhaustive scores every live entry with the BM25F formula, no pruning:
// the reference that Search must reproduce.
func exhaustive(ix *Index, q Query) ([]Hit, int) {
	n := float64(ix.alive)
	var hits []Hit
	for ord, e := range ix.entries {
		st := ix.stats[ord]
		if !st.alive() || (q.Filter != nil && !q.Filter(e)) {
			continue
		}
		best := map[int]float64{}
		matched := false
		for _, t := range q.Terms {
			pl := ix.list(t.Text)
			if pl == nil || pl.df == 0 {
				continue
			}
			for _, p := range pl.postings {
				if int(p.doc) != ord {
					continue
				}
				matched = true
				idf := math.Log(1 + (n-float64(pl.df)+0.5)/(float64(pl.df)+0.5))
				if ix.params.IDFPower > 0 {
					idf = math.Pow(idf, ix.params.IDFPower)
				}
				var shared, own float64
				for f, fp := range ix.params.Fields {
					avg := float64(ix.sumLen[f]) / n
					if avg == 0 {
						avg = 1
					}
					tf := float64(p.tf[f]) / (1 - fp.B + fp.B*float64(st.lens[f])/avg)
					if fp.K1 > 0 {
						own += fp.Weight * tf * (fp.K1 + 1) / (fp.K1 + tf)
					} else {
						shared += fp.Weight * tf
					}
				}
				if shared > 0 {
					own += shared * (ix.params.K1 + 1) / (ix.params.K1 + shared)
				}
				s := idf * t.Weight * own
				best[t.Group] = max(best[t.Group], s)
			}
		}
		if !matched {
			continue
		}
		sum := 0.0
		for _, s := range best {
			sum += s
		}
		hits = append(hits, Hit{Entry: e, Score: sum * st.boost})
	}
	sort.Slice(hits, func(i, j int) bool { return less(hits[j], hits[i]) })
	return hits, len(hits)
}

// randomDoc returns document d of a random corpus: one to three chunks,
// a fifth of them boosted, each field up to twelve words of word().
func randomDoc(rng *rand.Rand, p Params, word func() string, d int, seq uint64) *contract.IndexDoc {
	doc := &contract.IndexDoc{Collection: "docs", Repo: fmt.Sprint("r", d%3), Path: fmt.Sprint(d, ".md"), SourceSeq: seq}
	for c := 0; c < 1+rng.IntN(3); c++ {
		ch := contract.IndexChunk{ID: fmt.Sprint(c), Ord: c, Terms: map[string]map[string]int{}}
		if rng.IntN(5) == 0 {
			ch.Boost = 0.4
		}
		for _, f := range p.Fields {
			tf := map[string]int{}
			for w := 0; w < rng.IntN(12); w++ {
				tf[word()] += 1 + rng.IntN(3)
			}
			ch.Terms[f.Name] = tf
		}
		doc.Chunks = append(doc.Chunks, ch)
	}
	return doc
}

// TestPrunedSearchMatchesExhaustive checks max-score pruning against the
// exhaustive reference on random corpora with a skewed vocabulary (some
// words everywhere, most rare), typo-like variant groups, boosts, filters,
// removals (in half the rounds) and small limits, where pruning engages
// most.
func TestPrunedSearchMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	params := []Params{docsLikeParams(), toolsLikeParams(), bodyParams()}
	word := func() string { return fmt.Sprint("w", int(math.Floor(math.Pow(rng.Float64(), 3)*300))) }
	pruned := 0
	for round := 0; round < 60; round++ {
		p := params[round%len(params)]
		ix := mustNew(t, p)
		for d := 0; d < 150; d++ {
			doc := randomDoc(rng, p, word, d, uint64(d+1))
			put(ix, doc.Path, doc, nil)
		}
		// Half the rounds remove documents, leaving dead entries; the
		// others count matches without reading entries.
		for d := 0; round%2 == 0 && d < 150; d += 7 {
			ix.Remove(fmt.Sprint(d, ".md"))
		}
		for qi := 0; qi < 40; qi++ {
			q := Query{Limit: 1 + rng.IntN(12)}
			for g := 0; g < 1+rng.IntN(5); g++ {
				q.Terms = append(q.Terms, Term{Text: word(), Weight: 1, Group: g})
				if rng.IntN(3) == 0 {
					q.Terms = append(q.Terms, Term{Text: word(), Weight: 0.2, Group: g})
				}
			}
			if rng.IntN(3) == 0 {
				q.Filter = func(e *Entry) bool { return e.Source.Repo != "r1" }
			}
			all, wantTotal := exhaustive(ix, q)
			want := all[:min(len(all), q.Limit)]
			got, gotTotal, wasPruned := ix.search(q)
			if gotTotal != wantTotal || len(got) != len(want) {
				t.Fatalf("round %d query %+v: %d hits of %d, want %d of %d", round, q.Terms, len(got), gotTotal, len(want), wantTotal)
			}
			// Sums in another order may differ in the last bits, so equal
			// scores may tie-break differently: compare scores by rank, and
			// each hit's score with its reference score.
			ref := map[*Entry]float64{}
			for _, h := range all {
				ref[h.Entry] = h.Score
			}
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }
			for i := range want {
				if !close(got[i].Score, want[i].Score) || !close(got[i].Score, ref[got[i].Entry]) {
					t.Fatalf("round %d query %+v hit %d: %s#%s %.9f, want %s#%s %.9f", round, q.Terms, i,
						got[i].Entry.Source.Key, got[i].Entry.ID, got[i].Score, want[i].Entry.Source.Key, want[i].Entry.ID, want[i].Score)
				}
			}
			if wasPruned {
				pruned++
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no query was pruned: the test does not exercise pruning")
	}
	t.Logf("%d of %d queries pruned", pruned, 60*40)
}
