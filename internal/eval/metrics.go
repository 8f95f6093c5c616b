package eval

import (
	"math"
	"sort"
)

// Ranked is one retrieved document of a run.
type Ranked struct {
	DocID string
	Score float64
}

// Order puts a run in the order trec_eval reads it: by descending score,
// ties by descending doc ID (trec_eval compares document numbers with
// strcmp, larger first). Only the first occurrence of a doc ID is kept,
// where trec_eval would reject the run. The rank a system gave is ignored,
// as trec_eval ignores the rank column, so figures computed here match
// trec_eval run on the file WriteRun writes. run is not modified.
func Order(run []Ranked) []Ranked {
	out := make([]Ranked, 0, len(run))
	seen := make(map[string]bool, len(run))
	for _, r := range run {
		if !seen[r.DocID] {
			seen[r.DocID] = true
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].DocID > out[j].DocID
	})
	return out
}

// NDCG returns nDCG@k of ranking as trec_eval's ndcg_cut: the gain of a
// document is its grade in rel (absent means 0), discounted by log2(rank+1);
// the ideal ranking orders every judged relevant document by grade, whether
// retrieved or not. It is 0 when rel holds no positive grade.
func NDCG(ranking []string, rel map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranking[:min(k, len(ranking))] {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var idcg float64
	for i, g := range grades[:min(k, len(grades))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall returns Recall@k: the share of rel's relevant documents (grade
// > 0) found in the first k of ranking. It is 0 when none is relevant.
func Recall(ranking []string, rel map[string]int, k int) float64 {
	relevant := 0
	for _, g := range rel {
		if g > 0 {
			relevant++
		}
	}
	if relevant == 0 {
		return 0
	}
	found := 0
	for _, id := range ranking[:min(k, len(ranking))] {
		if rel[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(relevant)
}

// ReciprocalRank returns 1/r for the rank r of the first relevant document
// of ranking when r <= k, and 0 otherwise; its mean is MRR@k.
func ReciprocalRank(ranking []string, rel map[string]int, k int) float64 {
	for i, id := range ranking[:min(k, len(ranking))] {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Hit returns 1 when one of the first k of ranking is relevant (grade >
// 0) and 0 otherwise; its mean is hit@k, the share of queries answered in
// the first k. On a Markdown folder, where a page stands for its best
// section, it is the page-level hit: a section of a relevant page was
// returned in the first k pages.
func Hit(ranking []string, rel map[string]int, k int) float64 {
	if ReciprocalRank(ranking, rel, k) > 0 {
		return 1
	}
	return 0
}

// Scores are one query's figures, or their means over queries.
type Scores struct {
	NDCG10    float64 `json:"ndcg@10"`
	Recall10  float64 `json:"recall@10"`
	Recall100 float64 `json:"recall@100"`
	MRR10     float64 `json:"mrr@10"`
	Hit1      float64 `json:"hit@1"`
	Hit5      float64 `json:"hit@5"`
}

// add adds o's figures to s.
func (s *Scores) add(o Scores) {
	s.NDCG10 += o.NDCG10
	s.Recall10 += o.Recall10
	s.Recall100 += o.Recall100
	s.MRR10 += o.MRR10
	s.Hit1 += o.Hit1
	s.Hit5 += o.Hit5
}

// scale multiplies s's figures by f.
func (s *Scores) scale(f float64) {
	s.NDCG10 *= f
	s.Recall10 *= f
	s.Recall100 *= f
	s.MRR10 *= f
	s.Hit1 *= f
	s.Hit5 *= f
}

// Score computes a query's figures from its run, which it orders first
// (see Order).
func Score(run []Ranked, rel map[string]int) Scores {
	ordered := Order(run)
	ids := make([]string, len(ordered))
	for i, r := range ordered {
		ids[i] = r.DocID
	}
	return scoreIDs(ids, rel)
}

func scoreIDs(ids []string, rel map[string]int) Scores {
	return Scores{
		NDCG10:    NDCG(ids, rel, 10),
		Recall10:  Recall(ids, rel, 10),
		Recall100: Recall(ids, rel, 100),
		MRR10:     ReciprocalRank(ids, rel, 10),
		Hit1:      Hit(ids, rel, 1),
		Hit5:      Hit(ids, rel, 5),
	}
}
