package analysis

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Character classes used by the scanner.
const (
	kSep       = iota // separates words
	kLower            // lower-case letter
	kUpper            // upper-case or title-case letter
	kLetter           // letter without case (Lo, Lm)
	kDigit            // number (Nd, Nl, No)
	kMark             // combining mark or in-word format character
	kConn             // connector that may join word characters: . - _
	kCJK              // character indexed as bigrams
	kSpaceless        // letter or mark of a script written without spaces between words
)

// asciiClass classifies every ASCII byte; bytes >= 0x80 are classified by
// runeClass instead.
var asciiClass = [256]uint8{
	'.': kConn, '-': kConn, '_': kConn,
	'0': kDigit, '1': kDigit, '2': kDigit, '3': kDigit, '4': kDigit,
	'5': kDigit, '6': kDigit, '7': kDigit, '8': kDigit, '9': kDigit,
	'a': kLower, 'b': kLower, 'c': kLower, 'd': kLower, 'e': kLower,
	'f': kLower, 'g': kLower, 'h': kLower, 'i': kLower, 'j': kLower,
	'k': kLower, 'l': kLower, 'm': kLower, 'n': kLower, 'o': kLower,
	'p': kLower, 'q': kLower, 'r': kLower, 's': kLower, 't': kLower,
	'u': kLower, 'v': kLower, 'w': kLower, 'x': kLower, 'y': kLower,
	'z': kLower,
	'A': kUpper, 'B': kUpper, 'C': kUpper, 'D': kUpper, 'E': kUpper,
	'F': kUpper, 'G': kUpper, 'H': kUpper, 'I': kUpper, 'J': kUpper,
	'K': kUpper, 'L': kUpper, 'M': kUpper, 'N': kUpper, 'O': kUpper,
	'P': kUpper, 'Q': kUpper, 'R': kUpper, 'S': kUpper, 'T': kUpper,
	'U': kUpper, 'V': kUpper, 'W': kUpper, 'X': kUpper, 'Y': kUpper,
	'Z': kUpper,
}

// asciiWord maps the bytes of plain ASCII words, letters and digits, to
// their lower-case form (the low byte) with wordLower or wordUpper set for
// letters; every other byte maps to 0.
var asciiWord = func() (t [256]uint16) {
	for c := '0'; c <= '9'; c++ {
		t[c] = uint16(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint16(c) | wordLower
		t[c-'a'+'A'] = uint16(c) | wordUpper
	}
	return t
}()

// Letter bits of asciiWord entries.
const (
	wordLower = 0x100
	wordUpper = 0x200
)

// runeClass classifies a non-ASCII rune. The scanner reads it through a
// runeTable.
func runeClass(r rune) uint8 {
	switch {
	case isCJK(r):
		return kCJK
	case isSpaceless(r) && (unicode.IsLetter(r) || unicode.IsMark(r)):
		return kSpaceless
	case r == 0x2010 || r == 0x2011: // hyphen, non-breaking hyphen
		return kConn
	case r == 0x00AD || r == 0x200C || r == 0x200D: // soft hyphen, ZWNJ, ZWJ
		return kMark
	case unicode.IsLower(r):
		return kLower
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return kUpper
	case unicode.IsLetter(r):
		return kLetter
	case unicode.IsMark(r):
		return kMark
	case unicode.IsNumber(r):
		return kDigit
	}
	return kSep
}

// isCJK reports whether r belongs to a script indexed as bigrams: Han,
// Hiragana, Katakana (full and half width), Bopomofo and Hangul.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x11FF: // Hangul Jamo
		return true
	case r < 0x3005:
		return false
	case r == 0x3005 || r == 0x3007 || r == 0x303B: // 々 〇 〻
		return true
	case r >= 0x3021 && r <= 0x3029: // Hangzhou numerals
		return true
	case r >= 0x3041 && r <= 0x30FF: // Hiragana, Katakana (incl. ー and voicing marks)
		return r != 0x30A0 && r != 0x30FB // ゠ and ・ are punctuation
	case r >= 0x3105 && r <= 0x318F: // Bopomofo, Hangul compatibility Jamo
		return true
	case r >= 0x31A0 && r <= 0x31BF: // Bopomofo extended
		return true
	case r >= 0x31F0 && r <= 0x31FF: // Katakana phonetic extensions
		return true
	case r >= 0x3400 && r <= 0x4DBF: // CJK extension A
		return true
	case r >= 0x4E00 && r <= 0x9FFF: // CJK unified ideographs
		return true
	case r >= 0xA960 && r <= 0xA97F: // Hangul Jamo extended A
		return true
	case r >= 0xAC00 && r <= 0xD7FF: // Hangul syllables, Jamo extended B
		return true
	case r >= 0xF900 && r <= 0xFAFF: // CJK compatibility ideographs
		return true
	case r >= 0xFF66 && r <= 0xFF9F: // half-width Katakana
		return true
	case r >= 0xFFA0 && r <= 0xFFDC: // half-width Hangul
		return true
	case r >= 0x1B000 && r <= 0x1B16F: // Kana supplement and extended
		return true
	case r >= 0x20000 && r <= 0x3FFFF: // CJK extensions B and later
		return true
	}
	return false
}

// isSpaceless reports whether r belongs to a script written without spaces
// between words, whose letters are indexed as bigrams of characters: Thai,
// Lao, Myanmar and Khmer. Without a dictionary, their words cannot be
// told apart, and a whole phrase between two spaces would be one term.
func isSpaceless(r rune) bool {
	return (r >= 0x0E00 && r <= 0x0EFF) || // Thai, Lao
		(r >= 0x1000 && r <= 0x109F) || // Myanmar
		(r >= 0x1780 && r <= 0x17FF) || // Khmer
		(r >= 0xA9E0 && r <= 0xA9FF) || (r >= 0xAA60 && r <= 0xAA7F) // Myanmar extended B, A
}

// IsBigramRune reports whether r belongs to a script that analysis indexes
// as bigrams of characters rather than as words: Han, Kana, Hangul,
// Thai, Lao, Myanmar, Khmer.
func IsBigramRune(r rune) bool {
	return isCJK(r) || isSpaceless(r)
}

// cjkStable reports whether r is left unchanged by NFKC, so a CJK character
// made of r alone needs no normalization.
func cjkStable(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3041 && r <= 0x3096) ||
		(r >= 0x30A1 && r <= 0x30FA) || r == 0x30FC || (r >= 0xAC00 && r <= 0xD7A3) ||
		(r >= 0x3400 && r <= 0x4DBF)
}

// isDroppedMark reports whether r is removed by folding: diacritics,
// Hebrew points, Arabic harakat and tatweel, and in-word format characters.
func isDroppedMark(r rune) bool {
	switch {
	case r >= 0x0300 && r <= 0x036F, // combining diacritical marks
		r >= 0x0483 && r <= 0x0489, // Cyrillic combining marks
		r >= 0x0591 && r <= 0x05C7, // Hebrew points and accents
		r >= 0x0610 && r <= 0x061A, r >= 0x064B && r <= 0x065F, r == 0x0670,
		r >= 0x06D6 && r <= 0x06ED, r == 0x0640, // Arabic harakat, tatweel
		r >= 0x1AB0 && r <= 0x1AFF, // combining diacritical marks extended
		r >= 0x1DC0 && r <= 0x1DFF, // combining diacritical marks supplement
		r >= 0x20D0 && r <= 0x20FF, // combining marks for symbols
		r >= 0xFE20 && r <= 0xFE2F, // combining half marks
		r == 0x00AD, r == 0x200C, r == 0x200D:
		return true
	}
	return false
}

// foldRune appends the folded, lower-cased form of one decomposed rune.
func foldRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	}
	if isDroppedMark(r) {
		return dst
	}
	switch r {
	case 'ß', 'ẞ':
		return append(dst, 's', 's')
	case 'æ', 'Æ':
		return append(dst, 'a', 'e')
	case 'œ', 'Œ':
		return append(dst, 'o', 'e')
	case 'ø', 'Ø':
		return append(dst, 'o')
	case 'ł', 'Ł':
		return append(dst, 'l')
	case 'đ', 'Đ', 'ð', 'Ð':
		return append(dst, 'd')
	case 'þ', 'Þ':
		return append(dst, 't', 'h')
	case 'ı':
		return append(dst, 'i')
	case 'ς':
		r = 'σ'
	}
	if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r) {
		return dst // compatibility decompositions may produce spaces or symbols
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// FoldRune returns r as analysis folds it inside a word: decomposed (NFKD),
// with diacritics and the other dropped marks removed, lower-cased. A mark
// folds to nothing. Callers that locate terms in raw text use it to fold
// the text as the terms were.
func FoldRune(r rune) string {
	if r < utf8.RuneSelf {
		return string(foldRune(nil, r))
	}
	enc := utf8.AppendRune(nil, r)
	d := norm.NFKD.Properties(enc).Decomposition()
	if d == nil {
		return string(foldRune(nil, r))
	}
	var out []byte
	for j := 0; j < len(d); {
		r, m := utf8.DecodeRune(d[j:])
		out = foldRune(out, r)
		j += m
	}
	return string(out)
}

// fold appends the normalized form of the word src (no separators inside)
// to dst: NFKD, diacritics dropped, lower-cased. It stops early once the
// output exceeds MaxTermLen bytes, since such a term is dropped anyway; the
// caller checks the length.
func (t *runeTable) fold(dst []byte, src string) []byte {
	start := len(dst)
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
		} else {
			r, n := utf8.DecodeRuneInString(src[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				n = 1 // invalid UTF-8 is a separator, never inside a word
			case t.info(r)&infoSame != 0:
				dst = append(dst, src[i:i+n]...)
			default:
				if d := norm.NFKD.PropertiesString(src[i:]).Decomposition(); d != nil {
					for j := 0; j < len(d); {
						r, m := utf8.DecodeRune(d[j:])
						dst = foldRune(dst, r)
						j += m
					}
				} else {
					dst = foldRune(dst, r)
				}
			}
			i += n
		}
		if len(dst)-start > MaxTermLen {
			break
		}
	}
	return dst
}
