package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A node answers NATS searches in parallel up to query.concurrency: that
// many searches waiting for a write (min_seq) are inside their handlers at
// once, query.queue more wait their turn, and the next read is refused at
// once with a 503 overload error. When the write is indexed, every waiting
// search is answered.
func TestNATSSearchesRunInParallelUpToConcurrency(t *testing.T) {
	const concurrency, queue = 3, 2
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Alpha\n\nThe first page.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.HTTP.Listen = config.HTTPOff
	cfg.Watcher.DebounceMS = 20
	cfg.Query.Concurrency, cfg.Query.Queue = concurrency, queue
	cfg.Repositories = []config.Repository{{Name: "docs", Path: dir, Priority: 10, Type: contract.RepoCore, Glob: config.DefaultGlob}}
	node, wctx := runDocsNode(t, srv, cfg)
	st, err := srv.JS.Stream(wctx, contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	next := st.CachedInfo().State.LastSeq + 1

	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	inbox := nats.NewInbox()
	var mu sync.Mutex
	got := map[string]*nats.Msg{}
	sub, err := client.Subscribe(inbox+".*", func(m *nats.Msg) {
		mu.Lock()
		got[m.Subject[len(inbox)+1:]] = m
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	answered := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }

	body, _ := json.Marshal(contract.SearchRequest{Query: "beta", MinSeq: next})
	send := func(i int) {
		t.Helper()
		if err := client.PublishRequest(contract.SubjectSearchDocs, inbox+"."+strconv.Itoa(i), body); err != nil {
			t.Fatal(err)
		}
	}
	for i := range concurrency {
		send(i)
	}
	natstest.WaitFor(t, 10*time.Second, "every worker inside a search at once", func() bool {
		return node.API.Running() == concurrency
	})
	for i := range queue {
		send(concurrency + i)
	}
	natstest.WaitFor(t, 10*time.Second, "the queue to fill", func() bool { return node.API.Queued() == queue })

	over, err := client.Request(contract.SubjectStats, nil, 10*time.Second)
	if err != nil {
		t.Fatalf("a read beyond the queue got no reply: %v", err)
	}
	if code := over.Header.Get(micro.ErrorCodeHeader); code != "503" {
		t.Fatalf("a read beyond the queue: code %q (%q), want 503", code, over.Data)
	}
	if answered() != 0 {
		t.Fatalf("%d searches answered before their write", answered())
	}

	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# Beta\n\nThe second page.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 20*time.Second, "every search answered", func() bool { return answered() == concurrency+queue })
	for id, m := range got {
		var resp contract.SearchResponse
		if e := m.Header.Get(micro.ErrorHeader); e != "" {
			t.Errorf("search %s: %s", id, e)
		} else if err := json.Unmarshal(m.Data, &resp); err != nil || resp.Total == 0 {
			t.Errorf("search %s: %d hits, %v", id, resp.Total, err)
		}
	}
}
