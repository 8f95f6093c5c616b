package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// page is one single-section page of a repository.
type page struct {
	repo, path string
	meta       contract.RepoMeta
	heading    string
	text       string
}

func engineWithPages(t testing.TB, pages ...page) *Engine {
	t.Helper()
	e := NewEngine(Limits{})
	for i, p := range pages {
		seq := uint64(i + 1)
		cs := &contract.ChunkSet{Repo: p.repo, Path: p.path, FileSeq: seq, Meta: p.meta,
			Chunks: []contract.Chunk{{ID: fmt.Sprintf("c%d", seq), HeadingPath: []string{p.heading}, Title: p.heading, Text: p.text}}}
		e.Apply(contract.DocKey(p.repo, p.path), indexer.BuildDoc(cs, e.Analyzer()), seq)
	}
	return e
}

func hitRepos(r *contract.SearchResponse) string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Repo+":"+h.Path)
	}
	return strings.Join(out, ",")
}

// Equal scores are ordered by priority (lower number first), then core
// before extension, whatever the repositories' names.
func TestEqualScoresOrderedByPriority(t *testing.T) {
	core1 := contract.RepoMeta{Priority: 1, Type: contract.RepoCore}
	ext1 := contract.RepoMeta{Priority: 1, Type: contract.RepoExtension}
	prio5 := contract.RepoMeta{Priority: 5, Type: contract.RepoCore}
	// Same length, same query terms: the same BM25 score; the third word
	// of each differs, so they are not near-duplicates.
	e := engineWithPages(t,
		page{"aaa", "a.md", prio5, "Alpha", "gateway reload strategy aardvark"},
		page{"bbb", "b.md", ext1, "Beta", "gateway reload strategy bison"},
		page{"ccc", "c.md", core1, "Gamma", "gateway reload strategy cheetah"},
	)
	r, err := e.SearchDocs(contract.SearchRequest{Query: "gateway reload strategy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 3 || r.Hits[0].Score != r.Hits[2].Score {
		t.Fatalf("want three hits of one score, got %+v", r.Hits)
	}
	if got, want := hitRepos(r), "ccc:c.md,bbb:b.md,aaa:a.md"; got != want {
		t.Errorf("order %s, want %s (priority 1 core, priority 1 extension, priority 5)", got, want)
	}
	if len(r.Shadowed) != 0 {
		t.Errorf("distinct sections shadowed: %+v", r.Shadowed)
	}
}

const modelConfig = "Configure your primary model and fallbacks. The fallback chain determines " +
	"which model to try next when the primary fails. Each fallback must be a plain model ID " +
	"such as minimax/MiniMax-M2.1; auth profiles rotate before the next fallback is tried."

// An extension's copy of a core page under another path is resolved like
// a same-path conflict: the lower priority number wins and the copy is
// reported shadowed with the reason.
func TestNearDuplicateAtOtherPathShadowed(t *testing.T) {
	core := contract.RepoMeta{Priority: 1, Type: contract.RepoCore}
	ext := contract.RepoMeta{Priority: 10, Type: contract.RepoExtension}
	e := engineWithPages(t,
		page{"core-docs", "concepts/model-failover.md", core, "Model failover", modelConfig},
		// The copy repeats the words, so it outscores the original.
		page{"skills", "my-skill/models/fallbacks.md", ext, "Fallback chain", modelConfig + " The fallback chain, the fallback chain."},
		page{"skills", "my-skill/other.md", ext, "Other", "An unrelated note on the fallback chain of cron jobs and their retries."},
	)
	r, err := e.SearchDocs(contract.SearchRequest{Query: "model fallback chain"})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitRepos(r); got != "core-docs:concepts/model-failover.md,skills:my-skill/other.md" &&
		got != "skills:my-skill/other.md,core-docs:concepts/model-failover.md" {
		t.Errorf("hits %s, want the core page and the unrelated note", got)
	}
	if len(r.Shadowed) != 1 || r.Shadowed[0].Path != "my-skill/models/fallbacks.md" {
		t.Fatalf("shadowed %+v, want the copy", r.Shadowed)
	}
	s := r.Shadowed[0]
	if s.ShadowedBy != "core-docs:concepts/model-failover.md#c1" || !strings.Contains(s.Reason, "near-identical content") ||
		!strings.Contains(s.Reason, "priority 1") {
		t.Errorf("shadowed by %q, reason %q", s.ShadowedBy, s.Reason)
	}
}

// Templated pages about different subjects share most words but not the
// rare ones that name the subject: they are not grouped.
func TestTemplatedPagesNotGrouped(t *testing.T) {
	tmpl := "The %s plugin adds the %s provider to OpenClaw. Install it with openclaw plugins install, " +
		"set the API key in the provider config, and pick a %s model as primary or fallback."
	core := contract.RepoMeta{Priority: 1, Type: contract.RepoCore}
	ext := contract.RepoMeta{Priority: 10, Type: contract.RepoExtension}
	e := engineWithPages(t,
		page{"core-docs", "plugins/alibaba.md", core, "Alibaba plugin", fmt.Sprintf(tmpl, "Alibaba", "Alibaba", "Alibaba")},
		page{"ext", "plugins/runway.md", ext, "Runway plugin", fmt.Sprintf(tmpl, "Runway", "Runway", "Runway")},
		page{"core-docs", "misc/a.md", core, "Misc", "Runway, Alibaba and others: a list of names that makes both rarer words common enough."},
	)
	r, err := e.SearchDocs(contract.SearchRequest{Query: "plugin provider install fallback"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Shadowed) != 0 {
		t.Errorf("templated pages grouped: %+v", r.Shadowed)
	}
}

// doc-engine's own conflict case: an extension's copy of a core section at
// another path rewords one clause. With the same file name and heading it
// is a copy and is shadowed; templated pages of one product family in two
// repositories, same name but another subject, are not.
func TestRewordedCopyWithTheSameNameShadowed(t *testing.T) {
	body := "Configure your primary model and fallbacks. The fallback chain determines which model to try next when the primary fails. This is the %s documentation for model configuration."
	core := contract.RepoMeta{Priority: 1, Type: contract.RepoCore}
	ext := contract.RepoMeta{Priority: 1, Type: contract.RepoExtension}
	e := engineWithPages(t,
		page{"docs", "overlap.md", core, "Model Configuration", fmt.Sprintf(body, "authoritative core")},
		page{"skills", "my-skill/overlap.md", ext, "Model Configuration", fmt.Sprintf(body, "extension")},
	)
	r, err := e.SearchDocs(contract.SearchRequest{Query: "model configuration fallback chain"})
	if err != nil {
		t.Fatal(err)
	}
	if hitRepos(r) != "docs:overlap.md" || len(r.Shadowed) != 1 || r.Shadowed[0].Repo != "skills" {
		t.Errorf("hits %s, shadowed %+v; want the core section, the extension's copy shadowed", hitRepos(r), r.Shadowed)
	}
	// Same file name and heading, another subject: both stay.
	tmpl := "The %s channel sends messages to a %s chat. Set the %s bot token and the chat id in the channel config, then restart the gateway."
	e = engineWithPages(t,
		page{"docs", "channels/setup.md", core, "Setup", fmt.Sprintf(tmpl, "Telegram", "Telegram", "Telegram")},
		page{"skills", "discord/setup.md", ext, "Setup", fmt.Sprintf(tmpl, "Discord", "Discord", "Discord")},
	)
	r, err = e.SearchDocs(contract.SearchRequest{Query: "channel bot token chat id"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 2 || len(r.Shadowed) != 0 {
		t.Errorf("templated pages of two subjects: hits %s, shadowed %+v", hitRepos(r), r.Shadowed)
	}
}
