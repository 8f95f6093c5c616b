package lang

import (
	"maps"
	"slices"
	"strings"
	"unicode"
)

// profiles are the most frequent function words of the Latin-script
// languages of documentation sites. A word may sit in several profiles
// ("de", "la", "in"); the words that only one language uses decide.
var profiles = map[string][]string{
	"en": {"the", "and", "of", "to", "is", "in", "that", "for", "with", "this", "you", "are", "be", "it", "can",
		"on", "as", "or", "from", "when", "by", "an", "if", "not", "your", "will", "which", "how", "what", "do",
		"does", "my", "why", "where", "should", "have", "has", "use", "using", "into", "there", "they", "then"},
	"fr": {"le", "la", "les", "de", "des", "est", "et", "un", "une", "du", "pour", "dans", "que", "qui", "sur", "pas",
		"avec", "vous", "par", "au", "ce", "cette", "sont", "ou", "aux", "être", "peut", "si", "comment", "votre",
		"je", "mon", "lorsque", "quand", "il", "ne", "en"},
	"de": {"der", "die", "das", "und", "ist", "den", "mit", "von", "zu", "ein", "eine", "für", "nicht", "auf",
		"sie", "im", "dem", "des", "auch", "oder", "wird", "werden", "wenn", "kann", "sich", "bei", "aus",
		"wie", "ich", "mein", "einen", "wird", "sind", "es"},
	"es": {"el", "la", "los", "las", "de", "que", "en", "un", "una", "es", "para", "por", "con", "del",
		"se", "no", "al", "como", "su", "lo", "más", "puede", "si", "este", "esta", "cómo", "mi", "qué", "cuando", "sus"},
	"it": {"il", "la", "di", "che", "è", "un", "una", "per", "non", "del", "della", "con", "sono", "gli",
		"le", "si", "da", "in", "al", "dei", "come", "può", "questo", "nel", "se", "delle", "alla", "anche", "quando", "mio"},
	"pt": {"os", "as", "de", "que", "do", "da", "em", "um", "uma", "para", "com", "não",
		"dos", "das", "no", "na", "por", "se", "ao", "como", "pode", "você", "seu", "sua", "quando", "meu", "são"},
	"nl": {"de", "het", "een", "en", "van", "is", "dat", "op", "te", "in", "voor", "met", "niet", "zijn", "je",
		"die", "er", "aan", "ook", "als", "bij", "of", "kan", "wordt", "naar", "hoe", "mijn", "wanneer", "deze", "worden"},
	"id": {"yang", "dan", "di", "ini", "untuk", "dengan", "dari", "itu", "tidak", "dalam", "ke", "akan", "ada",
		"atau", "anda", "pada", "juga", "dapat", "bisa", "jika", "oleh", "sebagai", "saat", "bagaimana", "saya"},
	"pl": {"nie", "na", "się", "do", "jest", "to", "że", "jak", "co", "dla", "lub", "ale",
		"po", "od", "przez", "może", "są", "jeśli", "aby", "tak", "mój", "czy", "gdy", "oraz"},
	"tr": {"ve", "bir", "bu", "için", "ile", "da", "de", "değil", "olarak", "gibi", "daha", "ne", "çok", "veya",
		"eğer", "sonra", "kadar", "olan", "her", "ise", "nasıl", "benim", "zaman", "ya", "şu"},
	"vi": {"và", "của", "là", "có", "các", "cho", "được", "trong", "không", "một", "với", "này", "để", "khi",
		"những", "người", "bạn", "từ", "đã", "sẽ", "thì", "hoặc", "nếu", "làm", "thế", "nào", "tôi"},
}

// order lists the profiles' languages, sorted so that ties resolve the
// same way every run; wordIndex maps a function word to the languages
// that use it, as bits of order.
var order, wordIndex = buildIndex()

func buildIndex() ([]string, map[string]uint32) {
	order := slices.Sorted(maps.Keys(profiles))
	index := map[string]uint32{}
	for i, l := range order {
		for _, w := range profiles[l] {
			index[w] |= 1 << i
		}
	}
	return order, index
}

// wordLanguage returns the language whose function words the text uses
// most: at least minHits of them and minRatio times the runner-up's
// count, or "".
func wordLanguage(text string, minHits int, minRatio float64) string {
	var hits [32]int
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if len(w) > 12 {
			continue
		}
		bits, ok := wordIndex[w]
		if !ok && strings.ContainsFunc(w, unicode.IsUpper) {
			bits = wordIndex[strings.ToLower(w)]
		}
		for i := 0; bits != 0; i++ {
			if bits&1 != 0 {
				hits[i]++
			}
			bits >>= 1
		}
	}
	best, second := -1, 0
	for i := range order {
		switch {
		case best < 0 || hits[i] > hits[best]:
			if best >= 0 {
				second = max(second, hits[best])
			}
			best = i
		case hits[i] > second:
			second = hits[i]
		}
	}
	if best < 0 || hits[best] < minHits || float64(hits[best]) < minRatio*float64(second) {
		return ""
	}
	return order[best]
}
