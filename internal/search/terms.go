package search

import (
	"hash/maphash"
	"math"
	"math/bits"
	"unsafe"
)

// termDict numbers an index's vocabulary: it maps each term to a dense
// id (the index of its posting list) and back. Twenty languages make
// millions of terms, and a Go map of strings to list pointers costs each
// of them five pointers for the garbage collector to follow on every
// cycle (the map's key and value, the list's term and postings, the list
// of lists) and a cache miss per pointer on the way to a posting. Here
// the table is a flat array of 8-byte slots with linear probing, and the
// terms' bytes live in large blocks: neither holds a pointer, so the
// collector never looks inside them.
type termDict struct {
	seed maphash.Seed
	// slots hold tag<<32 | id+1, 0 when empty. The tag is the high 32
	// bits of the term's hash; its top bits are the slot the term hashes
	// to (see home), the rest tell most terms apart without reading them.
	slots []uint64
	shift uint // 32 - log2(len(slots))
	refs  []termRef
	free  []uint32 // ids of removed terms, for reuse
	live  int
	// blocks hold the terms' bytes, appended and never rewritten, so that
	// a string handed out stays valid.
	blocks     [][]byte
	arenaLive  int // bytes of live terms
	arenaTotal int // bytes ever appended to the current blocks
}

// termRef locates a term in the blocks; blk is freeRef for a removed id.
type termRef struct {
	blk, off, n uint32
}

const (
	freeRef      = math.MaxUint32
	blockSize    = 1 << 20
	minSlotsBits = 10
)

func newTermDict() termDict {
	return termDict{seed: maphash.MakeSeed(), slots: make([]uint64, 1<<minSlotsBits), shift: 32 - minSlotsBits}
}

// Len is the number of live terms.
func (d *termDict) Len() int { return d.live }

// Cap is one more than the highest id handed out.
func (d *termDict) Cap() int { return len(d.refs) }

// alive reports whether id names a live term.
func (d *termDict) alive(id uint32) bool {
	return int(id) < len(d.refs) && d.refs[id].blk != freeRef
}

// term returns the term of a live id. The string shares the dictionary's
// block and stays valid after the term is removed.
func (d *termDict) term(id uint32) string {
	return refString(d.blocks, d.refs[id])
}

func refString(blocks [][]byte, r termRef) string {
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&blocks[r.blk][r.off], int(r.n))
}

func (d *termDict) tag(term string) uint32 {
	return uint32(maphash.String(d.seed, term) >> 32)
}

func (d *termDict) home(slot uint64) int {
	return int(uint32(slot>>32) >> d.shift)
}

// find returns the id of term.
func (d *termDict) find(term string) (uint32, bool) {
	i, ok := d.slotOf(term, d.tag(term))
	if !ok {
		return 0, false
	}
	return uint32(d.slots[i]) - 1, true
}

// slotOf returns the slot holding term, or the empty slot where it would
// go.
func (d *termDict) slotOf(term string, tag uint32) (int, bool) {
	mask := len(d.slots) - 1
	for i := int(tag >> d.shift); ; i = (i + 1) & mask {
		s := d.slots[i]
		if s == 0 {
			return i, false
		}
		if uint32(s>>32) == tag && d.term(uint32(s)-1) == term {
			return i, true
		}
	}
}

// add returns the id of term, adding it if new. The term is copied.
func (d *termDict) add(term string) (id uint32, added bool) {
	tag := d.tag(term)
	i, ok := d.slotOf(term, tag)
	if ok {
		return uint32(d.slots[i]) - 1, false
	}
	if n := len(d.free); n > 0 {
		id = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		id = uint32(len(d.refs))
		d.refs = append(d.refs, termRef{})
	}
	d.refs[id] = d.store(term)
	d.slots[i] = uint64(tag)<<32 | uint64(id+1)
	d.live++
	if d.live*10 > len(d.slots)*7 {
		d.resize(len(d.slots) * 2)
	}
	return id, true
}

// store appends term's bytes to the blocks.
func (d *termDict) store(term string) termRef {
	n := len(term)
	d.arenaLive += n
	d.arenaTotal += n
	last := len(d.blocks) - 1
	if last < 0 || cap(d.blocks[last])-len(d.blocks[last]) < n {
		d.blocks = append(d.blocks, make([]byte, 0, max(blockSize, n)))
		last++
	}
	b := d.blocks[last]
	off := len(b)
	d.blocks[last] = append(b, term...)
	return termRef{blk: uint32(last), off: uint32(off), n: uint32(n)}
}

// remove deletes a live id's term. The slots after it that would have
// landed on its slot move back, so that no probe stops early (deletion
// by backward shift: no tombstones).
func (d *termDict) remove(id uint32) {
	term := d.term(id)
	i, ok := d.slotOf(term, d.tag(term))
	if !ok || uint32(d.slots[i])-1 != id {
		panic("search: removing a term not in the dictionary")
	}
	d.arenaLive -= len(term)
	d.refs[id] = termRef{blk: freeRef}
	d.free = append(d.free, id)
	d.live--
	mask := len(d.slots) - 1
	for j := (i + 1) & mask; d.slots[j] != 0; j = (j + 1) & mask {
		// The slot at j may move to i unless its home lies cyclically
		// in (i, j].
		if h := d.home(d.slots[j]); (j-h)&mask >= (j-i)&mask {
			d.slots[i] = d.slots[j]
			i = j
		}
	}
	d.slots[i] = 0
	if d.live*10 < len(d.slots) && len(d.slots) > 1<<minSlotsBits {
		d.resize(len(d.slots) / 2)
	}
}

// resize rehashes every slot into a table of n slots (a power of two):
// the tags hold the homes, so no term is read.
func (d *termDict) resize(n int) {
	old := d.slots
	d.slots = make([]uint64, n)
	d.shift = uint(32 - bits.TrailingZeros(uint(n)))
	mask := n - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := d.home(s)
		for d.slots[i] != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = s
	}
}

// compact copies the live terms into new blocks when removed ones take
// most of the space. Strings handed out before keep the old blocks alive
// for as long as they are held.
func (d *termDict) compact() {
	if d.arenaTotal-d.arenaLive <= d.arenaLive {
		return
	}
	old := d.blocks
	d.blocks, d.arenaLive, d.arenaTotal = nil, 0, 0
	for id, r := range d.refs {
		if r.blk != freeRef {
			d.refs[id] = d.store(refString(old, r))
		}
	}
}
