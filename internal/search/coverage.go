package search

import "slices"

// MaxGroups is the number of query word groups Coverage tells apart; the
// words of a longer query share the last bit.
const MaxGroups = 64

// Coverage reports which of the query's word groups each hit's entry
// holds, in any field: bit g of groups[i] is set when hit i holds a term
// of the g-th group (in the order the groups first appear in the terms).
// weights holds each group's IDF times the weight of its exact term (the term of
// weight 1, or else its heaviest), in the order of the bits. It takes the
// read lock once.
func (ix *Index) Coverage(hits []Hit, terms []Term) (groups []uint64, weights []float64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	type qterm struct {
		id  uint32
		bit uint
	}
	var (
		ids []int // the Group of each bit
		qs  []qterm
	)
	for _, t := range terms {
		b := slices.Index(ids, t.Group)
		if b < 0 {
			b = len(ids)
			ids = append(ids, t.Group)
			weights = append(weights, 0)
		}
		bit := uint(min(b, MaxGroups-1))
		pl := ix.list(t.Text)
		if pl == nil || pl.df == 0 {
			continue
		}
		weights[b] = max(weights[b], ix.idf(pl.df)*t.Weight)
		id, _ := ix.terms.find(t.Text)
		qs = append(qs, qterm{id, bit})
	}
	groups = make([]uint64, len(hits))
	for i, h := range hits {
		e := h.Entry
		var m uint64
		for _, id := range e.terms {
			for _, q := range qs {
				if q.id == id {
					m |= 1 << q.bit
				}
			}
		}
		groups[i] = m
	}
	return groups, weights
}

// OutlineCoverage is Coverage over the outlines of sources (see
// Source.Outline) rather than the hits' entries: bit g of groups[i] is set
// when the outline of sources[i] holds a term of the g-th group.
func (ix *Index) OutlineCoverage(sources []*Source, terms []Term) (groups []uint64, weights []float64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var (
		ids  []int
		qids []uint32
		bits []uint
	)
	for _, t := range terms {
		b := slices.Index(ids, t.Group)
		if b < 0 {
			b = len(ids)
			ids = append(ids, t.Group)
			weights = append(weights, 0)
		}
		pl := ix.list(t.Text)
		if pl == nil || pl.df == 0 {
			continue
		}
		weights[b] = max(weights[b], ix.idf(pl.df)*t.Weight)
		id, _ := ix.terms.find(t.Text)
		qids, bits = append(qids, id), append(bits, uint(min(b, MaxGroups-1)))
	}
	groups = make([]uint64, len(sources))
	for i, s := range sources {
		for k, id := range qids {
			if _, ok := slices.BinarySearch(s.Outline, id); ok {
				groups[i] |= 1 << bits[k]
			}
		}
	}
	return groups, weights
}
