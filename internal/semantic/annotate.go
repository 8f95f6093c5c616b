package semantic

import (
	"math"

	"github.com/knowhub/knowhub/internal/contract"
)

// Annotate sets the vector (IndexChunk.Vec) of every chunk of doc, compact
// or not, pooled from its terms: each term the table has weighs its
// inverse-frequency weight times 1 + ln of its frequency in the chunk,
// summed over fields. A chunk none of whose terms the table has gets none.
func (t *Table) Annotate(doc *contract.IndexDoc) {
	if doc == nil || doc.Deleted {
		return
	}
	var vocab []int // table index of each doc.Vocab term, -1 when absent
	if len(doc.Vocab) > 0 {
		vocab = make([]int, len(doc.Vocab))
		for i, term := range doc.Vocab {
			vocab[i] = t.Index(term)
		}
	}
	tfs := map[int]uint32{}
	p := t.NewPool()
	for ci := range doc.Chunks {
		c := &doc.Chunks[ci]
		clear(tfs)
		for _, f := range c.Fields {
			for k, term := range f.Terms {
				if int(term) < len(vocab) && vocab[term] >= 0 {
					tfs[vocab[term]] += f.TFs[k]
				}
			}
		}
		for _, terms := range c.Terms {
			for term, tf := range terms {
				if i := t.Index(term); i >= 0 && tf > 0 {
					tfs[i] += uint32(tf)
				}
			}
		}
		clear(p.sum)
		p.terms = 0
		for i, tf := range tfs {
			if tf > 0 {
				t.AddTo(p.sum, i, t.Weight(i)*float32(1+math.Log(float64(tf))))
				p.terms++
			}
		}
		c.Vec = p.Encode()
	}
}
