package highlight

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/search"
)

// Snippets, phrases and spans must cost little per hit, so they locate
// query terms with byte probes instead of analysing whole sections: a
// probe is a term's first few characters, searched byte for byte in the
// text with its ASCII and Cyrillic capitals lower-cased and, for
// Latin-script terms, its diacritics folded (see appendLower). Stems are
// prefixes of the words they come from ("configur" of "configuring"), so a
// probe finds the word; a false probe widens a snippet window or narrows a
// span a little. A phrase is confirmed by analysis, never by probes alone.

// probeLen is how many leading characters of a term make its probe. English
// stems need a short probe to find their words ("happi" of "happy"); other
// alphabetic scripts are not stemmed, and take as many characters, not
// bytes: two Arabic or Cyrillic letters would match most of a text.
const probeLen = 4

type probeHit struct {
	pos, end int // byte span of the probe in the text
	term     int // index of the term in Matcher.terms
}

// Matcher locates the terms of one query in texts and entries. It is not
// safe for concurrent use; Release gives it back when the query is done.
type Matcher struct {
	terms  []string
	probes []string
	// seen caches scans by text, entries by entry, within one query:
	// proximity and snippets look at the same top hits.
	seen    map[string][]probeHit
	entries map[*search.Entry][]probeHit
	// words caches whether a word of a snippet analyses to a query term;
	// wordTerms is the scratch of that analysis.
	words     map[string]bool
	wordTerms []string
	buf       []byte
	pb        [][]byte
	// starts lists the probes by first byte; next is, per probe, where
	// its next occurrence may start.
	starts [256][]int
	pairs  *[1 << 10]uint64 // bit set of the first two bytes of probes
	next   []int
	built  bool // pb, starts, pairs and firsts hold the probes
	// firsts holds the distinct first bytes of the probes, each repeated
	// in a word, when there are at most four of them (nfirst).
	firsts [4]uint64
	nfirst int
	// latin is set when some probe is ASCII, the fold of Latin-script
	// words: texts are then scanned with their diacritics folded.
	latin bool
	// hits backs the hit lists find returns, which stay valid until
	// release: a list's slice of it never changes once returned.
	hits []probeHit
	// textScratch backs the list textHits returns.
	textScratch []probeHit
}

// matchers recycles probe sets, whose tables are a few kilobytes, across
// queries.
var matchers = sync.Pool{New: func() any { return new(Matcher) }}

// New returns a Matcher for a set of analysed terms, in a stable order.
// Call Release once the query is done with it.
func New(terms map[string]bool) *Matcher {
	ps := matchers.Get().(*Matcher)
	for t := range terms {
		ps.terms = append(ps.terms, t)
	}
	sort.Strings(ps.terms)
	for _, t := range ps.terms {
		p := t
		// Terms of CJK or Thai-like scripts are bigrams: the whole term is
		// the probe.
		if r, _ := utf8.DecodeRuneInString(t); !analysis.IsBigramRune(r) {
			p = probePrefix(t)
		}
		ps.probes = append(ps.probes, p)
		ps.latin = ps.latin || (p != "" && p[0] < utf8.RuneSelf)
	}
	return ps
}

// probePrefix returns the first probeLen characters of term.
func probePrefix(term string) string {
	n := 0
	for i := range term {
		if n == probeLen {
			return term[:i]
		}
		n++
	}
	return term
}

// Release empties ps and gives it back for another query. Neither ps nor
// the hit lists it returned may be used again: the next query reuses them.
func (ps *Matcher) Release() {
	for _, p := range ps.probes {
		if p != "" {
			ps.starts[p[0]] = ps.starts[p[0]][:0]
		}
	}
	if ps.pairs != nil {
		clear(ps.pairs[:])
	}
	clear(ps.pb)
	ps.terms, ps.probes, ps.pb, ps.next = ps.terms[:0], ps.probes[:0], ps.pb[:0], ps.next[:0]
	clear(ps.seen)
	clear(ps.entries)
	clear(ps.words)
	clear(ps.wordTerms[:cap(ps.wordTerms)])
	ps.wordTerms = ps.wordTerms[:0]
	ps.buf = ps.buf[:0]
	ps.hits = ps.hits[:0]
	ps.textScratch = ps.textScratch[:0]
	ps.built, ps.latin = false, false
	if cap(ps.buf) <= 1<<20 && cap(ps.hits) <= 1<<16 && cap(ps.textScratch) <= 1<<16 {
		matchers.Put(ps)
	}
}

// scan returns every probe occurrence in text, ordered by position.
func (ps *Matcher) scan(text string) []probeHit {
	if hits, ok := ps.seen[text]; ok {
		return hits
	}
	var folded bool
	ps.buf, folded = appendLower(ps.buf[:0], text, ps.latin)
	hits := ps.find(ps.buf, folded)
	if ps.seen == nil {
		ps.seen = map[string][]probeHit{}
	}
	ps.seen[text] = hits
	return hits
}

// entryScan returns the probe occurrences in an entry's heading path and
// text, as in entryText(e) (without building that string), and the offset
// at which e.Text starts there.
func (ps *Matcher) entryScan(e *search.Entry) (hits []probeHit, textOff int) {
	if len(e.HeadingPath) > 0 {
		for _, h := range e.HeadingPath {
			textOff += len(h) + 1 // joined by spaces, then a newline
		}
	}
	if hits, ok := ps.entries[e]; ok {
		return hits, textOff
	}
	ps.buf = ps.buf[:0]
	folded := false // some Latin letter was folded
	for i, h := range e.HeadingPath {
		if i > 0 {
			ps.buf = append(ps.buf, ' ')
		}
		var f bool
		ps.buf, f = appendLower(ps.buf, h, ps.latin)
		folded = folded || f
	}
	if len(e.HeadingPath) > 0 {
		ps.buf = append(ps.buf, '\n')
	}
	var f bool
	ps.buf, f = appendLower(ps.buf, e.Text, ps.latin)
	hits = ps.find(ps.buf, folded || f)
	if ps.entries == nil {
		ps.entries = map[*search.Entry][]probeHit{}
	}
	ps.entries[e] = hits
	return hits, textOff
}

// textHits returns the probe occurrences in e.Text, positioned in e.Text.
// The list is valid until the next call.
func (ps *Matcher) textHits(e *search.Entry) []probeHit {
	hits, off := ps.entryScan(e)
	if off == 0 {
		return hits
	}
	i, _ := slices.BinarySearchFunc(hits, off, func(h probeHit, off int) int { return cmp.Compare(h.pos, off) })
	out := ps.textScratch[:0]
	for _, h := range hits[i:] {
		out = append(out, probeHit{pos: h.pos - off, end: h.end - off, term: h.term})
	}
	ps.textScratch = out
	return out
}

// find returns every probe occurrence in the lower-cased text, ordered by
// position; a probe's occurrences do not overlap. folded tells that the
// text has folded Latin letters (see appendLower). One pass looks at each
// byte once: only bytes that start some probe are compared further.
func (ps *Matcher) find(lower []byte, folded bool) []probeHit {
	if !ps.built {
		ps.built = true
		ps.next = slices.Grow(ps.next[:0], len(ps.probes))[:len(ps.probes)]
		ps.nfirst = 0
		for i, p := range ps.probes {
			ps.pb = append(ps.pb, []byte(p))
			if p == "" {
				continue
			}
			if len(ps.starts[p[0]]) == 0 {
				// A new first byte, in every byte of a word.
				if ps.nfirst < len(ps.firsts) {
					ps.firsts[ps.nfirst] = uint64(p[0]) * 0x0101010101010101
				}
				ps.nfirst++
			}
			ps.starts[p[0]] = append(ps.starts[p[0]], i)
			ps.addPairs(p)
		}
		// Unused slots repeat the first byte, so the scan tests four.
		for k := ps.nfirst; k < len(ps.firsts) && ps.nfirst > 0; k++ {
			ps.firsts[k] = ps.firsts[0]
		}
	}
	if ps.pairs == nil || len(ps.pb) == 0 {
		return nil // no probes
	}
	clear(ps.next)
	start := len(ps.hits)
	hits := ps.hits
	pairs := ps.pairs
	last := len(lower) - 1
	next := func(at int) int { return nextPair(lower, at, pairs) }
	if ps.nfirst <= len(ps.firsts) {
		next = func(at int) int { return nextPairSWAR(lower, at, &ps.firsts, pairs) }
	}
	for at := next(0); at >= 0; at = next(at + 1) {
		if folded {
			hits = ps.matchFoldedAt(lower, at, hits)
		} else {
			hits = ps.matchAt(lower, at, hits)
		}
	}
	if last >= 0 {
		if pair := uint16(lower[last]) << 8; pairs[pair>>6]&(1<<(pair&63)) != 0 {
			hits = ps.matchFoldedAt(lower, last, hits) // the same at the end
		}
	}
	ps.hits = hits
	if len(hits) == start {
		return nil
	}
	return hits[start:len(hits):len(hits)]
}

// nextPair returns the first position from at on where lower holds a pair
// of bytes in pairs, or -1. It is the scan's hot loop, kept to a function
// of its own so that it runs in registers, two bytes a turn.
func nextPair(lower []byte, at int, pairs *[1 << 10]uint64) int {
	if at >= len(lower) {
		return -1
	}
	s := lower[at:]
	for len(s) >= 3 {
		b0, b1, b2 := uint(s[0]), uint(s[1]), uint(s[2])
		if p := b0<<8 | b1; pairs[p>>6&1023]&(1<<(p&63)) != 0 {
			return len(lower) - len(s)
		}
		if p := b1<<8 | b2; pairs[p>>6&1023]&(1<<(p&63)) != 0 {
			return len(lower) - len(s) + 1
		}
		s = s[2:]
	}
	if len(s) == 2 {
		if p := uint(s[0])<<8 | uint(s[1]); pairs[p>>6&1023]&(1<<(p&63)) != 0 {
			return len(lower) - 2
		}
	}
	return -1
}

// nextPairSWAR is nextPair for probes of at most four distinct first
// bytes, broadcast in firsts: it looks for those bytes eight at a time,
// and tests the pair only where one is. A byte equal to one of them makes
// its 0x80 bit set in (x - 0x01…) &^ x, x the word XOR the broadcast byte;
// the borrow may also set it in a byte above, which the pair test rejects.
func nextPairSWAR(lower []byte, at int, firsts *[4]uint64, pairs *[1 << 10]uint64) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if at >= len(lower) {
		return -1
	}
	f0, f1, f2, f3 := firsts[0], firsts[1], firsts[2], firsts[3]
	s := lower[at:]
	for ; len(s) > 8; s = s[8:] {
		w := binary.LittleEndian.Uint64(s)
		x0, x1, x2, x3 := w^f0, w^f1, w^f2, w^f3
		m := ((x0 - ones) &^ x0) | ((x1 - ones) &^ x1) | ((x2 - ones) &^ x2) | ((x3 - ones) &^ x3)
		for m &= highs; m != 0; m &= m - 1 {
			j := bits.TrailingZeros64(m) / 8 // < 8 < len(s)-1
			if p := uint(s[j])<<8 | uint(s[j+1]); pairs[p>>6&1023]&(1<<(p&63)) != 0 {
				return len(lower) - len(s) + j
			}
		}
	}
	return nextPair(lower, len(lower)-len(s), pairs)
}

// matchAt appends the occurrences of probes that start at lower[at].
func (ps *Matcher) matchAt(lower []byte, at int, hits []probeHit) []probeHit {
	for _, i := range ps.starts[lower[at]] {
		p := ps.pb[i]
		if at >= ps.next[i] && bytes.HasPrefix(lower[at:], p) {
			hits = append(hits, probeHit{pos: at, end: at + len(p), term: i})
			ps.next[i] = at + len(p)
		}
	}
	return hits
}

// matchFoldedAt is matchAt in a text whose Latin letters were folded with
// fill bytes: an ASCII probe passes over them (see foldedEnd).
func (ps *Matcher) matchFoldedAt(lower []byte, at int, hits []probeHit) []probeHit {
	for _, i := range ps.starts[lower[at]] {
		p := ps.pb[i]
		if at < ps.next[i] {
			continue
		}
		end := at + len(p)
		if p[0] < utf8.RuneSelf {
			end = foldedEnd(lower, at, p)
		} else if !bytes.HasPrefix(lower[at:], p) {
			continue
		}
		if end >= 0 {
			hits = append(hits, probeHit{pos: at, end: end, term: i})
			ps.next[i] = end
		}
	}
	return hits
}

// foldedEnd returns where the ASCII probe p, found at lower[at] in text
// with folded Latin letters, ends: past the fill bytes of a letter it ends
// in, which it may also skip within. It returns -1 if p is not there.
func foldedEnd(lower []byte, at int, p []byte) int {
	end := at + len(p)
	if !bytes.HasPrefix(lower[at:], p) {
		if end = prefixEnd(lower, at, p); end < 0 {
			return -1
		}
	}
	for end < len(lower) && lower[end] == fill {
		end++ // the rest of a folded letter
	}
	return end
}

// prefixEnd returns where p ends in lower[at:] when it is found there once
// the fill bytes of folded letters are passed over, or -1.
func prefixEnd(lower []byte, at int, p []byte) int {
	j := at
	for k := range len(p) {
		for k > 0 && j < len(lower) && lower[j] == fill {
			j++
		}
		if j >= len(lower) || lower[j] != p[k] {
			return -1
		}
		j++
	}
	return j
}

// addPairs marks the byte pairs that may start probe p: its first two
// bytes, or for a one-byte probe that byte followed by anything (or by
// nothing, at the end of the text).
func (ps *Matcher) addPairs(p string) {
	if ps.pairs == nil {
		ps.pairs = new([1 << 10]uint64)
	}
	set := func(pair uint16) { ps.pairs[pair>>6] |= 1 << (pair & 63) }
	if len(p) >= 2 {
		set(uint16(p[0])<<8 | uint16(p[1]))
		// A folded letter may be followed by fill bytes.
		set(uint16(p[0])<<8 | fill)
		return
	}
	for b := range 256 {
		set(uint16(p[0])<<8 | uint16(b))
	}
}

// appendLower appends s with ASCII and Cyrillic capitals lower-cased, and
// with latin set, Latin letters with diacritics folded as analysis folds
// them, eight bytes at a time. The bytes of the text keep their offsets: a
// folded letter shorter than its encoding is padded with fill bytes, which
// probe matching passes over. Other scripts keep their case and marks: a
// probe then misses such a word, and the snippet leaves it unmarked.
func appendLower(dst []byte, s string, latin bool) (out []byte, folded bool) {
	n := len(dst)
	dst = append(dst, s...)
	b := dst[n:]
	i := 0
	for ; i+8 <= len(b); i += 8 {
		word := b[i : i+8]
		w := binary.LittleEndian.Uint64(word)
		// Per byte, on its low seven bits (so that no sum carries into
		// the next byte): 0x80 set where it is in 'A'..'Z', then 0x20,
		// for bytes below 0x80 only.
		x := w & 0x7f7f7f7f7f7f7f7f
		ge := (x + 0x3f3f3f3f3f3f3f3f) & 0x8080808080808080 // >= 'A'
		gt := (x + 0x2525252525252525) & 0x8080808080808080 // > 'Z'
		binary.LittleEndian.PutUint64(word, w|(ge&^gt&^w)>>2)
		if w&0x8080808080808080 == 0 {
			continue
		}
		// 0x80 in each byte that is 0xD0, which starts every Cyrillic
		// capital (and maybe in a byte above one: checked).
		v := w ^ 0xD0D0D0D0D0D0D0D0
		for m := (v - 0x0101010101010101) &^ v & 0x8080808080808080; m != 0; m &= m - 1 {
			if j := i + bits.TrailingZeros64(m)/8; b[j] == 0xD0 {
				lowerCyrillicAt(b, j)
			}
		}
		if latin {
			// 0x80 in each byte from 0xC0 to 0xCF or 0xE1 (and maybe in
			// a byte above one), which holds every first byte of a
			// Latin letter with a diacritic: checked.
			c := w&0xF0F0F0F0F0F0F0F0 ^ 0xC0C0C0C0C0C0C0C0
			e := w ^ 0xE1E1E1E1E1E1E1E1
			m := ((c-0x0101010101010101)&^c | (e-0x0101010101010101)&^e) & 0x8080808080808080
			for ; m != 0; m &= m - 1 {
				if j := i + bits.TrailingZeros64(m)/8; latinLead[b[j]] && foldLatinAt(b, j) {
					folded = true
				}
			}
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == 0xD0:
			lowerCyrillicAt(b, i)
		case latin && latinLead[c]:
			folded = foldLatinAt(b, i) || folded
		}
	}
	return dst, folded
}

// fill pads a folded letter to the length of its encoding. No probe holds
// it: terms hold no control characters.
const fill = 0x00

// latinLead marks the first bytes of the runes foldLatinAt may fold: Latin
// letters with diacritics (U+00C0–U+024F, U+1E00–U+1EFF) and combining
// diacritics (U+0300–U+036F).
var latinLead = func() (t [256]bool) {
	for c := 0xC3; c <= 0xC9; c++ {
		t[c] = true
	}
	t[0xCC], t[0xCD], t[0xE1] = true, true, true
	return t
}()

// latinFolds holds the folds of U+00C0–U+036F and U+1E00–U+1EFF (by
// analysis.FoldRune) that are ASCII and no longer than the rune's encoding,
// padded with fill bytes: "é" is "e" and a fill byte, "ß" is "ss", a
// combining acute two fill bytes. Other runes are left as they are.
var latinFolds = func() (t [0x370 - 0xC0 + 0x100]latinFold) {
	for i := range t {
		r := latinRune(i)
		f, size := analysis.FoldRune(r), utf8.RuneLen(r)
		if len(f) > size || strings.ContainsFunc(f, func(c rune) bool { return c >= utf8.RuneSelf }) {
			continue
		}
		t[i] = latinFold{n: uint8(size)}
		copy(t[i].b[:], f) // the rest stays fill
	}
	return t
}()

// latinRune and latinIndex map an index of latinFolds to its rune and
// back; latinIndex returns -1 for a rune outside the table.
func latinRune(i int) rune {
	if i < 0x370-0xC0 {
		return rune(i) + 0xC0
	}
	return rune(i-(0x370-0xC0)) + 0x1E00
}

func latinIndex(r rune) int {
	switch {
	case r >= 0xC0 && r < 0x370:
		return int(r - 0xC0)
	case r >= 0x1E00 && r < 0x1F00:
		return int(r-0x1E00) + 0x370 - 0xC0
	}
	return -1
}

type latinFold struct {
	b [3]byte
	n uint8 // the size of the rune's encoding; 0 leaves the rune as it is
}

// foldLatinAt folds the rune whose encoding starts at b[i], in place, if
// latinFolds holds it, and reports whether it did.
func foldLatinAt(b []byte, i int) bool {
	r, size := utf8.DecodeRune(b[i:])
	if k := latinIndex(r); k >= 0 && int(latinFolds[k].n) == size {
		copy(b[i:i+size], latinFolds[k].b[:size])
		return true
	}
	return false
}

// lowerCyrillicAt lower-cases the Cyrillic capital whose encoding starts
// at b[i] (0xD0), if it is one, in its two bytes: the capitals U+0400–U+042F
// are the only ones encoded 0xD0 0x80–0xAF.
func lowerCyrillicAt(b []byte, i int) {
	if i+1 >= len(b) {
		return
	}
	switch c := b[i+1]; {
	case c < 0x80: // not UTF-8
	case c <= 0x8F: // Ѐ–Џ to ѐ–џ, U+0450–U+045F
		b[i], b[i+1] = 0xD1, c+0x10
	case c <= 0x9F: // А–П to а–п
		b[i+1] = c + 0x20
	case c <= 0xAF: // Р–Я to р–я, U+0440–U+044F
		b[i], b[i+1] = 0xD1, c-0x20
	}
}

// bestWindow returns the [from, to) range of hits, spanning at most
// maxBytes, that holds the most distinct terms (the earliest on ties).
func bestWindow(hits []probeHit, maxBytes int) (from, to, distinct int) {
	var small [32]int
	count := counts(small[:0], termCount(hits))
	have, lo := 0, 0
	for hi := range hits {
		if count[hits[hi].term] == 0 {
			have++
		}
		count[hits[hi].term]++
		for hits[hi].end-hits[lo].pos > maxBytes {
			count[hits[lo].term]--
			if count[hits[lo].term] == 0 {
				have--
			}
			lo++
		}
		if have > distinct {
			from, to, distinct = lo, hi+1, have
		}
	}
	return from, to, distinct
}

// counts returns n zero counters, in buf when it has room.
func counts(buf []int, n int) []int {
	if n <= cap(buf) {
		return buf[:n]
	}
	return make([]int, n)
}

// termCount is one more than the largest term index in hits.
func termCount(hits []probeHit) int {
	n := 0
	for _, h := range hits {
		n = max(n, h.term+1)
	}
	return n
}

// minSpan returns the smallest byte span covering every distinct term
// present in hits, and how many distinct terms that is.
func minSpan(hits []probeHit) (span, distinct int) {
	var small [32]int
	count := counts(small[:0], termCount(hits))
	want := 0
	for _, h := range hits {
		if count[h.term] == 0 {
			want++
		}
		count[h.term] = 1
	}
	if want < 2 {
		return 0, want
	}
	clear(count)
	have, best, lo := 0, -1, 0
	for hi := range hits {
		if count[hits[hi].term] == 0 {
			have++
		}
		count[hits[hi].term]++
		for have == want {
			if s := hits[hi].end - hits[lo].pos; best < 0 || s < best {
				best = s
			}
			count[hits[lo].term]--
			if count[hits[lo].term] == 0 {
				have--
			}
			lo++
		}
	}
	return best, want
}
