package semantic

import (
	"cmp"
	"math"
	"slices"

	"github.com/knowhub/knowhub/internal/contract"
)

// Annotate sets the vector (IndexChunk.Vec) of every chunk of doc, compact
// or not, pooled from its terms: each term the table has weighs its
// inverse-frequency weight times 1 + ln of its frequency, in each field it
// occurs in, and only the maxPooled weightiest count, which bounds the
// cost of a long section. A chunk none of whose terms the table has gets
// none.
func (t *Table) Annotate(doc *contract.IndexDoc) {
	if doc == nil || doc.Deleted {
		return
	}
	var vocab []int32 // table index of each doc.Vocab term, -1 when absent
	if len(doc.Vocab) > 0 {
		vocab = make([]int32, len(doc.Vocab))
		for i, term := range doc.Vocab {
			vocab[i] = int32(t.Index(term))
		}
	}
	p := t.NewPool()
	type tw struct {
		i int
		w float32
	}
	var picked []tw
	add := func(i int, tf uint32) {
		if tf > 0 {
			picked = append(picked, tw{i, t.Weight(i) * tfWeight(tf)})
		}
	}
	for ci := range doc.Chunks {
		c := &doc.Chunks[ci]
		clear(p.sum)
		p.terms = 0
		picked = picked[:0]
		for _, f := range c.Fields {
			for k, term := range f.Terms {
				if int(term) < len(vocab) && vocab[term] >= 0 {
					add(int(vocab[term]), f.TFs[k])
				}
			}
		}
		for _, terms := range c.Terms {
			for term, tf := range terms {
				if i := t.Index(term); i >= 0 && tf > 0 {
					add(i, uint32(tf))
				}
			}
		}
		if len(picked) > maxPooled {
			slices.SortFunc(picked, func(a, b tw) int { return cmp.Compare(b.w, a.w) })
			picked = picked[:maxPooled]
		}
		for _, x := range picked {
			t.AddTo(p.sum, x.i, x.w)
		}
		p.terms = len(picked)
		c.Vec = p.Encode()
	}
}

// maxPooled is the most terms pooled into a chunk's vector.
const maxPooled = 32

// tfWeights holds 1 + ln(tf) for small frequencies.
var tfWeights = func() (w [64]float32) {
	for i := 1; i < len(w); i++ {
		w[i] = float32(1 + math.Log(float64(i)))
	}
	return w
}()

func tfWeight(tf uint32) float32 {
	if tf < uint32(len(tfWeights)) {
		return tfWeights[tf]
	}
	return float32(1 + math.Log(float64(tf)))
}
