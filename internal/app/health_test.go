package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A worker process that serves no API has its own health and metrics
// listener (knowhub worker STAGE --metrics host:port).
func TestWorkerHealthAndMetrics(t *testing.T) {
	srv := natstest.Start(t, "")
	cfg := config.Default()
	cfg.HTTP.Listen = config.HTTPOff
	ctx, cancel := context.WithCancel(context.Background())
	node, err := NewNode(ctx, cfg, srv.NC, srv.JS, Stages{Chunker: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	addr, err := node.ListenHealth("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	base := "http://" + addr.String()

	get := func(path string) (int, map[string]string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		data, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(data, &body)
		return resp.StatusCode, body
	}
	if code, body := get("/healthz"); code != 200 || body["status"] != "ok" {
		t.Errorf("/healthz: %d %v", code, body)
	}
	if code, body := get("/readyz"); code != 200 || body["status"] != "ready" {
		t.Errorf("/readyz: %d %v", code, body)
	}
	if code, body := get("/api/search"); code != 404 || body["error"] == "" {
		t.Errorf("/api/search on a worker: %d %v, want a JSON 404", code, body)
	}
	// The pipeline as JetStream has it, with the stage's consumer once it
	// exists, and the build.
	natstest.WaitFor(t, 10*time.Second, "the chunker's consumer in the metrics", func() bool {
		_, ok := value(scrape(t, base+"/metrics"), "knowhub_stage_pending_messages", "stage", "chunker")
		return ok
	})
	m := scrape(t, base+"/metrics")
	for _, name := range []string{"knowhub_build_info", "knowhub_stage_dead_letters", "go_goroutines", "process_resident_memory_bytes"} {
		if m[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// Without NATS the worker is alive but not ready.
	srv.Embedded.Shutdown()
	natstest.WaitFor(t, 10*time.Second, "/readyz to fail without NATS", func() bool {
		code, body := get("/readyz")
		return code == 503 && body["error"] != ""
	})
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz without NATS: %d, want 200 (the process is alive)", code)
	}
	cancel()
	<-done
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the listener still answers after the node stopped")
	}
}
