package indexer

import (
	"reflect"
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
)

// fieldTerms returns a compact chunk's term frequencies by field, checking
// that each field's vocabulary indexes ascend.
func fieldTerms(t *testing.T, doc *contract.IndexDoc, c contract.IndexChunk) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, f := range c.Fields {
		if !slices.IsSorted(f.Terms) {
			t.Errorf("chunk %s field %s: indexes not ascending: %v", c.ID, f.Field, f.Terms)
		}
		out[f.Field] = map[string]int{}
		for k, id := range f.Terms {
			out[f.Field][doc.Vocab[id]] = int(f.TFs[k])
		}
	}
	return out
}

func TestBuildDocIsCompactAndSharesFrontMatter(t *testing.T) {
	an := analysis.New()
	cs := &contract.ChunkSet{Repo: "docs", Path: "models.md", FileSeq: 3, Chunks: []contract.Chunk{
		{ID: "a", Title: "Model failover", Summary: "Fallback chains", HeadingPath: []string{"Models"}, Text: "Configure models, then models again."},
		{ID: "b", Title: "Model failover", Summary: "Fallback chains", HeadingPath: []string{"Models", "Fallbacks"}, Text: "A fallback chain."},
		{ID: "c", Title: "Model failover", HeadingPath: []string{"See also"}, Text: ""},
	}}
	doc := BuildDoc(cs, an)
	if distinct := slices.Compact(slices.Sorted(slices.Values(doc.Vocab))); len(distinct) != len(doc.Vocab) {
		t.Fatalf("vocabulary not distinct: %q", doc.Vocab)
	}
	for _, c := range doc.Chunks {
		for _, f := range c.Fields {
			if !slices.IsSorted(f.Terms) || len(slices.Compact(slices.Clone(f.Terms))) != len(f.Terms) {
				t.Errorf("chunk %s field %s: terms not ascending: %v", c.ID, f.Field, f.Terms)
			}
		}
	}
	for _, c := range doc.Chunks {
		names := []string{}
		for _, f := range c.Fields {
			names = append(names, f.Field)
		}
		if !slices.IsSorted(names) {
			t.Errorf("chunk %s fields out of order: %v", c.ID, names)
		}
	}
	want := []map[string]map[string]int{
		{"body": {"configur": 1, "model": 2}, "heading": {"model": 1}, "summary": {"fallback": 1, "chain": 1}, "title": {"model": 1, "failov": 1}},
		{"body": {"fallback": 1, "chain": 1}, "heading": {"model": 1, "fallback": 1}, "summary": {"fallback": 1, "chain": 1}, "title": {"model": 1, "failov": 1}},
		{"heading": {"see": 1, "also": 1}, "title": {"model": 1, "failov": 1}},
	}
	for i, c := range doc.Chunks {
		if got := fieldTerms(t, doc, c); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("chunk %s terms %v\nwant %v", c.ID, got, want[i])
		}
	}
	if doc.Chunks[2].Boost == 0 {
		t.Error(`a "See also" section is not demoted`)
	}
	// The compact document survives the KH_INDEX codec unchanged.
	b, err := contract.EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := contract.DecodeIndexDoc(b); err != nil || !reflect.DeepEqual(got, doc) {
		t.Errorf("codec round trip: %v\n got %+v\nwant %+v", err, got, doc)
	}
}
