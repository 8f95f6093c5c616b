package query

import (
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
)

func TestHasPhrase(t *testing.T) {
	an := analysis.New()
	text := "Configure the fallback model chain. The parseConfig helper reads it; 模型故障转移 works too."
	toks := an.Analyze(text)
	terms := func(s string) []string { return phraseTerms(an, []string{s})[0] }
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
