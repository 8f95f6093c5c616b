package app

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A configured repository folder that does not exist does not stop the
// node: the others are served, and it is indexed once it appears.
func TestMissingRepositoryFolderIsServedWhenItAppears(t *testing.T) {
	srv := natstest.Start(t, "")
	here := t.TempDir()
	writeFile(t, filepath.Join(here, "a.md"), "# Alpha\n\nThe present repository answers.\n")
	later := filepath.Join(t.TempDir(), "later")
	cfg := testConfig(config.Repository{Name: "docs", Path: here}, config.Repository{Name: "later", Path: later})
	cfg.Watcher.MissingRootPollMS = 50
	runNode(t, srv, cfg)
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "present repository answers"}); len(r.Hits) != 1 {
		t.Fatalf("the present repository is not served: %v", paths(r))
	}
	writeFile(t, filepath.Join(later, "b.md"), "# Beta\n\nThe late repository arrives.\n")
	waitSearch(t, srv.NC, "late repository arrives", "the repository that appeared", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
}

// A repository that is no longer configured is removed at start, with a
// log line counting its files; `knowhub repos` lists and removes them.
func TestRemovedRepositoryIsReconciledAway(t *testing.T) {
	srv := natstest.Start(t, "")
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, "a.md"), "# Alpha\n\nKept repository page.\n")
	writeFile(t, filepath.Join(b, "b1.md"), "# Beta one\n\nDropped repository page.\n")
	writeFile(t, filepath.Join(b, "b2.md"), "# Beta two\n\nDropped repository page too.\n")
	writeFile(t, filepath.Join(c, "c.md"), "# Gamma\n\nRemoved by hand.\n")
	all := testConfig(config.Repository{Name: "keep", Path: a}, config.Repository{Name: "dropped", Path: b}, config.Repository{Name: "byhand", Path: c})
	first := runNode(t, srv, all)
	first.stop()
	ctx := t.Context()
	repos, err := ListRepos(ctx, srv.JS)
	if err != nil || len(repos) != 3 {
		t.Fatalf("repos %+v, %v", repos, err)
	}
	logs := &natstest.LogBuffer{}
	if err := Reconcile(ctx, srv.JS, []string{"keep", "byhand"}, slog.New(slog.NewTextHandler(logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "repo=dropped files=2") {
		t.Errorf("no log line counts the removed files:\n%s", logs.String())
	}
	if n, err := RemoveRepo(ctx, srv.JS, "byhand"); err != nil || n != 1 {
		t.Errorf("remove byhand: %d, %v", n, err)
	}
	runNode(t, srv, testConfig(config.Repository{Name: "keep", Path: a}))
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "repository page"}); len(r.Hits) != 1 || r.Hits[0].Repo != "keep" {
		t.Errorf("hits after reconcile: %v, want keep's only", paths(r))
	}
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "removed by hand"}); len(r.Hits) != 0 {
		t.Errorf("a removed repository is served: %v", paths(r))
	}
	repos, _ = ListRepos(ctx, srv.JS)
	if len(repos) != 1 || repos[0] != (RepoFiles{Name: "keep", Files: 1}) {
		t.Errorf("repos after removal: %+v", repos)
	}
}
