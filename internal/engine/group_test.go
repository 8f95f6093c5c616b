package engine

import (
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// engineWithChunked indexes pages as the pipeline does: cut into sections
// by the chunker.
func engineWithChunked(t *testing.T, pages map[string]string) *Engine {
	t.Helper()
	e := NewEngine(Limits{})
	seq := uint64(0)
	for path, text := range pages {
		seq++
		cs, err := chunker.Split(path, []byte(text), chunker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		set := &contract.ChunkSet{Repo: "r", Path: path, FileSeq: seq, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: cs}
		e.Apply(contract.DocKey("r", path), indexer.BuildDoc(set, e.Analyzer()), seq)
	}
	return e
}

// With group=pages each page comes once, at its best section, and the
// pages keep the order of their best sections.
func TestSearchGroupPages(t *testing.T) {
	e := engineWithChunked(t, map[string]string{
		"telegram.md": "# Telegram\n\nConnect a Telegram bot.\n\n## Bot token\n\nThe Telegram bot token.\n\n## Groups\n\nTelegram groups and the bot.\n",
		"faq.md":      "# FAQ\n\nOne line on a Telegram bot.\n",
	})
	sections, err := e.SearchDocs(contract.SearchRequest{Query: "telegram bot", TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	perPage := map[string]int{}
	for _, h := range sections.Hits {
		perPage[h.Path]++
	}
	if perPage["telegram.md"] < 2 {
		t.Fatalf("sections: telegram.md has %d hits, want several: %+v", perPage["telegram.md"], sections.Hits)
	}
	pages, err := e.SearchDocs(contract.SearchRequest{Query: "telegram bot", TopK: 10, Group: contract.GroupPages})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range pages.Hits {
		got = append(got, h.Path)
	}
	var want []string
	seen := map[string]bool{}
	for _, h := range sections.Hits {
		if !seen[h.Path] {
			seen[h.Path] = true
			want = append(want, h.Path)
			if pages.Hits[len(want)-1].ChunkID != h.ChunkID {
				t.Errorf("page %s: hit %s, want its best section %s", h.Path, pages.Hits[len(want)-1].ChunkID, h.ChunkID)
			}
		}
	}
	if len(got) != len(want) || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("pages %q, want %q", got, want)
	}
	if _, err := e.SearchDocs(contract.SearchRequest{Query: "telegram", Group: "chapters"}); err == nil {
		t.Error("group chapters: no error")
	}
}
