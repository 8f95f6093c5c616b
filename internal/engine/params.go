package engine

import (
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// ToolsParams are the default scoring parameters of the tools collection,
// chosen on MetaTool. Every field saturates on its own: a query word found
// in a tool's name and its description counts in both, while a word only
// in the name weighs what it would in the description. Names and keywords
// saturate fast (k1 0.5), descriptions and n-grams slower (1.2); against
// BM25F with the name weighing three descriptions (k1 2.2) this gains
// 0.002 nDCG@10 with the query handling of DefaultScoring. IDF^1.5
// (0.583 against 0.580 under BM25F; 1.25 and 2 score lower) suits verbose
// queries that share common words with many tools.
func ToolsParams() search.Params {
	return search.Params{IDFPower: 1.5, Fields: []search.Field{
		{Name: contract.FieldName, Weight: 1, B: 0.3, K1: 0.5},
		{Name: contract.FieldKeywords, Weight: 1, B: 0.3, K1: 0.5},
		{Name: contract.FieldDescription, Weight: 1, B: 0.15, K1: 1.2},
		{Name: contract.FieldGrams, Weight: 1, B: 0.2, K1: 1.2},
	}}
}

// DocsParams are the default BM25F parameters of the docs collection.
// The learned field holds the words agents found a section with
// (contract.FieldLearned); it has no length normalisation, since its
// length counts transcripts rather than text.
func DocsParams() search.Params {
	return search.Params{K1: 1.2, Fields: []search.Field{
		{Name: contract.FieldTitle, Weight: 1.5, B: 0.3},
		{Name: contract.FieldSummary, Weight: 1.0, B: 0.5},
		{Name: contract.FieldHeading, Weight: 2.5, B: 0.3},
		{Name: contract.FieldBody, Weight: 1.0, B: 0.75},
		{Name: contract.FieldLearned, Weight: LearnedWeight, B: 0},
	}, OutlineField: contract.FieldHeading}
}

// LearnedWeight is the BM25F weight of the learned field, chosen on the
// dev halves of the judged docs sets (eval.TestLearnedWeightOnDev: each
// dev query of the question set teaches its words to the first relevant
// section in its top 10, and the reverse). Asked again, the teaching
// queries gain most at 2 and nothing more above it (symptoms-openclaw
// 0.610 → 0.688 nDCG@10 at 0.5 to 5; questions-openclaw 0.804 → 0.816 at
// 1, 0.825 at 2; questions-nats 0.936 → 0.954 at 1), while the other
// set's queries, whose judged pages mostly differ, move by at most 0.001
// down (openclaw) and 0.010 up (prometheus).
const LearnedWeight = 2.0
