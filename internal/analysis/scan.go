package analysis

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Output modes of a state.
const (
	modeTokens = iota
	modeTerms
	modeFreqs
)

// part is one piece of a compound word: a run between connectors and case
// boundaries.
type part struct {
	start, end int // source byte span
	seg        int // index of the segment (run between connectors) it is in
}

// segment is a run of a compound word between connectors.
type segment struct {
	first, last int  // indexes of its parts
	dot         bool // joined to the previous segment by '.'
}

// unit is one emitted part of a compound: a part, or several digit
// segments joined by '.' into one number.
type unit struct {
	start, end   int // source byte span
	nStart, nEnd int // normalized text in state.nbuf
	comps        int // number of dotted components (numbers)
	firstEnd     int // source end of the first component (numbers)
	nFirstEnd    int // nbuf end of the first component (numbers)
	tooLong      bool
}

// state is the per-call scratch of an analysis. States are pooled by the
// Analyzer; nothing in them outlives a call except the output slices, which
// are detached before a state is returned to the pool.
type state struct {
	a     *Analyzer
	rt    *runeTable
	mode  int
	pos   int
	count int

	tokens []Token
	terms  []string
	freqs  map[string]int

	buf   []byte // normalized word or bigram
	nbuf  []byte // normalized parts of a compound
	wbuf  []byte // whole of a compound
	prev  []byte // previous CJK character
	cur   []byte // current CJK character
	parts []part
	segs  []segment
	units []unit
	hot   hotCache
}

// run analyzes text and sends every term to the output of the mode.
func (st *state) run(text string) {
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case kSep, kConn:
				i++
			default:
				i = st.word(text, i)
			}
			continue
		}
		k, size := st.rt.classAt(text, i)
		switch k {
		case kSep, kConn:
			i += size
		case kCJK:
			i = st.cjk(text, i)
		case kSpaceless:
			i = st.spaceless(text, i)
		default:
			i = st.word(text, i)
		}
	}
}

// emit looks up the term for the normalized key (which may alias a scratch
// buffer) and sends it to the output.
func (st *state) emit(key string, start, end int) {
	h := hashInit
	for i := 0; i < len(key); i++ {
		h = hashByte(h, key[i])
	}
	st.emitHashed(key, h, start, end)
}

// emitHashed is emit with the hash of key already computed by hashByte.
func (st *state) emitHashed(key string, h uint64, start, end int) {
	if len(key) == 0 || len(key) > MaxTermLen {
		return
	}
	term, ok := st.a.cache.lookup(key, h, &st.hot)
	if !ok {
		return
	}
	st.count++
	switch st.mode {
	case modeFreqs:
		st.freqs[term]++
	case modeTerms:
		st.terms = append(st.terms, term)
	default:
		st.tokens = append(st.tokens, Token{Term: term, Pos: st.pos, Start: start, End: end})
	}
}

// maxWordBytes is the longest word or compound word, in source bytes, that
// is analyzed; a longer one is dropped and consumes one position.
const maxWordBytes = 1024

// isWordClass reports whether class k continues a (non-CJK) word.
func isWordClass(k uint8) bool {
	return k >= kLower && k <= kMark
}

// connectorEnd returns the end of the connector run at text[i] when it joins
// two word characters: a run of '_', or a single '.', '-', U+2010 or U+2011.
// It returns -1 when the connector does not join.
func (st *state) connectorEnd(text string, i int) int {
	j := i
	if text[i] == '_' {
		for j < len(text) && text[j] == '_' {
			j++
		}
	} else {
		_, size := st.rt.classAt(text, i)
		j += size
	}
	if j >= len(text) {
		return -1
	}
	if k, _ := st.rt.classAt(text, j); !isWordClass(k) {
		return -1
	}
	return j
}

// word consumes the word or compound word starting at text[start], emits
// its terms at the current position, advances the position and returns the
// end of the word.
func (st *state) word(text string, start int) int {
	n := len(text)
	// Fast path: a plain ASCII word, hashed (lower-cased) as it is scanned.
	h := hashInit
	i := start
	first, inner := asciiWord[text[i]], uint16(0) // inner: bits of all but the first byte
	if first != 0 {
		h = hashByte(h, byte(first))
		for i++; i < n; i++ {
			w := asciiWord[text[i]]
			if w == 0 {
				break
			}
			inner |= w
			h = hashByte(h, byte(w))
		}
	}
	hasUpper := (first|inner)&wordUpper != 0
	innerUpper, hasLower := inner&wordUpper != 0, (first|inner)&wordLower != 0
	plain := i == n
	if !plain && text[i] < utf8.RuneSelf {
		switch asciiClass[text[i]] {
		case kSep:
			plain = true
		case kConn: // "word." at the end of a sentence
			plain = st.connectorEnd(text, i) < 0
		}
	}
	if plain && !(innerUpper && hasLower) {
		if i-start <= MaxTermLen {
			key := text[start:i]
			if hasUpper {
				st.buf = appendLower(st.buf[:0], key)
				key = scratch(st.buf)
			}
			st.emitHashed(key, h, start, i)
		}
		st.pos++
		return i
	}

	// General path: non-ASCII letters, connectors or inner capitals.
	i = start
	joined := false
	innerUpper, hasLower = false, false
	for {
		for i < n {
			k, size := uint8(0), 1 // classAt, inlined by hand for the hot loop
			if c := text[i]; c < utf8.RuneSelf {
				k = asciiClass[c]
			} else {
				k, size = st.rt.classAtRune(text[i:])
			}
			if !isWordClass(k) {
				break
			}
			switch k {
			case kLower:
				hasLower = true
			case kUpper:
				innerUpper = innerUpper || i > start
			}
			i += size
		}
		if i < n {
			if k, _ := st.rt.classAt(text, i); k == kConn {
				if j := st.connectorEnd(text, i); j > 0 {
					joined = true
					i = j
					continue
				}
			}
		}
		break
	}
	switch {
	case i-start > maxWordBytes:
		// Junk such as a long run of marks or a minified blob: dropped, so
		// that the scratch of a compound stays bounded.
	case joined || (innerUpper && hasLower):
		st.compound(text, start, i)
	default:
		// A plain word with non-ASCII letters (plain ASCII words took the
		// fast path).
		st.buf = st.rt.fold(st.buf[:0], text[start:i])
		st.emit(scratch(st.buf), start, i)
	}
	st.pos++
	return i
}

// classSkippingMarks returns the class of the first character at or after
// text[i] (up to end) that is not a mark, or kSep at the end.
func (st *state) classSkippingMarks(text string, i, end int) uint8 {
	for i < end {
		k, size := st.rt.classAt(text, i)
		if k != kMark {
			return k
		}
		i += size
	}
	return kSep
}

// split fills st.parts and st.segs with the parts of the compound
// text[start:end].
func (st *state) split(text string, start, end int) {
	st.parts = st.parts[:0]
	st.segs = append(st.segs[:0], segment{})
	partStart := start
	prev, prevStart, upperRun := uint8(kSep), start, 0
	cut := func(at int) {
		if at > partStart {
			st.parts = append(st.parts, part{start: partStart, end: at, seg: len(st.segs) - 1})
			partStart = at
		}
	}
	for i := start; i < end; {
		k, size := uint8(0), 1 // classAt, inlined by hand for the hot loop
		if c := text[i]; c < utf8.RuneSelf {
			k = asciiClass[c]
		} else {
			k, size = st.rt.classAtRune(text[i:])
		}
		switch k {
		case kConn:
			cut(i)
			dot := text[i] == '.'
			for i < end {
				if k, size := st.rt.classAt(text, i); k != kConn {
					break
				} else {
					i += size
				}
			}
			st.segs = append(st.segs, segment{dot: dot})
			partStart, prev, upperRun = i, kSep, 0
			continue
		case kMark:
			i += size
			continue
		case kUpper:
			switch prev {
			case kLower:
				cut(i) // toolSearch
			case kDigit:
				if st.classSkippingMarks(text, i+size, end) == kLower {
					cut(i) // Base64Encode
				}
			}
			if partStart == i {
				upperRun = 0
			}
			upperRun++
		case kLower:
			// HTTPServer: the last upper of an acronym starts the next part,
			// unless what follows is a plural "s" (APIs, URLs).
			if prev == kUpper && upperRun >= 2 &&
				!(text[i] == 's' && st.classSkippingMarks(text, i+1, end) != kLower) {
				cut(prevStart)
			}
			upperRun = 0
		default:
			upperRun = 0
		}
		prev, prevStart = k, i
		i += size
	}
	cut(end)
	// Attach part ranges to segments.
	seg := -1
	for pi, p := range st.parts {
		for seg < p.seg {
			seg++
			st.segs[seg].first, st.segs[seg].last = pi, pi-1
		}
		st.segs[seg].last = pi
	}
	for seg++; seg < len(st.segs); seg++ {
		st.segs[seg].first, st.segs[seg].last = len(st.parts), len(st.parts)-1
	}
}

// numericSeg reports whether segment si is a single part of ASCII digits,
// or of 'v'/'V' and digits when lead is true.
func (st *state) numericSeg(text string, si int, lead bool) bool {
	s := st.segs[si]
	if s.first != s.last {
		return false
	}
	p := st.parts[s.first]
	w := text[p.start:p.end]
	if lead && len(w) > 1 && (w[0] == 'v' || w[0] == 'V') {
		w = w[1:]
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// compound emits the whole and the parts of the compound word
// text[start:end] at the current position.
func (st *state) compound(text string, start, end int) {
	st.split(text, start, end)
	st.units = st.units[:0]
	st.nbuf = st.nbuf[:0]
	whole := st.wbuf[:0]
	wholeTooLong := false
	addWhole := func(b []byte) {
		if wholeTooLong || len(whole)+len(b) > MaxTermLen {
			wholeTooLong = true
			return
		}
		whole = append(whole, b...)
	}
	for si := 0; si < len(st.segs); si++ {
		seg := st.segs[si]
		if seg.first > seg.last {
			continue
		}
		if si > 0 && seg.dot {
			if len(whole) < MaxTermLen {
				whole = append(whole, '.')
			} else {
				wholeTooLong = true
			}
		}
		if st.numericSeg(text, si, true) {
			// Digit segments joined by '.' make one number unit.
			p := st.parts[seg.first]
			u := unit{start: p.start, end: p.end, nStart: len(st.nbuf), comps: 1}
			st.nbuf = st.rt.fold(st.nbuf, text[p.start:p.end])
			u.firstEnd, u.nFirstEnd = p.end, len(st.nbuf)
			for si+1 < len(st.segs) && st.segs[si+1].dot && st.numericSeg(text, si+1, false) {
				si++
				p = st.parts[st.segs[si].first]
				st.nbuf = append(st.nbuf, '.')
				st.nbuf = append(st.nbuf, text[p.start:p.end]...)
				u.end = p.end
				u.comps++
			}
			u.nEnd = len(st.nbuf)
			u.tooLong = u.nEnd-u.nStart > MaxTermLen
			addWhole(st.nbuf[u.nStart:u.nEnd])
			st.units = append(st.units, u)
			continue
		}
		for pi := seg.first; pi <= seg.last; pi++ {
			p := st.parts[pi]
			u := unit{start: p.start, end: p.end, nStart: len(st.nbuf), comps: 1}
			st.nbuf = st.rt.fold(st.nbuf, text[p.start:p.end])
			u.nEnd = len(st.nbuf)
			u.tooLong = u.nEnd-u.nStart > MaxTermLen
			if u.tooLong {
				wholeTooLong = true
			}
			addWhole(st.nbuf[u.nStart:u.nEnd])
			st.units = append(st.units, u)
		}
	}
	st.wbuf = whole
	if len(st.units) > 1 && !wholeTooLong {
		st.emit(scratch(whole), start, end)
	}
	for _, u := range st.units {
		if !u.tooLong {
			st.emit(scratch(st.nbuf[u.nStart:u.nEnd]), u.start, u.end)
		}
		if u.comps >= 3 {
			st.emit(scratch(st.nbuf[u.nStart:u.nFirstEnd]), u.start, u.firstEnd)
		}
	}
}

// cjk consumes the run of CJK characters starting at text[start], emits its
// bigrams (or the single character) and returns the end of the run. A
// character is a CJK rune with any marks that follow it, normalized by NFKC.
func (st *state) cjk(text string, start int) int {
	n := len(text)
	i := start
	chars := 0
	st.prev = st.prev[:0]
	prevStart, prevEnd := 0, 0
	add := func(ch []byte, s, e int) {
		if chars > 0 {
			b := append(st.buf[:0], st.prev...)
			b = append(b, ch...)
			st.buf = b
			st.emit(scratch(b), prevStart, e)
			st.pos++
		}
		st.prev = append(st.prev[:0], ch...)
		prevStart, prevEnd = s, e
		chars++
	}
	for i < n {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isCJK(r) {
			break
		}
		j := i + size
		marks := false
		for j < n {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			// Marks, including the half-width voicing marks, belong to the
			// character before them.
			if !st.isCJKMark(r2) {
				break
			}
			marks = true
			j += s2
		}
		var d []byte // the NFKC form of the character, when it differs
		if !marks && !cjkStable(r) {
			// A lone character is NFKC-normalized by its compatibility
			// decomposition unless that decomposition holds marks to
			// compose (half-width voicing marks come with marks = true).
			d = norm.NFKC.PropertiesString(text[i:j]).Decomposition()
			for k := 0; k < len(d); {
				r2, s2 := utf8.DecodeRune(d[k:])
				if unicode.IsMark(r2) {
					marks = true
					break
				}
				k += s2
			}
		}
		switch {
		case marks:
			// Rare: normalize into nbuf, then add each CJK rune produced.
			d = norm.NFKC.AppendString(st.nbuf[:0], text[i:j])
			st.nbuf = d
			fallthrough
		case d != nil:
			for k := 0; k < len(d); {
				r2, s2 := utf8.DecodeRune(d[k:])
				if isCJK(r2) && !unicode.IsMark(r2) {
					add(d[k:k+s2], i, j)
				}
				k += s2
			}
		default:
			st.cur = append(st.cur[:0], text[i:j]...)
			add(st.cur, i, j)
		}
		i = j
	}
	if chars == 1 {
		st.emit(scratch(st.prev), prevStart, prevEnd)
		st.pos++
	}
	return i
}

// maxCharBytes bounds a character of a spaceless script with its marks:
// a longer one (a flood of marks) is cut there, so that a bigram stays
// within MaxTermLen.
const maxCharBytes = 24

// spaceless consumes the run of a script written without spaces between
// words (Thai, Lao, Myanmar, Khmer) starting at text[start], emits its
// bigrams (or the single character) at consecutive positions, like a CJK
// run, and returns the end of the run.
//
// A character is a letter with the marks that follow it, so that vowel
// signs and tone marks stay with their consonant. Thai and Lao also write
// vowels as letters: one written before its consonant (เ แ โ ใ ไ) joins
// the consonant after it, and AA, AM and SARA A join the consonant before
// them, so that a character is close to a Thai character cluster and its
// bigrams are not as common as letter pairs ("เอกสาร" → "เอก", "กสา",
// "สาร"). The decomposed AM (nikhahit then AA) is folded to the single AM
// letter that keyboards type.
func (st *state) spaceless(text string, start int) int {
	n := len(text)
	i := start
	chars := 0
	prevStart, prevEnd := 0, 0
	for i < n {
		k, size := st.rt.classAt(text, i)
		if k != kSpaceless {
			break
		}
		cur := st.cur[:0]
		j := i
		if r, _ := utf8.DecodeRuneInString(text[i:]); isLeadingVowel(r) && i+size < n {
			if k2, size2 := st.rt.classAt(text, i+size); k2 == kSpaceless && st.rt.info(decodeAt(text, i+size))&infoMark == 0 {
				// The vowel and the consonant after it.
				cur = append(cur, text[i:i+size]...)
				j, size = i+size, size2
			}
		}
		if am, ok := decomposedAM(text[j:]); ok {
			cur = utf8.AppendRune(cur, am)
			j += 6
		} else {
			cur = append(cur, text[j:j+size]...)
			j += size
		}
		for j < n && j-i < maxCharBytes {
			if am, ok := decomposedAM(text[j:]); ok {
				cur = utf8.AppendRune(cur, am)
				j += 6
				continue
			}
			r, s := utf8.DecodeRuneInString(text[j:])
			if r < 0x300 || (st.rt.info(r)&infoMark == 0 && !isFollowingVowel(r)) {
				break
			}
			cur = append(cur, text[j:j+s]...)
			j += s
		}
		if chars > 0 {
			b := append(append(st.buf[:0], st.prev...), cur...)
			st.buf = b
			st.emit(scratch(b), prevStart, j)
			st.pos++
		}
		st.cur, st.prev = st.prev, cur
		prevStart, prevEnd = i, j
		chars++
		i = j
	}
	if chars == 1 {
		st.emit(scratch(st.prev), prevStart, prevEnd)
		st.pos++
	}
	return i
}

// decodeAt returns the rune at text[i].
func decodeAt(text string, i int) rune {
	r, _ := utf8.DecodeRuneInString(text[i:])
	return r
}

// isLeadingVowel reports whether r is a Thai or Lao vowel written before
// the consonant it follows in speech.
func isLeadingVowel(r rune) bool {
	return (r >= 0x0E40 && r <= 0x0E44) || (r >= 0x0EC0 && r <= 0x0EC4)
}

// isFollowingVowel reports whether r is a Thai or Lao vowel letter that
// belongs to the consonant before it: SARA A, AA, AM, and LAKKHANGYAO.
func isFollowingVowel(r rune) bool {
	switch r {
	case 0x0E30, 0x0E32, 0x0E33, 0x0E45, 0x0EB0, 0x0EB2, 0x0EB3:
		return true
	}
	return false
}

// decomposedAM reports whether s starts with the Thai or Lao nikhahit
// followed by AA, and returns the AM letter the two spell.
func decomposedAM(s string) (rune, bool) {
	switch {
	case len(s) < 6:
	case s[:6] == "\u0e4d\u0e32":
		return 0x0E33, true
	case s[:6] == "\u0ecd\u0eb2":
		return 0x0EB3, true
	}
	return 0, false
}

// appendLower appends the ASCII word s, lower-cased, to dst.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// isCJKMark reports whether r attaches to the CJK character before it: a
// combining mark or a half-width voicing mark.
func (st *state) isCJKMark(r rune) bool {
	if r < 0x300 {
		return false
	}
	return st.rt.info(r)&infoMark != 0 || r == 0xFF9E || r == 0xFF9F
}
