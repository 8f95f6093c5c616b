package app

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// processors asks kh.stats for the GOMAXPROCS the query replica reports.
func processors(t *testing.T, srv *natstest.Server) int {
	t.Helper()
	msg, err := srv.NC.Request(contract.SubjectStats, []byte("{}"), 5*time.Second)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	var st contract.StatsResponse
	if err := json.Unmarshal(msg.Data, &st); err != nil {
		t.Fatal(err)
	}
	return st.Processors
}

func TestIdleNodeAnswersOnOneProcessorAndWorksOnAll(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: there is nothing to lower")
	}
	runtime.SetDefaultGOMAXPROCS()
	all := runtime.GOMAXPROCS(0)
	srv := natstest.Start(t, "")
	docs := t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# Gateway\n\nThe gateway restarts cleanly.\n")
	node := runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: docs}))

	natstest.WaitFor(t, 20*time.Second, "the idle node on one processor", func() bool { return processors(t, srv) == 1 })
	if hits := searchDocs(t, srv.NC, contract.SearchRequest{Query: "gateway restarts"}).Hits; len(hits) != 1 {
		t.Fatalf("search on one processor: %d hits, want 1", len(hits))
	}

	// A change is work: the node takes every processor for it, indexes
	// it, and goes back to one once idle again.
	writeFile(t, filepath.Join(docs, "b.md"), "# Sandbox\n\nThe sandbox isolates tools.\n")
	natstest.WaitFor(t, 20*time.Second, "every processor for the change", func() bool { return processors(t, srv) == all })
	waitSearch(t, srv.NC, "sandbox isolates", "the change indexed", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
	natstest.WaitFor(t, 20*time.Second, "one processor once idle again", func() bool { return processors(t, srv) == 1 })

	// So is a file event a producer publishes to KH_FILES itself, which
	// no watcher of this node saw: the chunker's consumer reports it.
	ev := contract.FileEvent{Schema: 1, Repo: "gateway", Path: "c.md", Meta: contract.RepoMeta{Priority: 1, Type: contract.RepoCore},
		Content: "# Hooks\n\nThe gateway publishes hook events.\n"}
	if _, err := srv.JS.Publish(t.Context(), contract.FileSubject(ev.Repo, ev.Path), mustJSON(t, ev)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 20*time.Second, "every processor for the published file", func() bool { return processors(t, srv) == all })
	waitSearch(t, srv.NC, "publishes hook events", "the published file indexed", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })

	// A node configured to keep them all never lowers, and a stopped
	// node leaves the runtime's default behind.
	node.stop()
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("GOMAXPROCS after the node stopped = %d, want %d", got, all)
	}
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.Query.AllProcessors = true
	kept := runNode(t, natstest.Start(t, ""), cfg)
	if kept.procs.Enabled() {
		t.Fatal("query.allProcessors: the governor is enabled")
	}
}
