package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Snapshot is an index's content as flat arrays, indexed by ordinal and
// term id: what a segment file stores, and what Restore builds an index
// from without analysing or putting a single document. Removed entries
// are left out (live entries are numbered densely, in order); term ids
// are kept as they are, removed ones included, so that an index restored
// from a snapshot numbers its terms as the index it was taken of did.
type Snapshot struct {
	// Fields are the names of Params.Fields in order, and OutlineField
	// Params.OutlineField: a snapshot only fits an index of the same.
	Fields       []string
	OutlineField string
	Applied      uint64
	MaxBoost     float64

	// TermBytes holds every term's bytes; term id i is
	// TermBytes[TermEnds[i-1]:TermEnds[i]] (from 0 for id 0). Free lists
	// the removed ids, in the order they are reused.
	TermBytes []byte
	TermEnds  []uint32
	Free      []uint32

	// The postings of term id i are postings ListEnds[i-1] to
	// ListEnds[i]-1 of Postings, ascending by ordinal: records of
	// PostingSize bytes as the index lays a posting out in memory (see
	// PostingRecord), which Restore reads in place.
	ListEnds []uint64
	Postings []byte

	// Per live entry, by ordinal: MaxFields field lengths, the boost, and
	// its posting list ids EntryTerms[TermRefEnds[o-1]:TermRefEnds[o]].
	Lens        []uint16
	Boosts      []float64
	TermRefEnds []uint64
	EntryTerms  []uint32

	// Entries are the live entries by ordinal; the entries of one source
	// are consecutive and share their *Source. Their term lists and
	// ordinals are in the arrays above, not in the entries.
	Entries []*Entry

	// Remotes are the documents the index holds the statistics of (see
	// PutStats), ascending by key: each one's repository, entry count,
	// MaxFields field length sums in RemoteLens, and its terms as the
	// index encodes them, RemoteTerms[RemoteTermEnds[i-1]:RemoteTermEnds[i]].
	RemoteKeys, RemoteRepos []string
	RemoteEntries           []uint64
	RemoteLens              []uint64
	RemoteTermEnds          []uint64
	RemoteTerms             []byte
}

// Snapshot returns the index's content under the read lock. The entries
// are shared with the index (they never change once put); the arrays are
// copies.
func (ix *Index) Snapshot() *Snapshot {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := &Snapshot{OutlineField: ix.params.OutlineField, Applied: ix.applied, MaxBoost: ix.maxBoost}
	for _, f := range ix.params.Fields {
		s.Fields = append(s.Fields, f.Name)
	}
	n := ix.terms.Cap()
	s.TermEnds = make([]uint32, n)
	for id := range uint32(n) {
		if ix.terms.alive(id) {
			s.TermBytes = append(s.TermBytes, ix.terms.term(id)...)
		}
		s.TermEnds[id] = uint32(len(s.TermBytes))
	}
	s.Free = slices.Clone(ix.terms.free)
	// Live entries are renumbered densely.
	remap := make([]uint32, len(ix.entries))
	s.Entries = make([]*Entry, 0, ix.alive)
	for o, e := range ix.entries {
		if !ix.stats[o].alive() {
			continue
		}
		remap[o] = uint32(len(s.Entries))
		s.Entries = append(s.Entries, e)
		s.Lens = append(s.Lens, ix.stats[o].lens[:]...)
		s.Boosts = append(s.Boosts, ix.stats[o].boost)
		s.EntryTerms = append(s.EntryTerms, e.terms...)
		s.TermRefEnds = append(s.TermRefEnds, uint64(len(s.EntryTerms)))
	}
	total := 0
	for i := range ix.lists {
		total += ix.lists[i].df
	}
	s.ListEnds = make([]uint64, n)
	s.Postings = make([]byte, 0, total*PostingSize)
	np := uint64(0)
	for id := range n {
		if id < len(ix.lists) {
			for _, p := range ix.lists[id].postings {
				if ix.stats[p.doc].alive() {
					s.Postings = AppendPosting(s.Postings, remap[p.doc], p.tf)
					np++
				}
			}
		}
		s.ListEnds[id] = np
	}
	for _, key := range slices.Sorted(maps.Keys(ix.remotes)) {
		r := ix.remotes[key]
		s.RemoteKeys = append(s.RemoteKeys, key)
		s.RemoteRepos = append(s.RemoteRepos, r.repo)
		s.RemoteEntries = append(s.RemoteEntries, uint64(r.entries))
		s.RemoteLens = append(s.RemoteLens, r.lens[:]...)
		s.RemoteTerms = append(s.RemoteTerms, r.terms...)
		s.RemoteTermEnds = append(s.RemoteTermEnds, uint64(len(s.RemoteTerms)))
	}
	return s
}

// Restore replaces the index's content with a snapshot's, under the
// write lock. The index keeps s.TermBytes as the block of its terms,
// s.Postings as its posting lists and s.EntryTerms as its entries' terms,
// and never writes to them, so they may be read-only memory (a mapped
// file): a list that changes is copied onto the heap first, and a
// removed entry's terms are dropped, not cleared. The other arrays are
// read once. The index takes s.Entries as its own: they must
// not belong to another index. A nil snapshot empties the index. A
// snapshot that does not fit the index's parameters, or whose arrays
// disagree, is an error (see Check) and leaves the index as it was.
func (ix *Index) Restore(s *Snapshot) error {
	if s == nil {
		s = &Snapshot{OutlineField: ix.params.OutlineField}
		for _, f := range ix.params.Fields {
			s.Fields = append(s.Fields, f.Name)
		}
	}
	if err := ix.Check(s); err != nil {
		return err
	}
	n := len(s.TermEnds)
	terms := newTermDict()
	terms.refs = make([]termRef, n)
	if len(s.TermBytes) > 0 {
		terms.blocks = [][]byte{s.TermBytes[:len(s.TermBytes):len(s.TermBytes)]}
	}
	for want := 1 << minSlotsBits; ; want *= 2 {
		if (n-len(s.Free))*10 <= want*7 {
			terms.slots = make([]uint64, want)
			terms.shift = uint(32 - bitsLen(want))
			break
		}
	}
	dead := make([]bool, n)
	for _, id := range s.Free {
		dead[id] = true
	}
	terms.free = slices.Clone(s.Free)
	vocab := make(map[vocabKey][]uint32)
	start := uint32(0)
	for id := range n {
		end := s.TermEnds[id]
		if dead[id] {
			terms.refs[id] = termRef{blk: freeRef}
			start = end
			continue
		}
		terms.refs[id] = termRef{blk: 0, off: start, n: end - start}
		terms.live++
		terms.arenaLive += int(end - start)
		term := terms.term(uint32(id))
		i, _ := terms.slotOf(term, terms.tag(term))
		terms.slots[i] = uint64(terms.tag(term))<<32 | uint64(id+1)
		if term != "" {
			k := vocabKey{first: term[0], n: len(term)}
			vocab[k] = append(vocab[k], uint32(id))
		}
		start = end
	}
	terms.arenaTotal = len(s.TermBytes)

	// Postings: the records in place, carved into lists of exact
	// capacity, so that an append to one copies it rather than write into
	// the next (or into a read-only map).
	all := postingsOf(s.Postings)
	lists := make([]postingList, n)
	from := uint64(0)
	for id := range n {
		to := s.ListEnds[id]
		if to > from {
			lists[id].postings = all[from:to:to]
			lists[id].df = int(to - from)
		}
		from = to
	}

	entries := make([]*Entry, len(s.Entries))
	stats := make([]docStat, len(s.Entries))
	sources := make(map[string][]*Entry)
	repoEntries := make(map[string]int)
	var sumLen [MaxFields]uint64
	from = 0
	for o, e := range s.Entries {
		e.ord = uint32(o)
		to := s.TermRefEnds[o]
		e.terms = s.EntryTerms[from:to:to] // read only: see Restore
		from = to
		st := &stats[o]
		copy(st.lens[:], s.Lens[o*MaxFields:(o+1)*MaxFields])
		st.boost = s.Boosts[o]
		for f := range st.lens {
			sumLen[f] += uint64(st.lens[f])
		}
		entries[o] = e
		sources[e.Source.Key] = append(sources[e.Source.Key], e)
		repoEntries[e.Source.Repo]++
	}
	for k, list := range sources {
		sources[k] = slices.Clip(list)
	}

	// The statistics of other shards' documents.
	var remotes map[string]*remote
	remoteEntries := 0
	from = 0
	for i, key := range s.RemoteKeys {
		if remotes == nil {
			remotes = make(map[string]*remote, len(s.RemoteKeys))
		}
		r := &remote{repo: s.RemoteRepos[i], entries: int(s.RemoteEntries[i]), terms: slices.Clone(s.RemoteTerms[from:s.RemoteTermEnds[i]])}
		from = s.RemoteTermEnds[i]
		copy(r.lens[:], s.RemoteLens[i*MaxFields:(i+1)*MaxFields])
		bad := false
		r.eachTerm(func(id, n uint32) {
			if int(id) >= len(lists) || dead[id] {
				bad = true
				return
			}
			lists[id].remote += n
		})
		if bad {
			return fmt.Errorf("snapshot's remote document %s names a term it does not hold", key)
		}
		for f := range r.lens {
			sumLen[f] += r.lens[f]
		}
		repoEntries[r.repo] += r.entries
		remoteEntries += r.entries
		remotes[key] = r
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	ix.entries, ix.stats, ix.maxBoost = entries, stats, s.MaxBoost
	ix.sources, ix.terms, ix.lists, ix.vocab = sources, terms, lists, vocab
	ix.alive, ix.dead, ix.repoEntries, ix.sumLen = len(entries), 0, repoEntries, sumLen
	ix.remotes, ix.remoteEntries = remotes, remoteEntries
	ix.applied = s.Applied
	ix.impactsReset()
	return nil
}

// impactsReset drops the caches that depend on the statistics; the caller
// holds the write lock.
func (ix *Index) impactsReset() {
	ix.norms.Store(nil)
	ix.idfs.Store(nil)
}

// Check reports why s cannot be restored into ix, or nil.
func (ix *Index) Check(s *Snapshot) error {
	if s == nil {
		return errors.New("no snapshot")
	}
	want := make([]string, 0, len(ix.params.Fields))
	for _, f := range ix.params.Fields {
		want = append(want, f.Name)
	}
	if !slices.Equal(s.Fields, want) || s.OutlineField != ix.params.OutlineField {
		return fmt.Errorf("snapshot fields %v (outline %q) do not match the index's %v (outline %q)", s.Fields, s.OutlineField, want, ix.params.OutlineField)
	}
	n, entries := len(s.TermEnds), len(s.Entries)
	switch {
	case len(s.ListEnds) != n:
		return fmt.Errorf("snapshot has %d posting lists for %d terms", len(s.ListEnds), n)
	case len(s.Postings)%PostingSize != 0:
		return fmt.Errorf("snapshot's postings are %d bytes, not whole records of %d", len(s.Postings), PostingSize)
	case len(s.Lens) != entries*MaxFields || len(s.Boosts) != entries || len(s.TermRefEnds) != entries:
		return fmt.Errorf("snapshot's entry arrays disagree with its %d entries", entries)
	case n > 0 && s.ListEnds[n-1] != uint64(len(s.Postings)/PostingSize):
		return errors.New("snapshot's posting lists do not end with its postings")
	case n > 0 && int(s.TermEnds[n-1]) != len(s.TermBytes):
		return errors.New("snapshot's terms do not end with its term bytes")
	case entries > 0 && s.TermRefEnds[entries-1] != uint64(len(s.EntryTerms)):
		return errors.New("snapshot's entry terms do not end with its term references")
	}
	if nr := len(s.RemoteKeys); len(s.RemoteRepos) != nr || len(s.RemoteEntries) != nr || len(s.RemoteLens) != nr*MaxFields ||
		len(s.RemoteTermEnds) != nr || nr > 0 && s.RemoteTermEnds[nr-1] != uint64(len(s.RemoteTerms)) || !slices.IsSorted(s.RemoteTermEnds) {
		return errors.New("snapshot's remote document arrays disagree")
	}
	if !slices.IsSorted(s.TermEnds) || !slices.IsSorted(s.ListEnds) || !slices.IsSorted(s.TermRefEnds) {
		return errors.New("snapshot's offsets are not ascending")
	}
	for _, id := range s.Free {
		if int(id) >= n {
			return fmt.Errorf("snapshot frees term %d of %d", id, n)
		}
	}
	for i := 0; i < len(s.Postings); i += PostingSize {
		if d := binary.LittleEndian.Uint32(s.Postings[i:]); int(d) >= entries {
			return fmt.Errorf("snapshot posting names entry %d of %d", d, entries)
		}
	}
	for _, id := range s.EntryTerms {
		if int(id) >= n {
			return fmt.Errorf("snapshot entry names term %d of %d", id, n)
		}
	}
	for o, e := range s.Entries {
		if e == nil || e.Source == nil {
			return fmt.Errorf("snapshot entry %d has no source", o)
		}
		if b := s.Boosts[o]; !(b > 0) {
			return fmt.Errorf("snapshot entry %d has boost %v", o, b)
		}
	}
	return nil
}

// bitsLen is log2 of a power of two.
func bitsLen(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}
