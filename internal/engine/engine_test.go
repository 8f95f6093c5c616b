package engine

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// engineWith indexes pages (path → Markdown-free text with a heading path
// "Title > Section") into a fresh engine.
func engineWith(t testing.TB, pages map[string]string) *Engine {
	t.Helper()
	e := NewEngine(Limits{})
	seq := uint64(0)
	for path, text := range pages {
		seq++
		cs := &contract.ChunkSet{Repo: "r", Path: path, FileSeq: seq, Meta: contract.RepoMeta{Type: contract.RepoCore},
			Chunks: []contract.Chunk{{ID: "c" + fmt.Sprint(seq), HeadingPath: []string{strings.TrimSuffix(path, ".md")}, Title: path, Text: text}}}
		e.Apply(contract.DocKey("r", path), indexer.BuildDoc(cs, e.Analyzer()), seq)
	}
	return e
}

func hitPaths(r *contract.SearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

func TestPhrasesAreHonoured(t *testing.T) {
	e := engineWith(t, map[string]string{
		"a.md": "Set the model fallback chain in the config file.",
		"b.md": "A chain of tools can fall back to another model.",
		"c.md": "The fallback model is used when the primary one fails.",
	})
	r, err := e.SearchDocs(contract.SearchRequest{Query: `"fallback model"`})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hitPaths(r), ","); got != "c.md" {
		t.Errorf(`"fallback model" → %s, want only c.md`, got)
	}
	r, _ = e.SearchDocs(contract.SearchRequest{Query: `fallback model`})
	if len(r.Hits) < 2 {
		t.Errorf("unquoted query should match more pages: %v", hitPaths(r))
	}
	// A quoted phrase with a stop word matches its own words.
	r, _ = e.SearchDocs(contract.SearchRequest{Query: `"chain in the config"`})
	if got := strings.Join(hitPaths(r), ","); got != "a.md" {
		t.Errorf(`"chain in the config" → %s, want only a.md`, got)
	}
}

func TestProximityPrefersCloseTerms(t *testing.T) {
	filler := strings.Repeat("unrelated words about other matters entirely. ", 30)
	e := engineWith(t, map[string]string{
		"far.md":   "To restart run the command. " + filler + filler + " The gateway.",
		"close.md": filler + " To restart the gateway run the command. " + filler,
	})
	r, _ := e.SearchDocs(contract.SearchRequest{Query: "restart gateway"})
	if len(r.Hits) != 2 || r.Hits[0].Path != "close.md" {
		t.Errorf("restart gateway → %v, want close.md first", hitPaths(r))
	}
	if r.Hits[0].Score < r.Hits[1].Score {
		t.Errorf("scores not descending: %v", r.Hits)
	}
}

func TestTypoToleranceKeepsExactFirst(t *testing.T) {
	e := engineWith(t, map[string]string{
		"exact.md": "Configure the heartbeat interval for every gateway session.",
		"typo.md":  "Configure the heartbeet interval for every gateway session.",
	})
	r, _ := e.SearchDocs(contract.SearchRequest{Query: "heartbeat"})
	if got := strings.Join(hitPaths(r), ","); got != "exact.md" {
		t.Errorf("heartbeat → %v, want only the exact match", got)
	}
	r, _ = e.SearchDocs(contract.SearchRequest{Query: "hearbeat"})
	if got := strings.Join(hitPaths(r), ","); got != "exact.md,typo.md" {
		t.Errorf("hearbeat → %v, want the closer correction first", got)
	}
}

func TestHostileQueriesAreSearchedOrRejectedClearly(t *testing.T) {
	e := engineWith(t, map[string]string{"a.md": "echo the input back"})
	for _, q := range []string{"echo:", "ripgrep~1", `"unbalanced`, "(((", "a AND OR NOT", "*", "🙂", strings.Repeat("x ", 2000)} {
		if _, err := e.SearchDocs(contract.SearchRequest{Query: q}); err != nil {
			t.Errorf("query %.30q: %v", q, err)
		}
	}
	for _, q := range []string{"", "   ", strings.Repeat("x", MaxQueryBytes+1), "bad \xff utf8"} {
		if _, err := e.SearchDocs(contract.SearchRequest{Query: q}); err == nil {
			t.Errorf("query %.30q accepted", q)
		}
	}
}

func FuzzSearchDocs(f *testing.F) {
	e := engineWith(f, map[string]string{
		"a.md": "Configure a fallback model chain for the gateway.",
		"b.md": "配置 TypeScript 项目 and ToolSearch with create_issue.",
		"c.md": "ไดเรกทอรีนี้ดูแลการเขียนเอกสาร ท\u0e4d\u0e32งาน ພາສາລາວ ភាសា",
	})
	for _, s := range []string{"fallback", `"model chain"`, "配置", "echo:", "ripgrep~1", `"`, "create_issue --dry-run", "เอกสาร", "ทำงาน ลาว"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 5})
		if err != nil {
			return // rejected with a reason
		}
		for i, h := range r.Hits {
			if i > 0 && h.Score > r.Hits[i-1].Score {
				t.Fatalf("scores increase for %q", q)
			}
			if !utf8.ValidString(h.Snippet) {
				t.Fatalf("invalid snippet for %q", q)
			}
		}
	})
}

func TestLinkListSectionsDoNotOutrankContent(t *testing.T) {
	e := NewEngine(Limits{})
	seq := uint64(0)
	add := func(path string, chunks ...contract.Chunk) {
		seq++
		cs := &contract.ChunkSet{Repo: "r", Path: path, FileSeq: seq, Chunks: chunks}
		e.Apply(contract.DocKey("r", path), indexer.BuildDoc(cs, e.Analyzer()), seq)
	}
	add("sandbox.md", contract.Chunk{ID: "s1", HeadingPath: []string{"Sandbox", "Network policy"},
		Text: "The sandbox denies outbound connections unless a rule in the policy file allows the host and port. " +
			"Rules are evaluated in order and the first match wins; unmatched traffic is dropped and logged for review. " +
			"Restart the gateway after editing the file so that every agent session picks up the new network rules."})
	add("index.md", contract.Chunk{ID: "i1", HeadingPath: []string{"Overview", "Related"},
		Text: "Sandbox network policy\nSandbox network modes\nNetwork policy reference"})
	r, _ := e.SearchDocs(contract.SearchRequest{Query: "sandbox network policy"})
	if len(r.Hits) != 2 || r.Hits[0].Path != "sandbox.md" {
		t.Errorf("sandbox network policy → %v, want the content before the link list", hitPaths(r))
	}
}
