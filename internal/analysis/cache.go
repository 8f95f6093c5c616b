package analysis

import (
	"sync/atomic"
	"unsafe"

	"github.com/kljensen/snowball/english"
)

// cacheBits sets the number of cache slots, 1<<cacheBits, grouped in sets
// of cacheWays slots that share a cache line (16 bytes a slot).
const (
	cacheBits = 18
	cacheWays = 4
)

// Layout of a cache entry: one immutable byte block, so a hit costs two
// dependent loads (slot, block) and an entry costs one allocation.
//
//	[0]        flags (entryStop)
//	[1]        key length k
//	[2]        term length t
//	[3:3+k]    key: the normalized word
//	[3+k:3+k+t] term, absent when the term is the key itself (t = 0)
const (
	entryHeader = 3
	entryStop   = 1
)

// termCache is a bounded, lock-free cache from normalized words to index
// terms (stemmed, or marked as stop words). Slots are grouped in sets of
// cacheWays; a new entry goes to the first way and moves the others down
// one, so the oldest entry of a full set is forgotten. Entries are
// immutable once published, so readers need only atomic loads, and terms
// come back as strings that share the entry's memory, which lets TermFreqs
// count a cached word without allocating. Concurrent misses on one set may
// lose an entry; that costs a later miss, never a wrong term, since every
// hit compares the whole key.
type termCache struct {
	slots []cacheSlot
	mask  uint64
}

// cacheSlot holds an entry and the hash of its key. Lookups compare hashes
// first, so only an entry that likely matches is read from memory. The two
// words are stored separately; a reader that sees one slot's hash with
// another's entry only misses, since every hit compares the whole key.
type cacheSlot struct {
	p atomic.Pointer[byte]
	h atomic.Uint64
}

func newTermCache(bits uint) *termCache {
	return &termCache{
		slots: make([]cacheSlot, 1<<bits),
		mask:  1<<bits - cacheWays, // index of the first way of a set
	}
}

// hashInit and hashByte compute the FNV-1a hash of a key, byte by byte, so
// the scanner can hash a word while it reads it.
const hashInit = uint64(14695981039346656037)

func hashByte(h uint64, c byte) uint64 {
	return (h ^ uint64(c)) * 1099511628211
}

// lookup returns the index term for the normalized word key, whose hash
// (from hashInit and hashByte) is h, and false when key is a stop word.
// key must be non-empty valid UTF-8 of at most MaxTermLen bytes; it is not
// retained, so it may alias a scratch buffer.
func (c *termCache) lookup(key string, h uint64, hot *hotCache) (string, bool) {
	h ^= h >> 29
	hs := &hot[(h>>32)&(hotSize-1)]
	if hs.h == h {
		if term, stop, ok := match(hs.p, key); ok {
			return term, !stop
		}
	}
	set := (*[cacheWays]cacheSlot)(c.slots[h&c.mask:])
	for w := range set {
		if set[w].h.Load() != h {
			continue
		}
		p := set[w].p.Load()
		if term, stop, ok := match(p, key); ok {
			hs.h, hs.p = h, p
			return term, !stop
		}
	}
	// Miss: the new entry takes the first way, the others move down one,
	// and the last is forgotten.
	p := newEntry(key)
	for w := cacheWays - 1; w > 0; w-- {
		if q := set[w-1].p.Load(); q != nil {
			set[w].p.Store(q)
			set[w].h.Store(set[w-1].h.Load())
		}
	}
	set[0].p.Store(p)
	set[0].h.Store(h)
	hs.h, hs.p = h, p
	term, stop, _ := match(p, key)
	return term, !stop
}

// hotSize is the number of slots of a hotCache.
const hotSize = 1 << 12

// hotCache is a small direct-mapped cache of entries private to one state,
// so to one goroutine at a time. It keeps the frequent words of recent calls
// close to the CPU and spares the shared table's cache lines; the full hash
// kept with each entry skips most entries that cannot match.
type hotCache [hotSize]struct {
	h uint64
	p *byte
}

// match decodes the entry at p when its key equals key.
func match(p *byte, key string) (term string, stop, ok bool) {
	if p == nil {
		return "", false, false
	}
	hdr := unsafe.Slice(p, entryHeader)
	k, t := int(hdr[1]), int(hdr[2])
	if k != len(key) {
		return "", false, false
	}
	b := unsafe.Slice(p, entryHeader+k+t)
	if string(b[entryHeader:entryHeader+k]) != key {
		return "", false, false
	}
	if t == 0 {
		return unsafe.String(&b[entryHeader], k), hdr[0]&entryStop != 0, true
	}
	return unsafe.String(&b[entryHeader+k], t), hdr[0]&entryStop != 0, true
}

// newEntry computes the term for a normalized word and returns the encoded
// entry: stop words are marked, words of ASCII letters are stemmed,
// everything else is kept as is.
func newEntry(word string) *byte {
	var flags byte
	term := word
	if isStopWord(word) {
		flags |= entryStop
	} else if len(word) > 2 && isASCIILetters(word) {
		if s := english.Stem(word, true); s != "" && len(s) <= MaxTermLen {
			term = s
		}
	}
	t := 0
	if term != word {
		t = len(term)
	}
	b := make([]byte, entryHeader+len(word)+t)
	b[0], b[1], b[2] = flags, byte(len(word)), byte(t)
	copy(b[entryHeader:], word)
	copy(b[entryHeader+len(word):], term[:t])
	return &b[0]
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// scratch returns the bytes of b as a string without copying. The string
// is only valid until b is next written; it is used for cache keys, which
// are never retained.
func scratch(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
