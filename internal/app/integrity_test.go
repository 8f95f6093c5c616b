package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A healthy restart finds the index matching KH_FILES (a dead-lettered
// file counts as no damage); after garbage is written into the index
// bucket's block file, a restarted node detects that documents are
// missing, logs it, reports it in stats (and so /readyz), and rebuilds.
func TestDamagedIndexStoreIsDetected(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	for i := range 30 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("p%02d.md", i)), fmt.Sprintf("# Page %d\n\nShared words of page %d, with some more text to index.\n", i, i))
	}
	writeFile(t, filepath.Join(dir, "headings.md"), strings.Repeat("# h\n", 20000))
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	srv := startStore(t, store)
	first := runNode(t, srv, cfg)
	ctx := context.Background()
	upsertTools(t, srv.NC, contract.Tool{Name: "weather_lookup", Description: "Current weather and forecast for a city", Type: contract.ToolCore})
	var saved kb.SaveResponse
	if err := call(t, srv.NC, contract.SubjectKBSave, kb.SaveRequest{Task: "rotate the staging certificates",
		Content: "Run certbot renew on the staging proxy before Friday.", Types: []string{"usecase"}, Score: 4}, &saved); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, "the tool and the entry indexed", func() bool {
		return first.Query.Engine().WaitApplied(ctx, contract.CollectionKB, saved.Seq) && first.Query.Engine().Revision() > 0
	})
	if err := WaitCaughtUp(ctx, srv.JS, first.Query.Engine().Revision); err != nil {
		t.Fatal(err)
	}
	if missing, err := MissingDocs(ctx, srv.JS); err != nil || len(missing) != 0 {
		t.Fatalf("healthy store: missing %v, %v", missing, err)
	}
	first.stop()
	srv.NC.Close()
	srv.Shutdown()
	blocks, _ := filepath.Glob(filepath.Join(store, "jetstream", "*", "streams", "KV_"+contract.BucketIndex, "msgs", "*.blk"))
	if len(blocks) == 0 {
		t.Fatal("no block file of the index bucket")
	}
	f, err := os.OpenFile(blocks[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5, 0x5A, 0x00, 0xFF}, 500), st.Size()/3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	srv = startStore(t, store)
	missing, err := MissingDocs(ctx, srv.JS)
	if err != nil || len(missing) == 0 {
		t.Fatalf("damaged store: missing %d, %v; want the lost documents found", len(missing), err)
	}
	t.Logf("2000 bytes of garbage: %d of 30 files lost their document", len(missing))
	node := runNode(t, srv, cfg)
	natstest.WaitFor(t, 10*time.Second, "the damage reported", func() bool {
		return strings.Contains(node.Query.Integrity(), "index store damaged")
	})
	// It heals itself: the index is rebuilt from KH_FILES, every page is
	// searchable again and the problem is cleared.
	natstest.WaitFor(t, 60*time.Second, "the index rebuilt", func() bool {
		return node.Query.Integrity() == ""
	})
	if missing, err := MissingDocs(ctx, srv.JS); err != nil || len(missing) != 0 {
		t.Fatalf("after the rebuild: missing %v, %v", missing, err)
	}
	tools, err := node.Query.Engine().SearchTools(contract.ToolSearchRequest{Query: "weather forecast"})
	if err != nil || len(tools.Hits) == 0 || tools.Hits[0].Name != "weather_lookup" {
		t.Errorf("after the rebuild, tool search: %+v, %v", tools, err)
	}
	entries, err := node.Query.Engine().SearchKB(kb.SearchRequest{Query: "staging certificates", AllScopes: true})
	if err != nil || len(entries.Hits) == 0 || entries.Hits[0].ID != saved.ID {
		t.Errorf("after the rebuild, knowledge search: %+v, %v", entries, err)
	}
	for i := range 30 {
		resp, err := node.Query.Engine().SearchDocs(contract.SearchRequest{Query: fmt.Sprintf("page %d", i), TopK: 50})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range resp.Hits {
			found = found || h.Path == fmt.Sprintf("p%02d.md", i)
		}
		if !found {
			t.Errorf("after the rebuild, p%02d.md is not found", i)
		}
	}
}

// startStore starts a server on store with a connection, the topology
// declared.
func startStore(t *testing.T, store string) *natstest.Server {
	t.Helper()
	ctx := context.Background()
	e, err := broker.StartEmbedded(ctx, broker.EmbeddedConfig{Listen: "127.0.0.1:-1", StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := broker.Connect(broker.ClientConfig{URL: e.ClientURL(), Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.EnsureTopology(ctx, js); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close(); e.Shutdown() })
	return &natstest.Server{Embedded: e, NC: nc, JS: js}
}
