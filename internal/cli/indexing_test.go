package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// Results from a partial index say so; those from the complete one do not.
func TestSearchOutputSaysStillIndexing(t *testing.T) {
	resp := &contract.SearchResponse{Query: "q", Hits: []contract.SearchHit{{Repo: "docs", Path: "a.md"}}, Total: 1}
	var b bytes.Buffer
	printHits(&b, resp, false)
	if strings.Contains(b.String(), contract.IndexingNote) {
		t.Errorf("complete index, yet:\n%s", b.String())
	}
	resp.Indexing = true
	b.Reset()
	printHits(&b, resp, false)
	if !strings.HasPrefix(b.String(), contract.IndexingNote+"\n") {
		t.Errorf("partial index, output does not open with %q:\n%s", contract.IndexingNote, b.String())
	}
}
