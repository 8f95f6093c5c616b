package search

import (
	"cmp"
	"slices"
)

// MaxGroups is the number of query word groups Coverage tells apart; the
// words of a longer query share the last bit.
const MaxGroups = 64

// coverageTerm is a query term the index holds and the bit of its group.
type coverageTerm struct {
	id  uint32
	bit uint
}

// coverageTerms returns the query terms the index holds, each with the bit of
// its word group (in the order the groups first appear in terms), and each
// group's weight: its IDF times the weight of its heaviest held term. The
// caller holds the read lock.
func (ix *Index) coverageTerms(terms []Term) (held []coverageTerm, weights []float64) {
	var groups []int // the Group of each bit
	for _, t := range terms {
		b := slices.Index(groups, t.Group)
		if b < 0 {
			b = len(groups)
			groups = append(groups, t.Group)
			weights = append(weights, 0)
		}
		pl := ix.list(t.Text)
		if pl == nil || pl.n() == 0 {
			continue
		}
		weights[b] = max(weights[b], ix.idf(pl.n())*t.Weight)
		id, _ := ix.terms.find(t.Text)
		held = append(held, coverageTerm{id, uint(min(b, MaxGroups-1))})
	}
	return held, weights
}

// Coverage reports which of the query's word groups each hit's entry
// holds, in any field: bit g of groups[i] is set when hit i holds a term
// of the g-th group (in the order the groups first appear in the terms).
// weights holds each group's IDF times the weight of its exact term (the term of
// weight 1, or else its heaviest), in the order of the bits. It takes the
// read lock once.
func (ix *Index) Coverage(hits []Hit, terms []Term) (groups []uint64, weights []float64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	qs, weights := ix.coverageTerms(terms)
	groups = make([]uint64, len(hits))
	// A posting list is ascending by entry ord (entries are appended in
	// ord order, and compaction keeps it), so each hit is found in each
	// query term's list by binary search: a few probes per term rather
	// than a scan of all of the entry's terms.
	for _, q := range qs {
		postings := ix.lists[q.id].postings
		for i, h := range hits {
			if _, ok := slices.BinarySearchFunc(postings, h.Entry.ord, func(p posting, ord uint32) int {
				return cmp.Compare(p.doc, ord)
			}); ok {
				groups[i] |= 1 << q.bit
			}
		}
	}
	return groups, weights
}

// OutlineCoverage is Coverage over the outlines of sources (see
// Source.Outline) rather than the hits' entries: bit g of groups[i] is set
// when the outline of sources[i] holds a term of the g-th group.
func (ix *Index) OutlineCoverage(sources []*Source, terms []Term) (groups []uint64, weights []float64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	qs, weights := ix.coverageTerms(terms)
	groups = make([]uint64, len(sources))
	for i, s := range sources {
		for _, q := range qs {
			if _, ok := slices.BinarySearch(s.Outline, q.id); ok {
				groups[i] |= 1 << q.bit
			}
		}
	}
	return groups, weights
}
