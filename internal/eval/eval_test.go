package eval

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fixed is a Searcher with canned runs, keyed by query text.
type fixed map[string][]Ranked

func (f fixed) Search(q string, k int) ([]Ranked, error) {
	if q == "boom" {
		return nil, errors.New("engine on fire")
	}
	run := f[q]
	return run[:min(k, len(run))], nil
}

func TestRun(t *testing.T) {
	queries := []Query{{"q1", "one"}, {"q2", "two"}, {"q3", "three"}, {"q4", "four"}}
	qrels := Qrels{
		"q1": {"a": 1},
		"q2": {"b": 2, "c": 1},
		"q4": {"d": 1},
		"q9": {"a": 1}, // not among the queries
	}
	s := fixed{
		"one":   {{"a", 3}, {"x", 1}},
		"two":   {{"x", 5}, {"c", 4}, {"b", 3}},
		"three": {{"a", 1}},
		// "four" retrieves nothing: it scores 0 but still counts.
	}
	rep, err := Run(context.Background(), s, queries, qrels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// q1: a at rank 1: nDCG 1, recalls 1, RR 1.
	// q2: DCG = 1/log2(3) + 2/log2(4) = 0.6309 + 1; IDCG = 2 + 1/log2(3);
	//     recalls 1, RR 1/2.
	// q3: no relevant doc, skipped. q4: all 0.
	q2 := (1/log2of3 + 1) / (2 + 1/log2of3)
	// hit@1: q1 only; hit@5: q1 and q2.
	want := Scores{NDCG10: (1 + q2) / 3, Recall10: 2.0 / 3, Recall100: 2.0 / 3, MRR10: 1.5 / 3, Hit1: 1.0 / 3, Hit5: 2.0 / 3}
	if rep.Queries != 3 || rep.Unjudged != 1 || rep.Missing != 1 {
		t.Errorf("queries %d, unjudged %d, missing %d; want 3, 1, 1", rep.Queries, rep.Unjudged, rep.Missing)
	}
	if !nearScores(rep.Scores, want) {
		t.Errorf("scores %+v, want %+v", rep.Scores, want)
	}
	var order []string
	for _, r := range rep.Results {
		order = append(order, r.QueryID)
	}
	if !reflect.DeepEqual(order, []string{"q1", "q2", "q4"}) {
		t.Errorf("results for %v, want q1 q2 q4 in query order", order)
	}

	// --limit: only the first judged query.
	rep, err = Run(context.Background(), s, queries, qrels, Options{Limit: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 1 || rep.NDCG10 != 1 || rep.MRR10 != 1 {
		t.Errorf("limit 1: %d queries, %+v; want 1 query scoring 1", rep.Queries, rep.Scores)
	}

	if _, err := Run(context.Background(), s, []Query{{"q1", "boom"}}, qrels, Options{}); err == nil || !strings.Contains(err.Error(), "search query q1: engine on fire") {
		t.Errorf("search error: %v", err)
	}
	if _, err := Run(context.Background(), s, []Query{{"q3", "three"}}, qrels, Options{}); err == nil {
		t.Error("no judged query: want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, s, queries, qrels, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error = %v", err)
	}
}

func nearScores(a, b Scores) bool {
	return near(a.NDCG10, b.NDCG10) && near(a.Recall10, b.Recall10) && near(a.Recall100, b.Recall100) && near(a.MRR10, b.MRR10) &&
		near(a.Hit1, b.Hit1) && near(a.Hit5, b.Hit5)
}

func TestWriteRun(t *testing.T) {
	tenth := 0.1 // not a constant, so the sum below is rounded
	results := []Result{
		{QueryID: "q1", Run: []Ranked{{"d2", 12.5}, {"d1", tenth + 0.2}}},
		{QueryID: "q2"},
		{QueryID: "q3", Run: []Ranked{{"docs/a.md", 3}}},
	}
	var b strings.Builder
	if err := WriteRun(&b, results, "knowhub"); err != nil {
		t.Fatal(err)
	}
	want := "q1 Q0 d2 1 12.5 knowhub\n" +
		"q1 Q0 d1 2 0.30000000000000004 knowhub\n" +
		"q3 Q0 docs/a.md 1 3 knowhub\n"
	if b.String() != want {
		t.Errorf("run file:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := WriteRun(&b, []Result{{QueryID: "q", Run: []Ranked{{"my doc.md", 1}}}}, "t"); err == nil {
		t.Error("doc id with a space: want an error")
	}
	if err := WriteRun(&b, nil, "two words"); err == nil {
		t.Error("tag with a space: want an error")
	}
}
