package engine

import (
	"math"
	"strings"

	"github.com/knowhub/knowhub/internal/search"
)

// dampCJK reweighs the CJK bigrams of terms, the analyzed words of the
// query q, by p.CJKDamp and p.CJKRunPower (see PageScoring), their typo
// expansions with them. A query without CJK text is left as it is.
func (e *Engine) dampCJK(terms []search.Term, q string, p PageScoring) {
	if p.CJKDamp <= 0 && p.CJKRunPower <= 0 || !hasCJK(q) {
		return
	}
	weight := make(map[string]float64)
	for _, run := range strings.FieldsFunc(stripFraming(q), func(r rune) bool { return !isCJKRune(r) }) {
		bigrams := e.an.QueryTerms(run)
		w := (1 - p.CJKDamp) * math.Pow(float64(max(len(bigrams), 1)), -p.CJKRunPower)
		for _, b := range bigrams {
			if _, ok := weight[b]; !ok {
				weight[b] = w
			}
		}
	}
	groups := make(map[int]float64)
	for _, t := range terms {
		if w, ok := weight[t.Text]; ok && t.Weight == 1 {
			groups[t.Group] = w
		}
	}
	for i := range terms {
		if w, ok := groups[terms[i].Group]; ok {
			terms[i].Weight *= w
		}
	}
}
