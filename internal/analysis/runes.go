package analysis

import (
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Bits of a rune's info byte.
const (
	infoClass = 0x0F // the scanner class, kSep … kCJK
	infoMark  = 0x10 // a combining mark (unicode.IsMark)
	infoSame  = 0x20 // folding leaves the rune as it is
)

// runeTable caches the info byte of Basic Multilingual Plane runes, so the
// scanner classifies and folds non-Latin scripts without searching the
// unicode range tables for every rune. Blocks of 256 runes are computed on
// first use and published atomically; concurrent fills compute identical
// blocks, so whichever is kept does not matter. Runes above the BMP are
// computed each time.
type runeTable struct {
	blocks [0x100]atomic.Pointer[[0x100]uint8]
}

// info returns the info byte of r.
func (t *runeTable) info(r rune) uint8 {
	if r >= 0x10000 || r < 0 {
		return runeInfo(r)
	}
	b := t.blocks[r>>8].Load()
	if b == nil {
		b = t.fill(r >> 8)
	}
	return b[r&0xFF]
}

func (t *runeTable) fill(hi rune) *[0x100]uint8 {
	b := new([0x100]uint8)
	for lo := range rune(0x100) {
		b[lo] = runeInfo(hi<<8 | lo)
	}
	t.blocks[hi].Store(b)
	return b
}

// runeInfo computes the info byte of r.
func runeInfo(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	info := runeClass(r)
	if unicode.IsMark(r) {
		info |= infoMark
	}
	if isWordClass(info) && utf8.ValidRune(r) {
		var buf [utf8.UTFMax]byte
		enc := utf8.AppendRune(buf[:0], r)
		if norm.NFKD.Properties(enc).Decomposition() == nil &&
			string(foldRune(nil, r)) == string(enc) {
			info |= infoSame
		}
	}
	return info
}

// classAt returns the class of the character at text[i] and its size in
// bytes. Invalid UTF-8 is one separator byte.
func (t *runeTable) classAt(text string, i int) (uint8, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	return t.classAtRune(text[i:])
}

// classAtRune is classAt for a non-ASCII byte at the start of s.
func (t *runeTable) classAtRune(s string) (uint8, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return kSep, 1
	}
	return t.info(r) & infoClass, size
}
