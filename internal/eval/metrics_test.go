package eval

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// log2of3 is log2(3); 1/log2(3) = 0.6309297535714574 is the discount of
// rank 2, and 1/log2(4) = 0.5 that of rank 3.
var log2of3 = math.Log2(3)

func TestMetrics(t *testing.T) {
	ids := func(prefix string, from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	twelve := map[string]int{}
	for _, id := range ids("r", 1, 12) {
		twelve[id] = 1
	}
	tests := []struct {
		name    string
		ranking []string
		rel     map[string]int
		k       int
		ndcg    float64
		recall  float64
		rr      float64
	}{
		{
			// DCG = 2/log2(3) + 1/log2(4) = 1.7618595
			// IDCG = 2/log2(2) + 1/log2(3) = 2.6309298
			// nDCG = 0.6696718; both relevant found; first relevant at rank 2.
			name: "graded", ranking: []string{"d3", "d1", "d2"}, rel: map[string]int{"d1": 2, "d2": 1}, k: 10,
			ndcg: (2/log2of3 + 0.5) / (2 + 1/log2of3), recall: 1, rr: 0.5,
		},
		{
			// The cut-off drops d2: DCG@2 = 2/log2(3); IDCG@2 as above.
			// Recall@2 = 1/2.
			name: "cut at 2", ranking: []string{"d3", "d1", "d2"}, rel: map[string]int{"d1": 2, "d2": 1}, k: 2,
			ndcg: (2 / log2of3) / (2 + 1/log2of3), recall: 0.5, rr: 0.5,
		},
		{
			// The ideal holds every judged relevant doc, retrieved or not:
			// DCG = 1/log2(2) = 1; IDCG = 3 + 1/log2(3) + 1/log2(4) = 4.1309298.
			name: "ideal from all judged", ranking: []string{"b", "x"}, rel: map[string]int{"a": 3, "b": 1, "c": 1}, k: 10,
			ndcg: 1 / (3 + 1/log2of3 + 0.5), recall: 1.0 / 3, rr: 1,
		},
		{
			// Twelve relevant, ten retrieved, all relevant: the ideal is cut
			// at 10 too, so nDCG@10 = 1, while Recall@10 = 10/12.
			name: "more relevant than k", ranking: ids("r", 1, 10), rel: twelve, k: 10,
			ndcg: 1, recall: 10.0 / 12, rr: 1,
		},
		{
			// Relevant doc at rank 3 with k = 2: nothing counts.
			name: "relevant below the cut", ranking: []string{"x", "y", "a"}, rel: map[string]int{"a": 1}, k: 2,
		},
		{
			// Same at k = 3: DCG = 1/log2(4) = 0.5, IDCG = 1.
			name: "relevant at the cut", ranking: []string{"x", "y", "a"}, rel: map[string]int{"a": 1}, k: 3,
			ndcg: 0.5, recall: 1, rr: 1.0 / 3,
		},
		{
			// A grade of 0 is not relevant: only b at rank 2 gains.
			name: "grade zero", ranking: []string{"a", "b"}, rel: map[string]int{"a": 0, "b": 1}, k: 10,
			ndcg: 1 / log2of3, recall: 1, rr: 0.5,
		},
		{
			name: "nothing retrieved", ranking: nil, rel: map[string]int{"a": 1}, k: 10,
		},
		{
			name: "nothing relevant", ranking: []string{"a"}, rel: map[string]int{}, k: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranking, tt.rel, tt.k); !near(got, tt.ndcg) {
				t.Errorf("NDCG@%d = %.16f, want %.16f", tt.k, got, tt.ndcg)
			}
			if got := Recall(tt.ranking, tt.rel, tt.k); !near(got, tt.recall) {
				t.Errorf("Recall@%d = %.16f, want %.16f", tt.k, got, tt.recall)
			}
			if got := ReciprocalRank(tt.ranking, tt.rel, tt.k); !near(got, tt.rr) {
				t.Errorf("ReciprocalRank@%d = %.16f, want %.16f", tt.k, got, tt.rr)
			}
		})
	}
}

func TestRecallAndMRRDepth(t *testing.T) {
	ranking := make([]string, 150)
	for i := range ranking {
		ranking[i] = fmt.Sprintf("x%d", i+1)
	}
	rank := func(r int, id string) []string {
		out := append([]string(nil), ranking...)
		out[r-1] = id
		return out
	}
	rel := map[string]int{"a": 1, "b": 1}
	// a at rank 50, b at rank 101: Recall@10 = 0, Recall@100 = 1/2.
	run := rank(50, "a")
	run[100] = "b"
	s := scoreIDs(run, rel)
	if s.Recall10 != 0 || s.Recall100 != 0.5 || s.MRR10 != 0 || s.NDCG10 != 0 {
		t.Errorf("a@50, b@101: %+v, want only Recall@100 = 0.5", s)
	}
	// First relevant at rank 10: RR = 1/10; at rank 11: 0.
	if got := scoreIDs(rank(10, "a"), rel).MRR10; got != 0.1 {
		t.Errorf("MRR@10 with a@10 = %v, want 0.1", got)
	}
	if got := scoreIDs(rank(11, "a"), rel).MRR10; got != 0 {
		t.Errorf("MRR@10 with a@11 = %v, want 0", got)
	}
}

func TestOrderTies(t *testing.T) {
	// trec_eval: descending score, ties by descending doc ID; a repeated
	// doc keeps its first occurrence.
	run := []Ranked{{"a", 1}, {"b", 2}, {"c", 2}, {"b", 0.5}, {"d", 3}}
	want := []Ranked{{"d", 3}, {"c", 2}, {"b", 2}, {"a", 1}}
	if got := Order(run); !reflect.DeepEqual(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	if run[0].DocID != "a" {
		t.Error("Order modified its input")
	}
	// The system put b first, but b and c tie, so trec_eval reads c first:
	// b is at rank 2. nDCG = 1/log2(3), MRR = 1/2.
	s := Score([]Ranked{{"b", 2}, {"c", 2}}, map[string]int{"b": 1})
	if !near(s.NDCG10, 1/log2of3) || s.MRR10 != 0.5 || s.Recall10 != 1 {
		t.Errorf("Score with a tie = %+v, want nDCG %.6f, MRR 0.5, Recall 1", s, 1/log2of3)
	}
}

func TestHit(t *testing.T) {
	rel := map[string]int{"p2": 2, "p1": 1}
	tests := []struct {
		name       string
		ranking    []string
		hit1, hit5 float64
	}{
		{"best page first", []string{"p2", "x", "y"}, 1, 1},
		{"a page that also answers first", []string{"p1", "p2"}, 1, 1},
		{"relevant at rank 5", []string{"a", "b", "c", "d", "p1"}, 0, 1},
		{"relevant at rank 6", []string{"a", "b", "c", "d", "e", "p2"}, 0, 0},
		{"nothing retrieved", nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scoreIDs(tt.ranking, rel)
			if s.Hit1 != tt.hit1 || s.Hit5 != tt.hit5 {
				t.Errorf("hit@1 %v, hit@5 %v; want %v, %v", s.Hit1, s.Hit5, tt.hit1, tt.hit5)
			}
		})
	}
	if got := Hit([]string{"a"}, map[string]int{"a": 0}, 5); got != 0 {
		t.Errorf("grade 0 at rank 1: hit %v, want 0", got)
	}
}
