package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// A budgeted search stays within its budget, counted as the chunker
// counts, starts with the section an unbudgeted search ranks first, and
// fills what is left with the sections around its hits.
func TestSearchWithATokenBudget(t *testing.T) {
	root := "../../../shared/corpora/openclaw-docs/concepts"
	files, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil || len(files) < 10 {
		t.Skipf("the openclaw docs are not beside the checkout (%v)", err)
	}
	e := NewEngine(Limits{Tokens: chunker.EstimateTokens})
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		cs, err := chunker.Split(rel, b, chunker.Options{})
		if err != nil {
			continue
		}
		set := &contract.ChunkSet{Repo: "docs", Path: rel, FileSeq: uint64(i + 1), Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: cs}
		e.Apply(contract.DocKey("docs", rel), indexer.BuildDoc(set, e.Analyzer()), uint64(i+1))
	}
	cost := func(repo, path string, heading []string, text string) int {
		return chunker.EstimateTokens(repo+" "+path+" "+strings.Join(heading, " ")) + chunker.EstimateTokens(text)
	}
	for _, q := range []string{"configure a fallback model chain", "how does session compaction work", "sandbox network access"} {
		plain, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 10})
		if err != nil || len(plain.Hits) == 0 {
			t.Fatalf("%q: %v", q, err)
		}
		for _, budget := range []int{200, 1000, 4000} {
			r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 10, MaxTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Hits) == 0 || r.Hits[0].ChunkID != plain.Hits[0].ChunkID {
				t.Errorf("%q within %d: first hit %+v, want the best section %s", q, budget, r.Hits, plain.Hits[0].ChunkID)
				continue
			}
			sum := 0
			for _, h := range r.Hits {
				sum += cost(h.Repo, h.Path, h.HeadingPath, h.Content)
				if h.Content == "" {
					t.Errorf("%q within %d: hit %s without its text", q, budget, h.ChunkID)
				}
			}
			for _, c := range r.Context {
				sum += cost(c.Repo, c.Path, c.HeadingPath, c.Text)
			}
			if sum != r.Tokens || r.Tokens > budget {
				t.Errorf("%q within %d: reply says %d tokens, holds %d", q, budget, r.Tokens, sum)
			}
			if budget == 4000 && (r.Tokens < 2000 || len(r.Context) == 0) {
				t.Errorf("%q within 4000: only %d tokens, %d context sections: the budget is not filled", q, r.Tokens, len(r.Context))
			}
			t.Logf("%q within %d: %d hits, %d context sections, %d tokens", q, budget, len(r.Hits), len(r.Context), r.Tokens)
		}
	}
}

// The best section alone over the budget is cut at a paragraph, and a
// code block is not cut in half.
func TestCutToTokens(t *testing.T) {
	e := NewEngine(Limits{Tokens: chunker.EstimateTokens})
	text := "First paragraph about the gateway.\n\nSecond paragraph:\n\n    openclaw gateway run --port 18789\n    openclaw gateway status\n\nThird paragraph."
	for n := 1; n <= chunker.EstimateTokens(text); n++ {
		got := e.cutToTokens(text, n)
		if got == "" {
			continue
		}
		if chunker.EstimateTokens(got) > n {
			t.Errorf("cut to %d tokens costs %d: %q", n, chunker.EstimateTokens(got), got)
		}
		if strings.Contains(got, "--port 18789") && !strings.Contains(got, "gateway status") && got != text {
			t.Errorf("cut to %d tokens splits the code block: %q", n, got)
		}
	}
}

// A fenced code block is cut whole or not at all.
func TestCutToTokensKeepsFencesWhole(t *testing.T) {
	e := NewEngine(Limits{Tokens: chunker.EstimateTokens})
	text := "Run the gateway:\n\n```sh\nopenclaw gateway run --port 18789\n\nopenclaw gateway status\n```\n\nThen check the logs."
	for n := 1; n <= chunker.EstimateTokens(text); n++ {
		got := e.cutToTokens(text, n)
		if strings.Count(got, "```")%2 != 0 {
			t.Errorf("cut to %d tokens leaves a fence open: %q", n, got)
		}
		if strings.Contains(got, "--port 18789") && !strings.Contains(got, "gateway status") {
			t.Errorf("cut to %d tokens splits the fenced block: %q", n, got)
		}
	}
}
