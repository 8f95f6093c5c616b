// Package pii finds personal data that simple patterns miss: phone numbers
// as people write them in many locales. It is pure (no I/O) and safe for
// concurrent use.
package pii

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is the byte range [Start, End) of a finding in a text.
type Span struct{ Start, End int }

// A phone shape is one way of writing a number; a candidate must also have
// between minDigits and maxDigits digits and pass the boundary checks of
// Phones.
type phoneShape struct {
	name                 string
	re                   *regexp.Regexp
	minDigits, maxDigits int
	// sameSep asks that every separator after the first group be the same
	// (1 000 000 and dates such as 05.11.2026 14 are not numbers of one
	// shape).
	sameSep bool
}

const sep = `[ .\-/]`

var phoneShapes = []phoneShape{
	// International: +<country> or 00<country>, an optional (0) or (area)
	// and groups (+49 (0)30 1234567, 0044 20 7946 0958, +86-13812345678).
	{"international", regexp.MustCompile(`(?:\+|00)[1-9]\d{0,2}(?:[ .\-]?\(\d{1,4}\))?(?:[ .\-/]?\d{1,6}){1,6}`), 8, 15, false},
	// National with a trunk prefix or a parenthesized area code:
	// 020 7946 0958, 07700 900123, 030/1234567, 01 23 45 67 89,
	// 06.12.34.56.78, 03-1234-5678, (02) 9876 5432, (11) 91234-5678,
	// 8 (495) 123-45-67, 8 912 345-67-89, 0612345678.
	{"national", regexp.MustCompile(`(?:0\d{1,4}|\(0?\d{2,4}\)|8 ?\(\d{3,5}\)|8 9\d\d)(?:` + sep + `?\d{2,8}){1,5}`), 9, 12, false},
	// North America without a country code: 555 345 6789, 555.345.6789,
	// 1-555-345-6789.
	{"north american", regexp.MustCompile(`(?:1[ .\-])?[2-9]\d{2}[ .\-][2-9]\d{2}[ .\-]\d{4}`), 10, 11, true},
	// Chinese mobiles: 13812345678, 138 1234 5678, 139-1234-5678.
	{"chinese mobile", regexp.MustCompile(`1[3-9]\d(?:[ \-]?\d{4}){2}`), 11, 11, true},
	// Indian mobiles: 98765 43210.
	{"indian mobile", regexp.MustCompile(`[6-9]\d{4}[ \-]\d{5}`), 10, 10, true},
	// Spanish and Italian mobiles grouped by pairs: 612 34 56 78.
	{"paired mobile", regexp.MustCompile(`[367]\d{2}(?: \d{2}){3}`), 9, 9, true},
}

// phoneLabelRE finds words that announce a phone number, in the languages
// the knowledge hub's users write; the number that follows (within a few
// characters) is taken whatever its grouping. Word boundaries are checked
// by labelAt, since RE2's \b knows only ASCII letters.
var phoneLabelRE = regexp.MustCompile(`(?i)(?:phone|telephone|tel|mobile|mob|cellphone|cell|call me|call|ring me|fax|sms|text me|whatsapp|signal|telegram|viber|contact|hotline|` +
	`telefon|handy|mobil|rufnummer|téléphone|portable|tél|teléfono|telefono|móvil|movil|celular|cel|telefone|telemóvel|contato|cellulare|numero|número|` +
	`телефон|тел|моб|мобильный|номер|手机号码|手机号|手机|电话|電話番号|電話|携帯|ケータイ|联系方式|연락처|전화)`)

// labelAt reports whether the label s[start:end] is a word of its own: a
// Latin or Cyrillic label must not be part of a longer word (hotel,
// cellar); a CJK one needs no boundary.
func labelAt(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:])
	if unicode.In(first, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
		return true
	}
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:start]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	if end < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[end:]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return false
		}
	}
	return true
}

// labelledNumberRE is what may follow a label: a short gap, then a number
// of digits with the usual separators. The gap does not cross the end of
// a clause or a placeholder.
var labelledNumberRE = regexp.MustCompile(`^[^\d\n+(\[\]!?;,。！？；，]{0,12}?(\+?\(?\d[\d ().\-/]{5,24}\d)`)

// Phones returns the spans of the phone numbers in s, in order and not
// overlapping. A number must stand alone: not glued to a word, not part of
// a longer number, version, path or date.
func Phones(s string) []Span {
	if !hasDigitRun(s, 7) {
		return nil
	}
	var out []Span
	for i := range phoneShapes {
		ps := &phoneShapes[i]
		for _, m := range ps.re.FindAllStringIndex(s, -1) {
			if ok := ps.accept(s[m[0]:m[1]]); ok && standalone(s, m[0], m[1]) {
				out = append(out, Span{m[0], m[1]})
			}
		}
	}
	for _, m := range phoneLabelRE.FindAllStringIndex(s, -1) {
		if !labelAt(s, m[0], m[1]) {
			continue
		}
		rest := s[m[1]:]
		n := labelledNumberRE.FindStringSubmatchIndex(rest)
		if n == nil {
			continue
		}
		start, end := m[1]+n[2], m[1]+n[3]
		num := strings.TrimRight(s[start:end], " ().-/")
		end = start + len(num)
		if d := digits(num); d >= 7 && d <= 15 && !isDateTime(num) && !sameDigit(num) && standalone(s, start, end) {
			out = append(out, Span{start, end})
		}
	}
	return merge(out)
}

// accept checks a candidate's digit count and separators.
func (ps *phoneShape) accept(m string) bool {
	d := digits(m)
	if d < ps.minDigits || d > ps.maxDigits || isDateTime(m) || sameDigit(m) {
		return false
	}
	if ps.sameSep {
		var first rune
		for _, r := range m {
			if r >= '0' && r <= '9' || r == '+' || r == '(' || r == ')' {
				continue
			}
			if first == 0 {
				first = r
			} else if r != first {
				return false
			}
		}
	}
	return true
}

// standalone reports whether s[start:end] is not glued to a word or part of
// a longer number, version or path.
func standalone(s string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:start])
		if r < utf8.RuneSelf && (isASCIIWord(byte(r)) || strings.ContainsRune(".+-/\\#@$%&", r)) {
			return false
		}
		if r >= utf8.RuneSelf && unicode.IsDigit(r) {
			return false
		}
	}
	if end < len(s) {
		c := s[end]
		if isASCIIWord(c) || c == '%' || c == '@' || c == '/' {
			return false
		}
		if (c == '.' || c == '-' || c == ':' || c == ',') && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9' {
			return false
		}
	}
	return true
}

// isDateTime reports whether a candidate is a date or a time written with
// separators (2026-03-02, 05.11.2026, 10:42:13).
var dateRE = regexp.MustCompile(`(?:^|[^\d])(?:(?:19|20)\d\d[.\-/](?:0?[1-9]|1[0-2])[.\-/](?:0?[1-9]|[12]\d|3[01])|(?:0?[1-9]|[12]\d|3[01])[.\-/](?:0?[1-9]|1[0-2])[.\-/](?:19|20)\d\d)(?:[^\d]|$)`)

func isDateTime(m string) bool { return dateRE.MatchString(m) }

// sameDigit reports whether all digits of m are one digit (0000000000).
func sameDigit(m string) bool {
	var first byte
	for i := range len(m) {
		if c := m[i]; c >= '0' && c <= '9' {
			if first == 0 {
				first = c
			} else if c != first {
				return false
			}
		}
	}
	return true
}

func digits(m string) int {
	n := 0
	for i := range len(m) {
		if m[i] >= '0' && m[i] <= '9' {
			n++
		}
	}
	return n
}

// hasDigitRun reports whether s holds at least n digits.
func hasDigitRun(s string, n int) bool {
	c := 0
	for i := range len(s) {
		if s[i] >= '0' && s[i] <= '9' {
			if c++; c >= n {
				return true
			}
		}
	}
	return false
}

func isASCIIWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// merge sorts spans and joins those that overlap.
func merge(spans []Span) []Span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b Span) int { return a.Start - b.Start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.Start < last.End {
			last.End = max(last.End, sp.End)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Replace returns s with every span replaced by with.
func Replace(s string, spans []Span, with string) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.Start])
		b.WriteString(with)
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String()
}
