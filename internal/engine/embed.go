package engine

import (
	"cmp"
	"slices"

	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/semantic"
)

// Embeddings configures the fusion of docs rankings with the vectors of an
// embeddings endpoint (search.Entry.Embedding): a request that carries the
// query's vector (contract.SearchRequest.Embedding) ranks its candidates by
//
//	(1-Weight)·lexical/best lexical + Weight·(cos-min)/(max-min)
//
// where the cosines are normalised over the candidates: the lexical hits
// and the Candidates entries nearest to the query, which may share no word
// with it. An entry without a vector of Model keeps its lexical share
// alone, as if its cosine were its lexical one.
type Embeddings struct {
	Model  string
	Weight float64
	// Candidates is how many entries nearest to the query join the
	// lexical hits (default 50).
	Candidates int
}

// DefaultEmbeddingWeight is the weight of the vectors chosen on the dev
// halves of the judged docs sets (docs/performance.md).
const DefaultEmbeddingWeight = 0.1

// SetEmbeddings turns fusion with endpoint vectors on (a Model and a
// positive Weight) or off. Call it before the engine serves.
func (e *Engine) SetEmbeddings(em Embeddings) {
	if em.Candidates <= 0 {
		em.Candidates = 50
	}
	e.emb = em
}

// fuseEmbedding returns hits ranked by the fused score of Embeddings,
// with the entries nearest to q that near gives added when more is set,
// and how many entries it added.
func (e *Engine) fuseEmbedding(hits []search.Hit, q []float32, near nearFunc, more bool) ([]search.Hit, int) {
	em := e.emb
	if em.Model == "" || em.Weight <= 0 || len(q) == 0 {
		return hits, 0
	}
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	type cand struct {
		hit    search.Hit
		lex    float64
		cos    float32
		hasVec bool
	}
	cands := make([]cand, 0, len(hits)+em.Candidates)
	in := make(map[*search.Entry]bool, len(hits))
	for _, h := range hits {
		c := cand{hit: h}
		if best > 0 {
			c.lex = h.Score / best
		}
		if en := h.Entry; en.Source.EmbeddingModel == em.Model && len(en.Embedding) == len(q) {
			c.cos, c.hasVec = semantic.Cosine(q, en.Embedding), true
		}
		cands = append(cands, c)
		in[h.Entry] = true
	}
	added := 0
	if more {
		for _, n := range near(q, in, em.Candidates) {
			cands = append(cands, cand{hit: search.Hit{Entry: n.entry}, cos: n.cos, hasVec: true})
			added++
		}
	}
	lo, hi, seen := float32(0), float32(0), false
	for _, c := range cands {
		if !c.hasVec {
			continue
		}
		if !seen {
			lo, hi, seen = c.cos, c.cos, true
		}
		lo, hi = min(lo, c.cos), max(hi, c.cos)
	}
	if !seen {
		return hits, 0
	}
	scale := best
	if scale <= 0 {
		scale = 1
	}
	out := make([]search.Hit, len(cands))
	for i, c := range cands {
		sim := c.lex
		if c.hasVec {
			sim = 1
			if hi > lo {
				sim = float64((c.cos - lo) / (hi - lo))
			}
		}
		out[i] = search.Hit{Entry: c.hit.Entry, Score: scale * ((1-em.Weight)*c.lex + em.Weight*sim)}
	}
	slices.SortStableFunc(out, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Entry.Source.Key, b.Entry.Source.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.Entry.Ord, b.Entry.Ord)
	})
	return out, added
}

// nearest returns the k entries of the docs index nearest to q with a
// vector of the engine's model that filter keeps, best first, leaving out
// those in skip.
func (e *Engine) nearest(q []float32, filter func(*search.Entry) bool, skip map[*search.Entry]bool, k int) []nearEntry {
	model := e.emb.Model
	var near []nearEntry
	e.docs.EachEntry(func(en *search.Entry) bool {
		if skip[en] || en.Source.EmbeddingModel != model || len(en.Embedding) != len(q) || (filter != nil && !filter(en)) {
			return true
		}
		c := nearEntry{entry: en, cos: semantic.Cosine(q, en.Embedding)}
		if len(near) == k && c.cos <= near[len(near)-1].cos {
			return true
		}
		at, _ := slices.BinarySearchFunc(near, c.cos, func(a nearEntry, cos float32) int { return cmp.Compare(cos, a.cos) })
		near = slices.Insert(near, at, c)
		if len(near) > k {
			near = near[:k]
		}
		return true
	})
	return near
}
