package api

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine/enginetest"
	"github.com/knowhub/knowhub/internal/kb"
)

// tricky strings: HTML, control characters, invalid UTF-8, the JavaScript
// line separators, quotes and backslashes, scripts beyond ASCII.
var tricky = []string{
	"", "plain", `<script>alert("x") & 'y'</script>`, "tab\tnew\nline\r\x00\x1f\x7f",
	"bad \xff\xfe utf8 \xc3", "sep \u2028 and \u2029", `back\slash "quoted"`,
	"配置回退模型链 🚀 naïve", "…If the **configured** chain…",
}

// TestEncodeReplyMatchesEncodingJSON checks that replies encode exactly as
// encoding/json encodes them, for every reply type the service sends.
func TestEncodeReplyMatchesEncodingJSON(t *testing.T) {
	scores := []float64{0, 1, -2.5, 17.45, 1e-7, 123456789.125, 1e21, 3e-300, math.MaxFloat64, math.SmallestNonzeroFloat64}
	at := time.Date(2026, 11, 30, 17, 1, 22, 123456789, time.FixedZone("x", 3600))
	var values []any
	for i, s := range tricky {
		score := scores[i%len(scores)]
		hit := contract.SearchHit{Collection: "docs", Repo: s, Path: s + ".md", HeadingPath: []string{s, "b"},
			Title: s, ChunkID: s, Score: score, Snippet: s, Seq: uint64(i) << 40, Priority: -i, RepoType: "core"}
		values = append(values,
			&contract.SearchResponse{Query: s, Hits: []contract.SearchHit{hit, {}}, Total: i, TookMicros: int64(i)},
			&contract.SearchResponse{Query: s, Hits: []contract.SearchHit{}, Shadowed: []contract.ShadowedHit{{SearchHit: hit, ShadowedBy: s, Reason: s}}},
			&contract.ToolSearchResponse{Query: s, Hits: []contract.ToolHit{
				{Name: s, Score: score, Description: s, InputSchema: json.RawMessage(`{ "type": "object", "x": "<&>" , "n": [1, 2.50] }`)},
				{Name: "none"},
			}},
			&kb.SearchResponse{Query: s, Prompt: s, Hits: []kb.Hit{{KBEntry: kb.Entry{ID: s, Task: s, Content: s, Types: []string{s},
				CreatedAt: at, UpdatedAt: at.Add(time.Duration(i) * time.Hour)}, Relevance: score, Score: score}}},
			&contract.StatsResponse{Collections: map[string]contract.CollectionStats{"docs": {Sources: i}, s: {Terms: 3}, "a": {}},
				Repos: []contract.RepoStats{{Repo: s}}, Analyzer: s},
			contract.ErrorResponse{Error: s},
			map[string]any{"count": i, "entries": []kb.Entry{{ID: s, CreatedAt: at}}},
		)
	}
	values = append(values, (*contract.SearchResponse)(nil), &contract.SearchResponse{})
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeReply(v)
		if err != nil {
			t.Fatalf("encodeReply(%#v): %v", v, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encodeReply differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
}

// TestEncodeReplyOfSearches compares the encodings of real docs replies.
func TestEncodeReplyOfSearches(t *testing.T) {
	e, queries := enginetest.Load(t, "../../../shared/corpora/openclaw-docs")
	for _, q := range queries[:100] {
		resp, err := e.SearchDocs(contract.SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(resp)
		got, err := encodeReply(resp)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("query %q: encodeReply differs from encoding/json (%v):\n got %s\nwant %s", q, err, got, want)
		}
	}
}
