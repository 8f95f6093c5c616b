package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
)

// partialOps answers every search from a partial index.
type partialOps struct{ api.Ops }

var partial = contract.Completeness{Indexing: true}

func (partialOps) SearchDocs(_ context.Context, r contract.SearchRequest) (*contract.SearchResponse, error) {
	return &contract.SearchResponse{Query: r.Query, Hits: []contract.SearchHit{{Repo: "docs", Path: "a.md", ChunkID: "c1", Content: "A."}}, Total: 1, Completeness: partial}, nil
}

func (partialOps) SearchTools(_ context.Context, r contract.ToolSearchRequest) (*contract.ToolSearchResponse, error) {
	return &contract.ToolSearchResponse{Query: r.Query, Completeness: partial}, nil
}

func (partialOps) SearchKB(_ context.Context, r kb.SearchRequest) (*kb.SearchResponse, error) {
	return &kb.SearchResponse{Query: r.Query, Completeness: partial}, nil
}

// The MCP tools pass a partial index on: the structured result says
// indexing, and the text opens with the note.
func TestMCPSearchesSayIndexing(t *testing.T) {
	cs := connect(t, partialOps{})
	for _, tool := range []string{api.ToolSearchDocs, api.ToolSearchTools, api.ToolKBSearch} {
		res := callTool(t, cs, tool, map[string]any{"query": "anything"})
		if got := structured[contract.Completeness](t, res); !got.Indexing {
			t.Errorf("%s: structured result without indexing: true", tool)
		}
		if txt := texts(t, res); len(txt) == 0 || !strings.Contains(txt[0], contract.IndexingNote) {
			t.Errorf("%s: text does not open with %q: %q", tool, contract.IndexingNote, txt)
		}
	}
}
