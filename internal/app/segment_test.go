package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/query"
)

// knowhub up keeps its replica's segment in the data directory and
// restarts from it: files edited, deleted and added while it was stopped
// are searchable as they now are, and nothing deleted comes back.
func TestUpRestartsFromItsSegment(t *testing.T) {
	docs, dataDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# Alpha\n\nThe gateway restarts cleanly.\n")
	writeFile(t, filepath.Join(docs, "b.md"), "# Beta\n\nObsolete words about zeppelins.\n")
	writeFile(t, filepath.Join(docs, "c.md"), "# Gamma\n\nRetention keeps the last value.\n")
	segPath := filepath.Join(dataDir, "segments", query.SegmentFile)
	run := func(check func(nc *nats.Conn)) string {
		t.Helper()
		cfg := testConfig(config.Repository{Name: "docs", Path: docs})
		cfg.DataDir = dataDir
		cfg.NATS.Listen = "127.0.0.1:-1"
		cfg.NATS.EmbeddedAuth = config.EmbeddedAuthNone
		var out, logs natstest.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Up(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)), &out, "knowhub") }()
		natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "search with:") })
		url := regexp.MustCompile(`nats://127\.0\.0\.1:\d+`).FindString(out.String())
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		check(nc)
		nc.Close()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// A clean stop leaves a segment of everything applied.
		if _, err := os.Stat(segPath); err != nil {
			t.Errorf("after a clean stop: %v", err)
		}
		return logs.String()
	}
	first := func(nc *nats.Conn) {
		if r := searchDocs(t, nc, contract.SearchRequest{Query: "zeppelins"}); len(r.Hits) != 1 || r.Hits[0].Path != "b.md" {
			t.Errorf("first start: zeppelins finds %+v", r.Hits)
		}
	}
	if logs := run(first); !strings.Contains(logs, "no index segment yet") {
		t.Errorf("first start, logs:\n%s", logs)
	}
	// While up is stopped: one file edited, one deleted, one added.
	writeFile(t, filepath.Join(docs, "a.md"), "# Alpha\n\nThe gateway restarts in two seconds.\n")
	if err := os.Remove(filepath.Join(docs, "b.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(docs, "d.md"), "# Delta\n\nThe quasar operator installs itself.\n")
	second := func(nc *nats.Conn) {
		for q, want := range map[string]string{"zeppelins": "", "cleanly": "", "two seconds": "a.md", "quasar operator": "d.md", "retention": "c.md"} {
			var paths []string
			// The watcher's changes reach the index after "search with:"
			// only if they were not caught up: wait for each.
			natstest.WaitFor(t, 10*time.Second, "the index to reflect "+q, func() bool {
				paths = paths[:0]
				for _, h := range searchDocs(t, nc, contract.SearchRequest{Query: q}).Hits {
					paths = append(paths, h.Path)
				}
				if want == "" {
					return len(paths) == 0
				}
				return len(paths) == 1 && paths[0] == want
			})
		}
	}
	if logs := run(second); !strings.Contains(logs, "index segment loaded") || !strings.Contains(logs, "from_segment=true") {
		t.Errorf("restart, logs:\n%s", logs)
	}
}
