package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// A section read back by a hit's id is the section that was found; its
// neighbours and its page come in page order; a removed page is not found.
func TestReadDocs(t *testing.T) {
	page := "# Gateway\n\nRun the gateway on a host.\n\n## Install\n\nInstall it with the script.\n\n## Configure\n\nSet the port in gateway.json.\n\n## Upgrade\n\nUpgrade with the same script.\n"
	e := engineWithChunked(t, map[string]string{"gateway.md": page, "other.md": "# Other\n\nNothing about it.\n"})
	r, err := e.SearchDocs(contract.SearchRequest{Query: "port gateway.json", TopK: 1})
	if err != nil || len(r.Hits) != 1 {
		t.Fatalf("search: %v %+v", err, r)
	}
	hit := r.Hits[0]
	heading := func(s contract.DocsSection) string { return s.HeadingPath[len(s.HeadingPath)-1] }
	got, err := e.ReadDocs(contract.DocsReadRequest{ID: hit.ChunkID})
	if err != nil || len(got.Sections) != 1 || got.Sections[0].ID != hit.ChunkID || heading(got.Sections[0]) != "Configure" || got.Target != 0 {
		t.Fatalf("read the hit's section: %v %+v", err, got)
	}
	if got.Repo != hit.Repo || got.Path != hit.Path || got.PageSections != 4 {
		t.Errorf("section's page: %+v", got)
	}
	near, err := e.ReadDocs(contract.DocsReadRequest{ID: hit.ChunkID, Context: contract.ReadNeighbours})
	if err != nil || len(near.Sections) != 3 || heading(near.Sections[0]) != "Install" || heading(near.Sections[2]) != "Upgrade" || near.Target != 1 {
		t.Errorf("neighbours: %v %+v", err, near)
	}
	whole, err := e.ReadDocs(contract.DocsReadRequest{Repo: hit.Repo, Path: hit.Path})
	var headings []string
	for _, s := range whole.Sections {
		headings = append(headings, heading(s))
	}
	if err != nil || !slices.Equal(headings, []string{"Gateway", "Install", "Configure", "Upgrade"}) || whole.Target != -1 {
		t.Errorf("page: %v %v", err, headings)
	}
	if p, err := e.ReadDocs(contract.DocsReadRequest{ID: hit.ChunkID, Context: contract.ReadPage}); err != nil || len(p.Sections) != 4 || p.Target != 2 {
		t.Errorf("page of a section: %v %+v", err, p)
	}
	// A removed file reads back as not found.
	e.Apply(contract.DocKey(hit.Repo, hit.Path), nil, 100)
	for _, req := range []contract.DocsReadRequest{{ID: hit.ChunkID}, {Repo: hit.Repo, Path: hit.Path}} {
		if _, err := e.ReadDocs(req); !errors.Is(err, ErrNotFound) {
			t.Errorf("read %+v of a removed file: %v, want not found", req, err)
		}
	}
	for _, req := range []contract.DocsReadRequest{{}, {ID: "x", Context: "chapter"}, {Repo: "r", Path: "other.md", Context: contract.ReadNeighbours}} {
		if _, err := e.ReadDocs(req); !errors.Is(err, ErrBadRequest) {
			t.Errorf("read %+v: %v, want a bad request", req, err)
		}
	}
}

func TestListReposAndPages(t *testing.T) {
	e := engineWithChunked(t, map[string]string{
		"a.md": "# Alpha\n\nOne.\n\n## Two\n\nTwo.\n", "b.md": "# Beta\n\nB.\n", "c/d.md": "# Delta\n\nD.\n",
	})
	repos := e.ListRepos()
	if len(repos.Repos) != 1 || repos.Repos[0].Repo != "r" || repos.Repos[0].Files != 3 || repos.Repos[0].Sections != 4 || repos.Repos[0].LastSeq != 3 {
		t.Errorf("repos %+v", repos.Repos)
	}
	first, err := e.ListPages(contract.DocsPagesRequest{Repo: "r", Limit: 2})
	if err != nil || first.Total != 3 || len(first.Pages) != 2 || first.Pages[0].Path != "a.md" || first.Pages[0].Title != "Alpha" || first.Pages[0].Sections != 2 {
		t.Fatalf("first pages: %v %+v", err, first)
	}
	rest, err := e.ListPages(contract.DocsPagesRequest{Repo: "r", Offset: 2, Limit: 2})
	if err != nil || len(rest.Pages) != 1 || rest.Pages[0].Path != "c/d.md" {
		t.Errorf("next pages: %v %+v", err, rest)
	}
	if _, err := e.ListPages(contract.DocsPagesRequest{Repo: "nosuch"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown repository: %v", err)
	}
	if _, err := e.ListPages(contract.DocsPagesRequest{Repo: "r", Limit: 5000}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("limit over the bound: %v", err)
	}
}

// A read hands back the section as written: its code fence and language,
// inline code and links.
func TestReadDocsKeepsMarkdown(t *testing.T) {
	md := "# Run\n\n## Start\n\nStart it with `openclaw gateway run`, see [ports](ports.md):\n\n```sh\nopenclaw gateway run --port 18789\n```\n"
	e := engineWithChunked(t, map[string]string{"run.md": md})
	r, err := e.ReadDocs(contract.DocsReadRequest{Repo: "r", Path: "run.md"})
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, s := range r.Sections {
		all += s.Text
	}
	for _, want := range []string{"```sh\nopenclaw gateway run --port 18789\n```", "`openclaw gateway run`", "[ports](ports.md)"} {
		if !strings.Contains(all, want) {
			t.Errorf("read lacks %q:\n%s", want, all)
		}
	}
}
