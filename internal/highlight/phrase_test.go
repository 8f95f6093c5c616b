package highlight

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
)

func TestHasPhrase(t *testing.T) {
	an := analysis.New()
	text := "Configure the fallback model chain. The parseConfig helper reads it; 模型故障转移 works too."
	toks := an.Analyze(text)
	terms := func(s string) []string { return PhraseTerms(an, []string{s})[0] }
	for _, tc := range []struct {
		phrase string
		want   bool
	}{
		{"fallback model chain", true},
		{"configure the fallback", true}, // a stop word's empty position
		{"configure fallback", false},    // the text has a word between
		{"configure the the fallback", false},
		{"model fallback", false},     // out of order
		{"fallback chain", false},     // not consecutive
		{"parse config helper", true}, // identifier parts share a position
		{"parseConfig helper", true},
		{"故障转移", true},
		{"转移故障", false},
		{"chain parse", false},
		{"chain the parse", true}, // across the sentence, as the words stand
	} {
		if got := hasPhrase(toks, terms(tc.phrase)); got != tc.want {
			t.Errorf("hasPhrase(%q) = %v, want %v", tc.phrase, got, tc.want)
		}
	}
	if hasPhrase(nil, []string{"a", "b"}) {
		t.Error("a phrase found in no text")
	}
}

// TestPhraseInParagraphs checks phraseIn, which analyses only the
// paragraphs holding a probe of each phrase term, against analysing each
// paragraph whole, on random texts; and that a phrase does not run across
// a blank line.
func TestPhraseInParagraphs(t *testing.T) {
	an := analysis.New()
	check := func(text, phrase string) (got, want bool) {
		terms := PhraseTerms(an, []string{phrase})[0]
		need := map[string]bool{}
		for _, term := range terms {
			if term != "" {
				need[term] = true
			}
		}
		ps := New(need)
		defer ps.Release()
		for _, para := range strings.Split(text, "\n\n") {
			want = want || hasPhrase(an.Analyze(para), terms)
		}
		return phraseIn(an, text, ps.scan(text), terms, ps.probesOf(terms)), want
	}
	if got, _ := check("Intro.\n\nConfigure the fallback model chain.\n\nEnd.", "fallback model chain"); !got {
		t.Error("a phrase in the second paragraph not found")
	}
	if got, _ := check("Configure the fallback model\n\nchain first.", "fallback model chain"); got {
		t.Error("a phrase found across a blank line")
	}
	if got, _ := check("Configure the fallback model\nchain first.", "fallback model chain"); !got {
		t.Error("a phrase across a line break not found")
	}
	// Punctuation between the words holds no position: the window from
	// "fallback" over a few words falls short and must widen.
	if got, want := check("See fallback - - - - - - - - model / / / / / / chain.", "fallback model chain"); !got || !want {
		t.Error("a phrase whose words stand far apart in bytes not found")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	// Words that hold several positions (identifiers, CJK runs), none
	// (punctuation, stop words) or break paragraphs, so that windows fall
	// short and widen.
	words := []string{"fallback", "model", "models", "chain", "the", "of", "Model", "parseConfig", "config",
		"模型", "回退", "模型回退", "a.b.c.d.e", "model.chain", "-", "/", "\n", "\n\n", ".", " "}
	phrases := []string{"fallback model", "model chain", "fallback the model", "parse config", "模型回退",
		"model of chain", "chain model fallback", "config model chain"}
	for round := range 5000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		text, phrase := b.String(), phrases[rng.IntN(len(phrases))]
		if got, want := check(text, phrase); got != want {
			t.Fatalf("round %d: phraseIn(%q, %q) = %v, want %v", round, text, phrase, got, want)
		}
	}
}
