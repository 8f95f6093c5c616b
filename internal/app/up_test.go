package app

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

func TestUpServesAndStopsCleanly(t *testing.T) {
	docs := t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# A\n\nThe gateway restarts cleanly.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.DataDir = t.TempDir()
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = "127.0.0.1:0"
	for round := range 2 { // the second run resumes from the data dir
		var out natstest.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Up(ctx, cfg, testLogger(t), &out) }()
		natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "indexed 1 files") })
		for _, want := range []string{"NATS   nats://127.0.0.1:", "HTTP   http://127.0.0.1:", "repo   docs"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("round %d: output lacks %q:\n%s", round, want, out.String())
			}
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: up stopped with %v", round, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("up did not stop within 15s of cancellation")
		}
	}
}

func TestUpNamesTheFlagWhenAPortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig()
	cfg.DataDir = t.TempDir()
	cfg.NATS.Listen = ln.Addr().String()
	err = Up(t.Context(), cfg, testLogger(t), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--nats-listen") {
		t.Errorf("busy NATS port: %v, want an error naming --nats-listen", err)
	}
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = ln.Addr().String()
	err = Up(t.Context(), cfg, testLogger(t), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--http") {
		t.Errorf("busy HTTP port: %v, want an error naming --http", err)
	}
}
