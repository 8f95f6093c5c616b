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
	ids := make(map[string]uint32, 256)
	var vocab []string
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
// keeping each frequency with its term.
func sortField(f *FieldTerms, rank []uint32) {
	for k, t := range f.Terms {
		f.Terms[k] = rank[t]
	}
	sort.Sort(byTerm{f})
}

type byTerm struct{ f *FieldTerms }

func (b byTerm) Len() int           { return len(b.f.Terms) }
func (b byTerm) Less(i, j int) bool { return b.f.Terms[i] < b.f.Terms[j] }
func (b byTerm) Swap(i, j int) {
	b.f.Terms[i], b.f.Terms[j] = b.f.Terms[j], b.f.Terms[i]
	b.f.TFs[i], b.f.TFs[j] = b.f.TFs[j], b.f.TFs[i]
}

func hasTerms(chunks []IndexChunk) bool {
	for i := range chunks {
		if len(chunks[i].Terms) > 0 {
			return true
		}
	}
	return false
}
