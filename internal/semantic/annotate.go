package semantic

import (
	"math"

	"github.com/knowhub/knowhub/internal/contract"
)

// Annotate sets the vector (IndexChunk.Vec) of every chunk of doc, compact
// or not, pooled from its terms: each term the table has weighs its
// inverse-frequency weight times 1 + ln of its frequency times its field's
// weight (fields weights lacks weigh 1), in each field it occurs in, and
// only the maxPooled weightiest count, which bounds the cost of a long
// section. A chunk none of whose terms the table has gets none.
func (t *Table) Annotate(doc *contract.IndexDoc, weights map[string]float32) {
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
	var picked []tw
	weight := func(field string) float32 {
		if w, ok := weights[field]; ok {
			return w
		}
		return 1
	}
	add := func(i int, tf uint32, fw float32) {
		if tf > 0 && fw > 0 {
			picked = append(picked, tw{i, fw * t.Weight(i) * tfWeight(tf)})
		}
	}
	for ci := range doc.Chunks {
		c := &doc.Chunks[ci]
		clear(p.sum)
		p.terms = 0
		picked = picked[:0]
		for _, f := range c.Fields {
			fw := weight(f.Field)
			for k, term := range f.Terms {
				if int(term) < len(vocab) && vocab[term] >= 0 {
					add(int(vocab[term]), f.TFs[k], fw)
				}
			}
		}
		for field, terms := range c.Terms {
			fw := weight(field)
			for term, tf := range terms {
				if i := t.Index(term); i >= 0 && tf > 0 {
					add(i, uint32(tf), fw)
				}
			}
		}
		if len(picked) > maxPooled {
			picked = weightiest(picked, maxPooled)
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

// tw is a term of a chunk, by table index, with its weight.
type tw struct {
	i int
	w float32
}

// weightiest reorders ts so that its k weightiest terms come first, in any
// order, and returns them (quickselect).
func weightiest(ts []tw, k int) []tw {
	lo, hi := 0, len(ts)-1
	for lo < hi {
		pivot := ts[(lo+hi)/2].w
		i, j := lo, hi
		for i <= j {
			for ts[i].w > pivot {
				i++
			}
			for ts[j].w < pivot {
				j--
			}
			if i <= j {
				ts[i], ts[j] = ts[j], ts[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			lo = hi
		}
	}
	return ts[:k]
}
