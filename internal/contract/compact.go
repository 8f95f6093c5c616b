package contract

import (
	"maps"
	"math/bits"
	"slices"
	"sort"
	"unsafe"
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
	var b VocabBuilder
	out := *doc
	out.Chunks = make([]IndexChunk, len(doc.Chunks))
	for i, c := range doc.Chunks {
		names := make([]string, 0, len(c.Terms))
		for f := range c.Terms {
			names = append(names, f)
		}
		sort.Strings(names)
		c.Fields = nil
		for _, f := range names {
			// Terms in order, so that equal documents number their
			// vocabulary alike.
			for _, t := range slices.Sorted(maps.Keys(c.Terms[f])) {
				if tf := c.Terms[f][t]; tf > 0 {
					b.Add(t, uint32(tf))
				}
			}
			if ft, ok := b.Field(f); ok {
				c.Fields = append(c.Fields, ft)
			}
		}
		c.Terms = nil
		out.Chunks[i] = c
	}
	out.Vocab = b.Vocab()
	return &out
}

func hasTerms(chunks []IndexChunk) bool {
	for i := range chunks {
		if len(chunks[i].Terms) > 0 {
			return true
		}
	}
	return false
}

// VocabBuilder assembles a compact document: terms are added field by
// field, each distinct term numbered once for the whole document in the
// order first added; each field comes out with its terms ascending.
// The zero value is ready to use.
type VocabBuilder struct {
	ids map[string]uint32
	// same remembers recent terms by the address of their bytes: an
	// analyzer hands out each term as the same string again and again, and
	// recognising it by address spares hashing it. A slot holds the string
	// itself, so its bytes cannot be freed and reused while remembered.
	// Slots of earlier documents are told apart by gen, so Reset need not
	// clear them.
	same    [sameSlots]sameSlot
	gen     uint32
	vocab   []string
	count   []uint32 // frequency in the open field, by id
	touched []uint32 // ids counted in the open field, in first-seen order
	bits    []uint64 // scratch of sortTouched, all zero between calls
}

// sameSlots is the number of terms VocabBuilder recognises by address:
// with 4096, two adds in three skip the map on English docs, one in two
// on Chinese (most of the others add a term new to the document).
const (
	sameBits  = 12
	sameSlots = 1 << sameBits
)

type sameSlot struct {
	term string
	id   uint32
	gen  uint32 // the document the slot was filled for
}

// Reset empties the builder for another document, keeping its memory.
// Fields and vocabularies it returned stay valid.
func (b *VocabBuilder) Reset() {
	clear(b.ids)
	if b.gen++; b.gen == 0 { // wrapped: slots of gen 0 would look current
		clear(b.same[:])
	}
	b.vocab = b.vocab[:0]
	b.count = b.count[:0]
	b.touched = b.touched[:0]
}

// Add counts tf occurrences of term in the open field.
func (b *VocabBuilder) Add(term string, tf uint32) {
	p := unsafe.StringData(term)
	slot := &b.same[uint64(uintptr(unsafe.Pointer(p)))*0x9E3779B97F4A7C15>>(64-sameBits)]
	var id uint32
	if slot.gen == b.gen && len(term) > 0 && unsafe.StringData(slot.term) == p && len(slot.term) == len(term) {
		id = slot.id
	} else {
		if b.ids == nil {
			b.ids = make(map[string]uint32, 256)
		}
		var ok bool
		if id, ok = b.ids[term]; !ok {
			id = uint32(len(b.vocab))
			b.ids[term] = id
			b.vocab = append(b.vocab, term)
			b.count = append(b.count, 0)
		}
		slot.term, slot.id, slot.gen = term, id, b.gen
	}
	if b.count[id] == 0 {
		b.touched = append(b.touched, id)
	}
	b.count[id] += tf
}

// Field closes the open field as name and returns its terms, ascending,
// or false when it has none. Chunks may share the returned value.
func (b *VocabBuilder) Field(name string) (FieldTerms, bool) {
	if len(b.touched) == 0 {
		return FieldTerms{}, false
	}
	b.sortTouched()
	ft := FieldTerms{Field: name, Terms: slices.Clone(b.touched), TFs: make([]uint32, len(b.touched))}
	for k, id := range b.touched {
		ft.TFs[k] = b.count[id]
		b.count[id] = 0
	}
	b.touched = b.touched[:0]
	return ft, true
}

// sortTouched sorts the open field's ids. They are distinct and below
// len(vocab), so when they are dense enough a bit set sorts them in two
// passes; otherwise a comparison sort does. (Sorting by comparison cost
// BuildDoc a twentieth of its time on the i18n archive.)
func (b *VocabBuilder) sortTouched() {
	ids := b.touched
	lo, hi := ids[0], ids[0]
	sorted := true
	for k, id := range ids[1:] {
		lo, hi = min(lo, id), max(hi, id)
		sorted = sorted && ids[k] < id
	}
	if sorted {
		return
	}
	words := int(hi>>6-lo>>6) + 1
	if words > 4*len(ids) {
		slices.Sort(ids)
		return
	}
	if cap(b.bits) < words {
		b.bits = make([]uint64, words)
	}
	set := b.bits[:words]
	base := lo &^ 63
	for _, id := range ids {
		set[(id-base)>>6] |= 1 << (id & 63)
	}
	k := 0
	for w, x := range set {
		for ; x != 0; x &= x - 1 {
			ids[k] = base + uint32(w<<6+bits.TrailingZeros64(x))
			k++
		}
		set[w] = 0
	}
}

// Vocab returns the vocabulary, in the order terms were first added.
// (Sorting it cost a tenth of BuildDoc on the i18n archive, and no reader
// needs it.)
func (b *VocabBuilder) Vocab() []string {
	if len(b.vocab) == 0 {
		return nil
	}
	return slices.Clone(b.vocab)
}
