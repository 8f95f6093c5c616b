package eval

import (
	"os"
	"testing"
)

// Chinese questions must find their page in the top 5 of the Chinese
// OpenClaw docs: CJK text is indexed as bigrams, so no dictionary is needed.
func TestChineseQuestionsFindTheirPage(t *testing.T) {
	const docs = "../../../shared/corpora/openclaw-docs-zh-CN"
	if _, err := os.Stat(docs); err != nil {
		t.Skip("Chinese corpus not available")
	}
	queries, err := LoadQueries("testdata/zh-cn/queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := LoadQrels("testdata/zh-cn/qrels.tsv")
	if err != nil {
		t.Fatal(err)
	}
	col, err := IndexMarkdown(t.Context(), docs, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		hits, err := col.Search(q.Text, 5)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		var got []string
		for _, h := range hits {
			got = append(got, h.DocID)
			if qrels[q.ID][h.DocID] > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %q: top 5 %v lacks %v", q.ID, q.Text, got, qrels[q.ID])
		}
	}
}
