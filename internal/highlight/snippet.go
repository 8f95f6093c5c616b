package highlight

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
)

// snippetOf returns the passage of text, at most maxLen bytes cut at word
// boundaries, that holds the most distinct query terms (hits are the probe
// occurrences of ps in text), with every matched word marked as **word**.
// Without a match it returns the start of text. Only the chosen window is
// analysed, so long sections cost a byte scan.
func snippetOf(an *analysis.Analyzer, text string, hits []probeHit, ps *Matcher, terms map[string]bool, maxLen int) string {
	start, end := 0, cutEnd(text, 0, maxLen)
	from, to, n := bestWindow(hits, maxLen)
	if n > 0 {
		span := hits[to-1].end - hits[from].pos
		start = cutStart(text, hits[from].pos-(maxLen-span)/3)
		end = cutEnd(text, start, maxLen)
		if end < hits[to-1].end {
			end = cutEnd(text, hits[from].pos, maxLen)
			start = cutStart(text, hits[from].pos)
		}
	}
	// Mark each probed word in the window whose analysis yields a query
	// term; only those few words are analysed. Bigrams that overlap or
	// touch (CJK, Thai ...) make one mark: "**เอกสาร**", not five.
	var buf [16][2]int
	marks := buf[:0]
	for _, h := range hits {
		if h.pos < start || h.end > end {
			continue
		}
		ws, we := wordAround(text, h.pos, h.end, start, end)
		n := len(marks)
		if n > 0 && ws < marks[n-1][1] && we <= marks[n-1][1] {
			continue // within the previous mark
		}
		if !ps.isTerm(an, text[ws:we], terms) {
			continue
		}
		if n > 0 && ws <= marks[n-1][1] {
			marks[n-1][1] = we
		} else {
			marks = append(marks, [2]int{ws, we})
		}
	}
	return mark(text, start, end, marks)
}

// isTerm reports whether word analyses to one of terms, caching the answer
// for the query.
func (ps *Matcher) isTerm(an *analysis.Analyzer, word string, terms map[string]bool) bool {
	if ok, seen := ps.words[word]; seen {
		return ok
	}
	ok := false
	ps.wordTerms = an.AppendTerms(ps.wordTerms[:0], word)
	for _, t := range ps.wordTerms {
		if terms[t] {
			ok = true
			break
		}
	}
	if ps.words == nil {
		ps.words = map[string]bool{}
	}
	ps.words[word] = ok
	return ok
}

// wordAround widens [pos, end) to the identifier-like word holding it,
// within [lo, hi). Scripts indexed as bigrams (CJK, Thai ...) keep the
// probe's span.
func wordAround(text string, pos, end, lo, hi int) (int, int) {
	if r, _ := utf8.DecodeRuneInString(text[pos:]); analysis.IsBigramRune(r) {
		return pos, end
	}
	isWord := func(r rune) bool {
		return !analysis.IsBigramRune(r) && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' || unicode.Is(unicode.Mn, r))
	}
	for pos > lo {
		r, size := utf8.DecodeLastRuneInString(text[lo:pos])
		if !isWord(r) {
			break
		}
		pos -= size
	}
	for end < hi {
		r, size := utf8.DecodeRuneInString(text[end:hi])
		if !isWord(r) {
			break
		}
		end += size
	}
	// Trailing dots and dashes end sentences, not words.
	for end > pos && (text[end-1] == '.' || text[end-1] == '-') {
		end--
	}
	for pos < end && (text[pos] == '.' || text[pos] == '-') {
		pos++
	}
	return pos, end
}

// mark returns text[start:end] with each span of marks wrapped in **,
// ellipses where the text was cut, and runs of white space collapsed.
func mark(text string, start, end int, marks [][2]int) string {
	var b strings.Builder
	b.Grow(end - start + 4*len(marks) + 8)
	w := spaceCollapser{b: &b}
	if start > 0 {
		w.write("…")
	}
	pos := start
	for _, m := range marks {
		w.write(text[pos:m[0]])
		w.write("**")
		w.write(text[m[0]:m[1]])
		w.write("**")
		pos = m[1]
	}
	w.write(text[pos:end])
	if end < len(text) {
		w.write("…")
	}
	return b.String()
}

// spaceCollapser writes text with every run of white space turned into one
// space and none at either end.
type spaceCollapser struct {
	b       *strings.Builder
	pending bool // white space seen since the last word
}

func (w *spaceCollapser) write(s string) {
	for i := 0; i < len(s); {
		// Copy a run of bytes at once: bytes that are not white space
		// (ASCII other than spaces, and runes whose first byte no space
		// starts with, with their continuation bytes), and single spaces
		// between two of them, which are already collapsed.
		j := i
		for j < len(s) {
			if !mayBeSpace[s[j]] {
				j++
				continue
			}
			if s[j] == ' ' && j > i && j+1 < len(s) && !mayBeSpace[s[j+1]] {
				j += 2
				continue
			}
			break
		}
		if j > i {
			w.flush()
			w.b.WriteString(s[i:j])
			i = j
			continue
		}
		if c := s[i]; c < utf8.RuneSelf {
			w.pending = true // ASCII white space
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			w.pending = true
		} else {
			w.flush()
			w.b.WriteString(s[i : i+size])
		}
		i += size
	}
}

func (w *spaceCollapser) flush() {
	if w.pending && w.b.Len() > 0 {
		w.b.WriteByte(' ')
	}
	w.pending = false
}

// mayBeSpace marks the bytes that may start white space: ASCII spaces,
// and the first bytes of the encodings of the other Unicode spaces (U+0085
// and U+00A0 start with 0xC2, U+1680 with 0xE1, U+2000–U+205F with 0xE2,
// U+3000 with 0xE3). Continuation bytes never start a rune.
var mayBeSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true,
	0xC2: true, 0xE1: true, 0xE2: true, 0xE3: true}

// maxWordBack bounds how far a cut moves to reach a word boundary.
const maxWordBack = 32

// cutStart moves i back to the start of a word (or 0).
func cutStart(text string, i int) int {
	if i <= 0 {
		return 0
	}
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	// Back up to a space, but not far: scripts without spaces cut anywhere.
	for j := i; j > 0 && i-j < maxWordBack; {
		r, size := utf8.DecodeLastRuneInString(text[:j])
		if unicode.IsSpace(r) {
			return j
		}
		j -= size
	}
	return i
}

// cutEnd returns the end of the last whole word within maxLen bytes of start.
func cutEnd(text string, start, maxLen int) int {
	end := start + maxLen
	if end >= len(text) {
		return len(text)
	}
	for end > start && !utf8.RuneStart(text[end]) {
		end--
	}
	for i := end; i > start && end-i < maxWordBack; {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		if unicode.IsSpace(r) {
			return i - size
		}
		i -= size
	}
	return end // no space nearby: cut at a rune boundary
}
