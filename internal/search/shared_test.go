package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// putStats converts a KH_INDEX document as put does and puts its
// statistics.
func putStats(ix *Index, key string, d *contract.IndexDoc) {
	d = d.Compact()
	out := &Doc{Collection: d.Collection, Repo: d.Repo, Path: d.Path, SourceSeq: d.SourceSeq, Deleted: d.Deleted, Vocab: d.Vocab}
	for _, c := range d.Chunks {
		ch := Chunk{ID: c.ID, Ord: c.Ord, Boost: c.Boost}
		for _, f := range c.Fields {
			ch.Fields = append(ch.Fields, FieldTerms{Field: f.Field, Terms: f.Terms, TFs: f.TFs})
		}
		out.Chunks = append(out.Chunks, ch)
	}
	ix.PutStats(key, out)
}

// shardedIndexes holds one whole index and n shards of it: each shard
// puts the documents the key assigns to it and the statistics of the
// others.
type shardedIndexes struct {
	whole  *Index
	shards []*Index
}

func newSharded(t *testing.T, p Params, n int) *shardedIndexes {
	s := &shardedIndexes{whole: mustNew(t, p)}
	for range n {
		s.shards = append(s.shards, mustNew(t, p))
	}
	return s
}

func (s *shardedIndexes) put(key string, d *contract.IndexDoc) {
	put(s.whole, key, d, nil)
	own := contract.ShardOf(key, len(s.shards))
	for i, ix := range s.shards {
		if i == own {
			put(ix, key, d, nil)
		} else {
			putStats(ix, key, d)
		}
	}
}

func (s *shardedIndexes) remove(key string) {
	s.whole.Remove(key)
	for _, ix := range s.shards {
		ix.Remove(key)
	}
}

// merged searches every shard and merges their hits by score, as a
// coordinator does.
func (s *shardedIndexes) merged(q Query) ([]Hit, int) {
	var all []Hit
	total := 0
	for _, ix := range s.shards {
		hits, n := ix.Search(q)
		all = append(all, hits...)
		total += n
	}
	sortDesc(all)
	return all[:min(len(all), q.Limit)], total
}

// Shards that hold the others' statistics score each of their entries
// exactly as one index of every document does, so their merged hits are
// the whole index's hits, to the last bit of every score, through puts,
// replacements and removals; typo expansion, document frequencies and
// repository shares read the whole collection too.
func TestShardsScoreAsOneIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string { return fmt.Sprint("w", int(math.Floor(math.Pow(rng.Float64(), 3)*300))) }
	for _, n := range []int{2, 3} {
		for pi, p := range []Params{docsLikeParams(), toolsLikeParams()} {
			s := newSharded(t, p, n)
			mkdoc := func(d int, seq uint64) *contract.IndexDoc { return randomDoc(rng, p, word, d, seq) }
			seq := uint64(0)
			for d := range 200 {
				seq++
				s.put(fmt.Sprint("docs.r.", d), mkdoc(d, seq))
			}
			check := func(stage string) {
				t.Helper()
				whole := s.whole.Stats()
				for i, ix := range s.shards {
					if got := ix.Stats().Collection; got != whole.Chunks {
						t.Fatalf("%d shards, %s: shard %d counts %d entries in the collection, want %d", n, stage, i, got, whole.Chunks)
					}
				}
				for qi := range 60 {
					q := Query{Limit: 1 + rng.IntN(15)}
					for g := range 1 + rng.IntN(5) {
						q.Terms = append(q.Terms, Term{Text: word(), Weight: 1, Group: g})
						if rng.IntN(3) == 0 {
							q.Terms = append(q.Terms, Term{Text: word(), Weight: 0.2, Group: g})
						}
					}
					if rng.IntN(3) == 0 {
						q.Filter = func(e *Entry) bool { return e.Source.Repo != "r1" }
					}
					want, wantTotal := s.whole.Search(q)
					got, gotTotal := s.merged(q)
					if gotTotal != wantTotal || len(got) != len(want) {
						t.Fatalf("%d shards, params %d, %s, query %d: %d hits of %d, want %d of %d", n, pi, stage, qi, len(got), gotTotal, len(want), wantTotal)
					}
					for i := range want {
						if got[i].Score != want[i].Score || got[i].Entry.Source.Key != want[i].Entry.Source.Key || got[i].Entry.Ord != want[i].Entry.Ord {
							t.Fatalf("%d shards, params %d, %s, query %d, hit %d: %s#%d %v, want %s#%d %v", n, pi, stage, qi, i,
								got[i].Entry.Source.Key, got[i].Entry.Ord, got[i].Score, want[i].Entry.Source.Key, want[i].Entry.Ord, want[i].Score)
						}
					}
					w := q.Terms[0].Text
					repos := []string{"r0", "r1", "r2"}
					wantShares, wantRepos := s.whole.RepoShares(repos)
					for i, ix := range s.shards {
						if ix.DF(w) != s.whole.DF(w) {
							t.Fatalf("%s: shard %d: DF(%s) %d, want %d", stage, i, w, ix.DF(w), s.whole.DF(w))
						}
						if got, want := ix.Fuzzy(w+"x", 1, 3), s.whole.Fuzzy(w+"x", 1, 3); !slices.Equal(got, want) {
							t.Fatalf("%s: shard %d: Fuzzy(%sx) %v, want %v", stage, i, w, got, want)
						}
						if shares, repos := ix.RepoShares(repos); !slices.Equal(shares, wantShares) || repos != wantRepos {
							t.Fatalf("%s: shard %d: repo shares %v of %d, want %v of %d", stage, i, shares, repos, wantShares, wantRepos)
						}
					}
				}
			}
			check("loaded")
			// Each shard restarts from a snapshot of itself: the other
			// shards' statistics come back with its entries, and later
			// updates apply to them.
			for i, ix := range s.shards {
				restored := mustNew(t, p)
				if err := restored.Restore(ix.Snapshot()); err != nil {
					t.Fatal(err)
				}
				s.shards[i] = restored
			}
			check("restored")
			for d := 0; d < 200; d += 3 {
				seq++
				s.put(fmt.Sprint("docs.r.", d), mkdoc(d, seq))
			}
			check("replaced")
			for d := 1; d < 200; d += 4 {
				s.remove(fmt.Sprint("docs.r.", d))
			}
			check("removed")
			// Every document gone: no shard keeps a term.
			for d := range 200 {
				s.remove(fmt.Sprint("docs.r.", d))
			}
			for i, ix := range s.shards {
				if st := ix.Stats(); st.Terms != 0 || st.Collection != 0 {
					t.Fatalf("%d shards: shard %d keeps %d terms and %d entries once every document is removed", n, i, st.Terms, st.Collection)
				}
			}
		}
	}
}

// TermSetOf gives an entry of another shard the term set TermSets gives
// it in its own shard: the same terms at the same IDFs (ids differ from
// index to index, so the IDFs are compared sorted).
func TestTermSetOfMatchesTermSets(t *testing.T) {
	s := newSharded(t, docsLikeParams(), 2)
	for d := range 40 {
		d := doc(uint64(d+1), map[string]int{fmt.Sprint("a", d%7): 1, fmt.Sprint("b", d%5): 2, "common": 1})
		d.Path = fmt.Sprint(d.SourceSeq, ".md")
		s.put(fmt.Sprint("docs.r.", d.SourceSeq), d)
	}
	sorted := func(v []float64) []float64 { v = slices.Clone(v); slices.Sort(v); return v }
	for i, ix := range s.shards {
		hits := search(ix, 50, "common")
		if len(hits) == 0 {
			t.Fatalf("shard %d: no hits", i)
		}
		sets := ix.TermSets(hits, nil)
		for k, h := range hits {
			terms := ix.EntryTerms(h.Entry)
			got := s.shards[1-i].TermSetOf(terms)
			if want := sorted(sets[k].IDF); !slices.Equal(sorted(got.IDF), want) || len(got.IDs) != len(terms) {
				t.Fatalf("shard %d hit %d: IDFs %v from the other shard, want %v", i, k, got.IDF, want)
			}
		}
	}
}
