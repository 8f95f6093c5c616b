package learn

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
)

// Words returns the words of a query that may be learned, lower-cased,
// each once, at most contract.MaxLearnedWords. The caller has redacted
// the query and screened it for personal data already; Words keeps only
// what reads as a plain dictionary word, so that what those screens miss
// is dropped too:
//
//   - a token holding a digit or any of []<>{}@/\:=+_.#$%&*|~`^ is dropped
//     whole (addresses, paths, URLs, key=value, placeholders such as
//     "[email]" or "[REDACTED:...]", numbers, identifiers);
//   - hyphenated tokens are split, and each part is judged on its own;
//   - a word is letters only, 3 to 24 bytes, and is lower-case, or has
//     only its first letter upper-case as the query's first word (a
//     capitalised word further on may be someone's name), or is an
//     all-capital acronym of at most 5 letters;
//   - a Latin word needs a vowel, and no run of five consonants nor a
//     letter three times in a row (random strings, keys);
//   - a word must leave a term after analysis (stop words do not).
func Words(query string, an *analysis.Analyzer) []string {
	var out []string
	first := true
	for _, tok := range strings.Fields(query) {
		tok = strings.Trim(tok, ".,;:!?\"'()“”‘’«»")
		if tok == "" {
			continue
		}
		isFirst := first
		first = false
		if strings.ContainsFunc(tok, func(r rune) bool {
			return unicode.IsDigit(r) || strings.ContainsRune("[]<>{}@/\\:=+_.#$%&*|~`^", r)
		}) {
			continue
		}
		for _, w := range strings.Split(tok, "-") {
			w, ok := plainWord(w, isFirst)
			if !ok || len(an.AppendTerms(nil, w)) == 0 {
				continue
			}
			if !contains(out, w) {
				out = append(out, w)
			}
			if len(out) == contract.MaxLearnedWords {
				return out
			}
		}
	}
	return out
}

func contains(s []string, w string) bool {
	for _, x := range s {
		if x == w {
			return true
		}
	}
	return false
}

// plainWord judges one word and returns it lower-cased.
func plainWord(w string, first bool) (string, bool) {
	if len(w) < 3 || len(w) > contract.MaxLearnedWordLen || !utf8.ValidString(w) {
		return "", false
	}
	upper, latin := 0, true
	for i, r := range w {
		if !unicode.IsLetter(r) {
			return "", false
		}
		if unicode.IsUpper(r) {
			upper++
			if i > 0 && upper == 1 {
				// an upper-case letter inside a word: acronym or nothing
				if strings.ToUpper(w) != w {
					return "", false
				}
			}
		}
		if r > unicode.MaxASCII {
			latin = false
		}
	}
	switch {
	case upper == 0:
	case upper == 1 && unicode.IsUpper([]rune(w)[0]) && first:
	case upper == utf8.RuneCountInString(w) && upper <= 5:
	default:
		return "", false
	}
	w = strings.ToLower(w)
	if latin && !wordShaped(w) {
		return "", false
	}
	return w, true
}

// wordShaped reports whether a lower-case ASCII word looks like one: a
// vowel, no five consonants in a row, no letter three times in a row.
func wordShaped(w string) bool {
	vowels, run, same := 0, 0, 1
	for i := 0; i < len(w); i++ {
		c := w[i]
		if strings.IndexByte("aeiouy", c) >= 0 {
			vowels++
			run = 0
		} else if run++; run >= 5 {
			return false
		}
		if i > 0 && w[i-1] == c {
			if same++; same >= 3 {
				return false
			}
		} else {
			same = 1
		}
	}
	return vowels > 0
}
