package query

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
)

// Snippet returns the passage of text, at most maxLen bytes cut at word
// boundaries, that holds the most distinct query terms, with every matched
// word marked as **word**. Without a match it returns the start of text.
// Only the chosen window is analysed, so long sections cost a byte scan.
func Snippet(an *analysis.Analyzer, text string, ps *probeSet, terms map[string]bool, maxLen int) string {
	hits := ps.scan(text)
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
	// term; only those few words are analysed.
	var marks [][2]int
	for _, h := range hits {
		if h.pos < start || h.end > end {
			continue
		}
		ws, we := wordAround(text, h.pos, h.end, start, end)
		if n := len(marks); n > 0 && ws < marks[n-1][1] {
			continue // same word as the previous mark
		}
		for _, t := range an.Analyze(text[ws:we]) {
			if terms[t.Term] {
				marks = append(marks, [2]int{ws, we})
				break
			}
		}
	}
	return mark(text, start, end, marks)
}

// wordAround widens [pos, end) to the identifier-like word holding it,
// within [lo, hi). Scripts without spaces (CJK) keep the probe's span.
func wordAround(text string, pos, end, lo, hi int) (int, int) {
	if r, _ := utf8.DecodeRuneInString(text[pos:]); r >= 0x2E80 {
		return pos, end
	}
	isWord := func(r rune) bool {
		return r < 0x2E80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' || unicode.Is(unicode.Mn, r))
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

func mark(text string, start, end int, marks [][2]int) string {
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, m := range marks {
		b.WriteString(text[pos:m[0]])
		b.WriteString("**")
		b.WriteString(text[m[0]:m[1]])
		b.WriteString("**")
		pos = m[1]
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

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
