package search

import (
	"encoding/binary"
	"maps"
	"slices"
)

// An index may hold, besides the entries it searches, the statistics of
// entries another index searches: the documents of the other shards of
// one collection. They count in every collection-wide figure scoring reads
// (document frequencies, the number of entries, average field lengths,
// repository shares) and in the vocabulary (typo expansion, semantic
// candidates), but have no postings and no text, and are never hits. So
// an index of one shard of a collection scores each of its entries
// exactly as an index of the whole collection would, and the shards' hits
// merge by score into the whole collection's ranking.

// remote is what an index keeps of a document it holds the statistics of.
type remote struct {
	repo    string
	entries int
	lens    [MaxFields]uint64
	// terms holds the posting list ids of the document's terms,
	// ascending, each as a uvarint of its difference from the one before
	// followed by a uvarint of how many of the document's entries hold
	// it: about 3 bytes a term where two uint32s take 8, and a shard holds
	// this of every other shard's page.
	terms []byte
}

// eachTerm calls fn with each posting list id of r and its entry count.
func (r *remote) eachTerm(fn func(id, n uint32)) {
	id := uint64(0)
	for b := r.terms; len(b) > 0; {
		d, k := binary.Uvarint(b)
		n, m := binary.Uvarint(b[k:])
		b = b[k+m:]
		id += d
		fn(uint32(id), uint32(n))
	}
}

// PutStats replaces whatever the index holds of the source key (entries
// or statistics) with the statistics of doc, which another index
// searches. A doc marked Deleted removes the source, as Put does.
func (ix *Index) PutStats(key string, doc *Doc) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	ix.removeLocked(key)
	ix.removeRemote(key)
	if doc.SourceSeq > ix.applied {
		ix.applied = doc.SourceSeq
	}
	if doc.Deleted || len(doc.Chunks) == 0 {
		return
	}
	r := &remote{repo: doc.Repo, entries: len(doc.Chunks)}
	// Per vocabulary index: how many chunks hold the term, and whether
	// the chunk being read did already.
	counts := make([]uint32, len(doc.Vocab))
	last := make([]int32, len(doc.Vocab))
	for ci := range doc.Chunks {
		c := &doc.Chunks[ci]
		var lens [MaxFields]uint16
		for _, f := range c.Fields {
			fi, ok := ix.fieldOf[f.Field]
			if !ok {
				continue
			}
			for k, t := range f.Terms {
				tf := f.TFs[k]
				if tf == 0 || int(t) >= len(doc.Vocab) {
					continue
				}
				lens[fi] = addLen(lens[fi], tf)
				if last[t] != int32(ci)+1 {
					last[t] = int32(ci) + 1
					counts[t]++
				}
			}
		}
		for f := range lens {
			r.lens[f] += uint64(lens[f])
		}
	}
	type held struct{ id, n uint32 }
	var terms []held
	for t, n := range counts {
		if n == 0 {
			continue
		}
		id := ix.listID(doc.Vocab[t])
		ix.lists[id].remote += n
		terms = append(terms, held{id, n})
	}
	slices.SortFunc(terms, func(a, b held) int { return int(a.id) - int(b.id) })
	buf := make([]byte, 0, 3*len(terms))
	prev := uint32(0)
	for _, h := range terms {
		buf = binary.AppendUvarint(buf, uint64(h.id-prev))
		buf = binary.AppendUvarint(buf, uint64(h.n))
		prev = h.id
	}
	r.terms = slices.Clip(buf)
	for f := range r.lens {
		ix.sumLen[f] += r.lens[f]
	}
	ix.remoteEntries += r.entries
	if ix.repoEntries == nil {
		ix.repoEntries = make(map[string]int)
	}
	ix.repoEntries[r.repo] += r.entries
	if ix.remotes == nil {
		ix.remotes = make(map[string]*remote)
	}
	ix.remotes[key] = r
}

// removeRemote takes the statistics of the source key out, if the index
// holds them. The caller holds the write lock.
func (ix *Index) removeRemote(key string) {
	r, ok := ix.remotes[key]
	if !ok {
		return
	}
	delete(ix.remotes, key)
	r.eachTerm(func(id, n uint32) {
		pl := &ix.lists[id]
		pl.remote -= n
		if pl.df == 0 && pl.remote == 0 {
			ix.terms.remove(id)
			*pl = postingList{}
		}
	})
	for f := range r.lens {
		ix.sumLen[f] -= r.lens[f]
	}
	ix.remoteEntries -= r.entries
	if ix.repoEntries[r.repo] -= r.entries; ix.repoEntries[r.repo] <= 0 {
		delete(ix.repoEntries, r.repo)
	}
}

// n is the number of entries of the collection that hold the list's term:
// the index's own live ones and those it holds the statistics of.
func (pl *postingList) n() int { return pl.df + int(pl.remote) }

// collection is the number of live entries of the collection: the
// index's own and those it holds the statistics of. The caller holds the
// read lock.
func (ix *Index) collection() int { return ix.alive + ix.remoteEntries }

// TermSetOf returns the term set (see TermSet) of the distinct terms
// given, as TermSets would of an entry holding them: terms the index does
// not know are left out. It is how an entry of another index is compared
// with this one's.
func (ix *Index) TermSetOf(terms []string) TermSet {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ids := make([]uint32, 0, len(terms))
	for _, t := range terms {
		if id, ok := ix.terms.find(t); ok && ix.lists[id].n() > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	idf := make([]float64, len(ids))
	for k, id := range ids {
		idf[k] = ix.idf(ix.lists[id].n())
	}
	return TermSet{IDs: ids, IDF: idf}
}

// RemoteKeys returns the keys of the documents the index holds the
// statistics of.
func (ix *Index) RemoteKeys() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Collect(maps.Keys(ix.remotes))
}
