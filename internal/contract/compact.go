package contract

import (
	"cmp"
	"slices"
	"sort"
)

// Compact returns doc in compact form: every distinct term once in Vocab,
// and each chunk's term frequencies as Fields of vocabulary indexes (fields
// by name, terms ascending). A chunk set repeats much of its vocabulary
// across chunks, so the compact form is smaller to store and cheaper to
// decode and index. A document already compact is returned as is; doc is
// never modified.
func (doc *IndexDoc) Compact() *IndexDoc {
	if doc.Vocab != nil || !hasTerms(doc.Chunks) {
		return doc
	}
	// One pass numbers the terms in order of appearance and records every
	// chunk's fields with those numbers; once the vocabulary is sorted,
	// the numbers are mapped to sorted positions.
	n := 0
	for i := range doc.Chunks {
		for _, tfs := range doc.Chunks[i].Terms {
			n += len(tfs)
		}
	}
	ids := make(map[string]uint32, n/2) // chunks share about half their terms
	vocab := make([]string, 0, n/2)
	out := *doc
	out.Chunks = make([]IndexChunk, len(doc.Chunks))
	for i, c := range doc.Chunks {
		names := make([]string, 0, len(c.Terms))
		for f, tfs := range c.Terms {
			if len(tfs) > 0 {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		c.Fields = nil
		for _, f := range names {
			ft := FieldTerms{Field: f}
			for t, tf := range c.Terms[f] {
				if tf <= 0 {
					continue
				}
				id, ok := ids[t]
				if !ok {
					id = uint32(len(vocab))
					ids[t] = id
					vocab = append(vocab, t)
				}
				ft.Terms = append(ft.Terms, id)
				ft.TFs = append(ft.TFs, uint32(tf))
			}
			if len(ft.Terms) > 0 {
				c.Fields = append(c.Fields, ft)
			}
		}
		c.Terms = nil
		out.Chunks[i] = c
	}
	order := make([]uint32, len(vocab)) // sorted position -> first-seen id
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(vocab[a], vocab[b]) })
	rank := make([]uint32, len(vocab)) // first-seen id -> sorted position
	out.Vocab = make([]string, len(vocab))
	for pos, id := range order {
		rank[id] = uint32(pos)
		out.Vocab[pos] = vocab[id]
	}
	for i := range out.Chunks {
		for j := range out.Chunks[i].Fields {
			sortField(&out.Chunks[i].Fields[j], rank)
		}
	}
	return &out
}

// sortField renumbers a field's terms by rank and sorts them ascending,
// keeping each frequency with its term: each pair is packed in one integer
// so that a plain integer sort does it.
func sortField(f *FieldTerms, rank []uint32) {
	packed := make([]uint64, len(f.Terms))
	for k, t := range f.Terms {
		packed[k] = uint64(rank[t])<<32 | uint64(f.TFs[k])
	}
	slices.Sort(packed)
	for k, p := range packed {
		f.Terms[k], f.TFs[k] = uint32(p>>32), uint32(p)
	}
}

func hasTerms(chunks []IndexChunk) bool {
	for i := range chunks {
		if len(chunks[i].Terms) > 0 {
			return true
		}
	}
	return false
}
