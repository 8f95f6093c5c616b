package search

// Generation returns a number that changes with every update of the index,
// for callers that cache what they derive from its vocabulary.
func (ix *Index) Generation() uint64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gen
}

// EachTerm calls fn for every term that some live entry holds, with its
// document frequency, under the read lock.
func (ix *Index) EachTerm(fn func(term string, df int)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for id := range min(ix.terms.Cap(), len(ix.lists)) {
		if ix.terms.alive(uint32(id)) && ix.lists[id].n() > 0 {
			fn(ix.terms.term(uint32(id)), ix.lists[id].n())
		}
	}
}
