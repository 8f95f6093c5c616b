package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

// startStages runs the given stages on srv until the test ends.
func startStages(t *testing.T, srv *natstest.Server, cfg *config.Config, stages Stages) *Node {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	node, err := NewNode(ctx, cfg, srv.NC, srv.JS, stages, testLogger(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node stopped with %v", err)
		}
	})
	return node
}

// TestSearchesSayIndexingUntilTheInitialSyncIsIndexed holds the indexer
// back, so the node serves from a partial (empty) index, then starts it:
// readiness and every search reply tell the two states apart.
func TestSearchesSayIndexingUntilTheInitialSyncIsIndexed(t *testing.T) {
	srv := natstest.Start(t, "")
	root := t.TempDir()
	for i := range 5 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("page%d.md", i)), fmt.Sprintf("# Page %d\n\nThe zeppelin manual, part %d.\n", i, i))
	}
	cfg := testConfig(config.Repository{Name: "docs", Path: root})
	cfg.HTTP.Listen = "127.0.0.1:0"
	// Everything but the indexer: the initial sync is read and chunked,
	// and nothing is indexed.
	node := startStages(t, srv, cfg, Stages{Watcher: true, Chunker: true, Query: true})
	for _, ch := range []<-chan struct{}{node.Watcher.Ready(), node.API.Ready()} {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatal("node not ready in time")
		}
	}
	base := "http://" + node.HTTPAddr()

	readyz := func() (int, api.Readiness) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rd api.Readiness
		if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, rd
	}
	replies := func() map[string]bool {
		t.Helper()
		out := map[string]bool{}
		out["nats docs"] = searchDocs(t, srv.NC, contract.SearchRequest{Query: "zeppelin"}).Indexing
		var tools contract.ToolSearchResponse
		if err := call(t, srv.NC, contract.SubjectSearchTools, contract.ToolSearchRequest{Query: "zeppelin"}, &tools); err != nil {
			t.Fatal(err)
		}
		out["nats tools"] = tools.Indexing
		var know kb.SearchResponse
		if err := call(t, srv.NC, contract.SubjectSearchKB, kb.SearchRequest{Query: "zeppelin"}, &know); err != nil {
			t.Fatal(err)
		}
		out["nats kb"] = know.Indexing
		var st contract.StatsResponse
		if err := call(t, srv.NC, contract.SubjectStats, struct{}{}, &st); err != nil {
			t.Fatal(err)
		}
		out["nats stats"] = st.Indexing
		var docs contract.SearchResponse
		getJSON(t, base+"/api/docs/search?q=zeppelin", &docs)
		out["http docs"] = docs.Indexing
		getJSON(t, base+"/api/tools/search?q=zeppelin", &tools)
		out["http tools"] = tools.Indexing
		var kh api.KBSearchHTTP
		getJSON(t, base+"/api/knowledge/search?q=zeppelin", &kh)
		out["http kb"] = kh.Indexing
		return out
	}
	code, rd := readyz()
	if code != http.StatusOK || rd.State != api.StateServing || rd.Complete {
		t.Errorf("/readyz during the initial sync: %d %+v, want 200 serving, not complete", code, rd)
	}
	for edge, indexing := range replies() {
		if !indexing {
			t.Errorf("%s: indexing false while nothing is indexed", edge)
		}
	}
	if resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "zeppelin"}); resp.Total != 0 {
		t.Fatalf("the held-back indexer indexed %d sections", resp.Total)
	}

	startStages(t, srv, cfg, Stages{Indexer: true})
	natstest.WaitFor(t, 20*time.Second, "the initial sync indexed", func() bool {
		_, rd := readyz()
		return rd.Complete
	})
	code, rd = readyz()
	if code != http.StatusOK || rd.State != api.StateComplete {
		t.Errorf("/readyz after the initial sync: %d %+v, want 200 complete", code, rd)
	}
	for edge, indexing := range replies() {
		if indexing {
			t.Errorf("%s: indexing true after the initial sync was indexed", edge)
		}
	}
	if resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "zeppelin"}); resp.Total != 5 {
		t.Errorf("%d sections found after the initial sync, want 5", resp.Total)
	}
}

// The page says when its results come from a partial index.
func TestWebPageSaysStillIndexing(t *testing.T) {
	srv := natstest.Start(t, "")
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "page.md"), "# Page\n\nThe zeppelin manual.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: root})
	cfg.HTTP.Listen = "127.0.0.1:0"
	node := startStages(t, srv, cfg, Stages{Watcher: true, Chunker: true, Query: true}) // no indexer
	select {
	case <-node.API.Ready():
	case <-time.After(20 * time.Second):
		t.Fatal("node not ready in time")
	}
	b := page{t: t, ctx: browser(t)}
	b.do("search from a partial index",
		chromedp.Navigate("http://"+node.HTTPAddr()+"/"),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "zeppelin"),
		chromedp.Click(chromedp.CSS("#search-btn")),
		chromedp.WaitVisible(chromedp.CSS("#results li.none")),
		chromedp.WaitVisible(chromedp.CSS("#status-ready")),
	)
	b.screenshot("indexing")
	if s := b.text("#summary"); !strings.Contains(s, contract.IndexingNote) {
		t.Errorf("summary %q does not say %q", s, contract.IndexingNote)
	}
	if s := b.text("#status-ready"); !strings.Contains(s, contract.IndexingNote) {
		t.Errorf("status panel %q does not say %q", s, contract.IndexingNote)
	}
}
