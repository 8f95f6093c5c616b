package query

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
)

// Snippet returns the passage of text, at most maxLen bytes cut at word
// boundaries, that holds the most distinct query terms, with every matched
// word marked as **word**. Without a match it returns the start of text.
func Snippet(an *analysis.Analyzer, text string, terms map[string]bool, maxLen int) string {
	type match struct {
		start, end int
		term       string
	}
	var ms []match
	for _, t := range candidateTokens(an, text, terms) {
		if terms[t.Term] {
			// Identifier parts share their source word and CJK bigrams
			// overlap: merge them into one marked span.
			if n := len(ms); n > 0 && t.Start < ms[n-1].end {
				ms[n-1].end = max(ms[n-1].end, t.End)
				continue
			}
			ms = append(ms, match{t.Start, t.End, t.Term})
		}
	}
	if len(ms) == 0 {
		return mark(text, 0, cutEnd(text, 0, maxLen), nil)
	}
	// Slide a window over the matches; keep the one with most distinct terms.
	bestI, bestJ, bestN := 0, 0, 0
	for i := range ms {
		seen := map[string]bool{}
		j := i
		for ; j < len(ms) && ms[j].end-ms[i].start <= maxLen; j++ {
			seen[ms[j].term] = true
		}
		if len(seen) > bestN {
			bestI, bestJ, bestN = i, j, len(seen)
		}
	}
	span := ms[bestJ-1].end - ms[bestI].start
	start := cutStart(text, ms[bestI].start-(maxLen-span)/3)
	end := cutEnd(text, start, maxLen)
	if end < ms[bestJ-1].end {
		end = ms[bestJ-1].end
	}
	var marks [][2]int
	for _, m := range ms {
		if m.start >= start && m.end <= end {
			marks = append(marks, [2]int{m.start, m.end})
		}
	}
	return mark(text, start, end, marks)
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

// maxWordBack bounds how far a cut moves to reach a word boundary.
const maxWordBack = 32

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

// candidateTokens analyses only the regions of text where a query term may
// occur: around every occurrence of a term's first few bytes in the
// ASCII-lower-cased text. Long sections then cost a byte scan, not a full
// analysis. Offsets are relative to text.
func candidateTokens(an *analysis.Analyzer, text string, terms map[string]bool) []analysis.Token {
	if len(text) <= 512 {
		return an.Analyze(text)
	}
	lower := asciiLower(text)
	var regions [][2]int
	for t := range terms {
		probe := t
		if len(probe) > 4 {
			probe = probe[:4]
			for !utf8.ValidString(probe) {
				probe = probe[:len(probe)-1]
			}
		}
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], probe)
			if i < 0 {
				break
			}
			i += from
			regions = append(regions, [2]int{cutStart(text, i-48), cutEnd(text, i, 96)})
			from = i + len(probe)
		}
	}
	if len(regions) == 0 {
		return nil
	}
	sort.Slice(regions, func(i, j int) bool { return regions[i][0] < regions[j][0] })
	var toks []analysis.Token
	cur := regions[0]
	flush := func(r [2]int) {
		for _, t := range an.Analyze(text[r[0]:r[1]]) {
			t.Start += r[0]
			t.End += r[0]
			toks = append(toks, t)
		}
	}
	for _, r := range regions[1:] {
		if r[0] <= cur[1] {
			cur[1] = max(cur[1], r[1])
			continue
		}
		flush(cur)
		cur = r
	}
	flush(cur)
	return toks
}

// asciiLower lower-cases ASCII letters only, so byte offsets are kept.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
