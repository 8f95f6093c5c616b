package engine

import (
	"math"
	"testing"
)

func TestToolWordWeights(t *testing.T) {
	e := NewEngine(Limits{})
	sc := DefaultScoring()
	k3 := func(n float64) float64 { return (sc.QueryK3 + 1) * n / (sc.QueryK3 + n) }
	got := map[string]toolWord{}
	var order []string
	for _, w := range e.toolWords("Could you please find time-travel games? Time games, I mean.") {
		got[w.term] = w
		order = append(order, w.term)
	}
	want := map[string]float64{
		"could":      sc.RequestWeight, // request words weigh less
		"pleas":      sc.RequestWeight,
		"find":       1,
		"timetravel": 1,             // the whole of a compound
		"travel":     sc.PartWeight, // one of its parts
		"time":       k3(2),         // a part, but also a word of its own, said twice
		"game":       k3(2),         // said twice
		"mean":       1,
	}
	for term, w := range want {
		if math.Abs(got[term].weight-w) > 1e-9 {
			t.Errorf("%s weighs %v, want %v", term, got[term].weight, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("words %v, want those of %v", order, want)
	}
	if !got["could"].request || got["find"].request {
		t.Errorf("request flags: could %v, find %v", got["could"].request, got["find"].request)
	}
}

func TestRequestWordsGetNoExpansions(t *testing.T) {
	e := NewEngine(Limits{})
	terms, _ := e.toolTerms(e.toolWords("please"), nil)
	for _, term := range terms {
		if term.Text != "pleas" {
			t.Errorf("request word expanded to %q", term.Text)
		}
	}
}

func TestHasPrefixFold(t *testing.T) {
	for _, tc := range []struct {
		s, prefix string
		want      bool
	}{
		{"ToolSearch", "tools", true},
		{"ToolSearch", "TOOLSEARCH", true},
		{"ToolSearch", "toolsearchx", false},
		{"github__create_issue", "github__c", true},
		{"Überblick", "überb", true},
		{"Überblick", "uber", false},
		{"Grep", "", true},
	} {
		if got := hasPrefixFold(tc.s, tc.prefix); got != tc.want {
			t.Errorf("hasPrefixFold(%q, %q) = %v, want %v", tc.s, tc.prefix, got, tc.want)
		}
	}
}
