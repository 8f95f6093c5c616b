// Package lang tells the language of a documentation page and of a query:
// from the page's folders (i18n conventions such as docs/zh-CN/ or
// translations/fr/) and from its text (the share of letters in a
// non-Latin script, then, for Latin-script text, profiles of the most
// frequent function words).
//
// A language is the lower-case primary subtag of a BCP 47 tag: "en",
// "zh", "pt". Regions and scripts are folded ("zh-TW" and "zh-CN" are
// "zh"). The empty string means undetermined: too little text to tell.
//
// The detector is deliberately light. Documentation prose is full of
// function words, so a few dozen per language separate the Latin-script
// languages of documentation sites; n-gram models (lingua-go) would add
// hundreds of megabytes for accuracy on short, odd text that pages do not
// need. Queries are short, so Query answers only when the evidence is
// clear and otherwise leaves the ranking alone.
package lang

import (
	"fmt"

	"golang.org/x/text/language"

	"strings"
	"unicode"
	"unicode/utf8"
)

// NonLatinShare is the share of letters in non-Latin scripts above which a
// text is not in a Latin-script language: the rule of the doc-engine
// plugin, which drops such text as non-English.
const NonLatinShare = 0.3

// sampleBytes bounds how much of a text is read: the start of a page
// tells its language.
const sampleBytes = 16 << 10

// i18nFolders are the primary subtags that a folder may carry to mark its
// pages as a translation: the doc-engine plugin's list, with English,
// Chinese and Norwegian added.
var i18nFolders = map[string]bool{
	"en": true, "zh": true, "ja": true, "ko": true, "fr": true, "de": true, "es": true, "pt": true, "ru": true,
	"ar": true, "hi": true, "it": true, "nl": true, "pl": true, "tr": true, "vi": true, "th": true, "id": true,
	"uk": true, "cs": true, "sv": true, "da": true, "fi": true, "nb": true, "no": true, "el": true, "he": true,
	"ro": true, "hu": true, "bg": true, "hr": true, "sk": true, "sl": true, "lt": true, "lv": true, "et": true,
	"ms": true, "fil": true, "bn": true, "ta": true, "te": true, "ml": true, "kn": true, "mr": true, "gu": true,
	"pa": true, "ur": true, "fa": true, "sw": true,
}

// Folder returns the language that a folder of the slash-separated,
// repository-relative path p names, and "" when none does. A folder
// names a language when it is a locale tag whose primary subtag is a
// known one: "ja", "zh-CN", "pt_BR", "zh-Hans". The file name is not
// read: README.fr.md says less than the folder it sits in. The deepest
// such folder wins.
func Folder(p string) string {
	dir := p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir = p[:i]
	} else {
		return ""
	}
	out := ""
	for seg := range strings.SplitSeq(dir, "/") {
		if l := localeTag(seg); l != "" {
			out = l
		}
	}
	return out
}

// localeTag returns the primary subtag of seg when seg is a locale tag:
// two or three letters, then at most one region (two letters or three
// digits) or script (four letters) subtag after '-' or '_'.
func localeTag(seg string) string {
	seg = strings.ToLower(seg)
	primary, rest, cut := strings.Cut(strings.ReplaceAll(seg, "_", "-"), "-")
	if !i18nFolders[primary] {
		return ""
	}
	if !cut {
		return primary
	}
	switch {
	case len(rest) == 2 && letters(rest), len(rest) == 4 && letters(rest):
		return primary
	case len(rest) == 3 && strings.Trim(rest, "0123456789") == "":
		return primary
	}
	return ""
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// Page returns the language of the page at path p with text: the folder's
// when a folder names one, as the doc-engine plugin decides, else the
// text's (see Text).
func Page(p, text string) string {
	if l := Folder(p); l != "" {
		return l
	}
	return Text(text)
}

// Text returns the language of a page's text: the language of its script
// when more than NonLatinShare of its letters are in a non-Latin script,
// else the Latin-script language whose function words it uses most, and
// "" when it has too few of them to tell.
func Text(text string) string {
	return detect(text, 5, 1.5)
}

// Query returns the language of a search query, or "" when the query is
// too short or too mixed to tell: a query in a non-Latin script is in
// its script's language; a Latin-script one needs two function words
// ("how do I", "comment configurer le") that one language claims clearly.
func Query(q string) string {
	return detect(q, 2, 2)
}

// detect is Text and Query: minHits function words, and minRatio times
// as many as the runner-up language, settle a Latin-script text.
func detect(text string, minHits int, minRatio float64) string {
	if len(text) > sampleBytes {
		text = text[:sampleBytes]
		for len(text) > 0 && !utf8.RuneStart(text[len(text)-1]) {
			text = text[:len(text)-1]
		}
		if len(text) > 0 {
			text = text[:len(text)-1] // the start of a rune that may be cut
		}
	}
	text = prose(text)
	if l := scriptLanguage(text); l != "" {
		return l
	}
	return wordLanguage(text, minHits, minRatio)
}

// scriptLanguage returns the language of the text's non-Latin script when
// such letters make more than NonLatinShare of its letters.
func scriptLanguage(text string) string {
	// The share is of words, with each CJK character a word of its own:
	// "配置 gateway" is half Chinese, though it has more Latin letters.
	var latin, other int
	var counts [numScripts]int
	prev := scriptOther
	inWord := false
	for _, r := range text {
		s := scriptLatin
		switch {
		case r < utf8.RuneSelf:
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				inWord = false
				continue
			}
		case !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r):
			inWord = false
			continue
		default:
			s = scriptOf(r)
		}
		counts[s]++
		if m := markerOf(r); m != 0 {
			counts[m]++
		}
		newWord := !inWord || s != prev || s == scriptHan || s == scriptKana || s == scriptThai
		inWord, prev = true, s
		switch {
		case !newWord:
		case s == scriptLatin:
			latin++
		default:
			other++
		}
	}
	if other == 0 || float64(other) <= NonLatinShare*float64(latin+other) {
		return ""
	}
	best := scriptOther
	for s := scriptHan; s < numScripts; s++ {
		if counts[s] > counts[best] {
			best = s
		}
	}
	switch best {
	case scriptHan, scriptKana:
		// Japanese writes kanji with kana around them; Chinese has none.
		if counts[scriptKana]*10 >= counts[scriptHan]+counts[scriptKana] {
			return "ja"
		}
		return "zh"
	case scriptArabic:
		// Urdu and Persian write letters Arabic has not (and Urdu some
		// that Persian has not); Arabic writes ي, ك and ة where they write ی and ک.
		switch {
		case counts[scriptUrdu] > counts[scriptArabicOnly] && counts[scriptUrdu]*50 >= counts[scriptArabic]:
			return "ur"
		case counts[scriptPersian] > counts[scriptArabicOnly]:
			return "fa"
		}
		return "ar"
	case scriptCyrillic:
		// і, ї, є and ґ are common in Ukrainian and absent from Russian.
		if counts[scriptUkrainian]*50 >= counts[scriptCyrillic] {
			return "uk"
		}
		return "ru"
	}
	return scriptLangs[best]
}

type script uint8

const (
	scriptLatin script = iota
	scriptOther
	scriptHan
	scriptKana
	scriptHangul
	scriptArabic
	scriptCyrillic
	scriptGreek
	scriptHebrew
	scriptDevanagari
	scriptBengali
	scriptTamil
	scriptTelugu
	scriptThai
	scriptGeorgian
	scriptArmenian
	// Markers counted beside their script, never winners.
	scriptPersian
	scriptUrdu
	scriptArabicOnly
	scriptUkrainian
	numScripts
)

// scriptLangs is the language of a script that one language writes, or
// "und" (undetermined, but not in a Latin script).
var scriptLangs = [numScripts]string{
	scriptOther: "und", scriptHangul: "ko", scriptGreek: "el", scriptHebrew: "he", scriptDevanagari: "hi",
	scriptBengali: "bn", scriptTamil: "ta", scriptTelugu: "te", scriptThai: "th", scriptGeorgian: "ka",
	scriptArmenian: "hy",
}

// markerOf returns the marker that a letter is, or 0: letters that tell
// Persian, Urdu and Arabic apart, and Ukrainian from Russian.
func markerOf(r rune) script {
	switch r {
	case 'پ', 'چ', 'ژ', 'گ', 'ک', 'ی':
		return scriptPersian
	case 'ے', 'ٹ', 'ڈ', 'ڑ', 'ں':
		return scriptUrdu
	case 'ي', 'ك', 'ة':
		return scriptArabicOnly
	case 'і', 'ї', 'є', 'ґ':
		return scriptUkrainian
	}
	return 0
}

// scriptOf classifies a letter outside ASCII. Markers are counted by
// markerOf beside the script.
func scriptOf(r rune) script {
	switch {
	case r <= 0x024F, r >= 0x1E00 && r <= 0x1EFF: // Latin-1, Extended-A/B, Extended Additional (Vietnamese)
		return scriptLatin
	case unicode.Is(unicode.Han, r):
		return scriptHan
	case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
		return scriptKana
	case unicode.Is(unicode.Hangul, r):
		return scriptHangul
	case unicode.Is(unicode.Arabic, r):
		return scriptArabic
	case unicode.Is(unicode.Cyrillic, r):
		return scriptCyrillic
	case unicode.Is(unicode.Greek, r):
		return scriptGreek
	case unicode.Is(unicode.Hebrew, r):
		return scriptHebrew
	case unicode.Is(unicode.Devanagari, r):
		return scriptDevanagari
	case unicode.Is(unicode.Bengali, r):
		return scriptBengali
	case unicode.Is(unicode.Tamil, r):
		return scriptTamil
	case unicode.Is(unicode.Telugu, r):
		return scriptTelugu
	case unicode.Is(unicode.Thai, r):
		return scriptThai
	case unicode.Is(unicode.Georgian, r):
		return scriptGeorgian
	case unicode.Is(unicode.Armenian, r):
		return scriptArmenian
	case unicode.Is(unicode.Latin, r):
		return scriptLatin
	}
	return scriptOther
}

// prose returns the Markdown text without what is written in no human
// language: fenced code blocks, inline code, link targets and HTML tags.
func prose(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	fence := ""
	for line := range strings.Lines(text) {
		t := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		for i := 0; i < len(line); i++ {
			switch c := line[i]; c {
			case '`':
				if j := strings.IndexByte(line[i+1:], '`'); j >= 0 {
					i += j + 1
					continue
				}
			case '(':
				if i > 0 && line[i-1] == ']' {
					if j := strings.IndexByte(line[i+1:], ')'); j >= 0 {
						i += j + 1
						continue
					}
				}
			case '<':
				if j := strings.IndexByte(line[i+1:], '>'); j >= 0 {
					i += j + 1
					continue
				}
			}
			b.WriteByte(line[i])
		}
	}
	return b.String()
}

// Normalize returns the language of a BCP 47 tag as this package names
// languages ("zh-CN" is "zh", "pt_BR" is "pt", "iw" is "he"), or an error
// when tag is not a known language tag.
func Normalize(tag string) (string, error) {
	t, err := language.Parse(tag)
	if err != nil {
		return "", fmt.Errorf("%q is not a language tag (use one like \"en\", \"zh-CN\" or \"pt-BR\")", tag)
	}
	base, conf := t.Base()
	if conf != language.Exact || base.String() == "und" {
		return "", fmt.Errorf("%q names no language (use one like \"en\", \"zh-CN\" or \"pt-BR\")", tag)
	}
	return base.String(), nil
}
