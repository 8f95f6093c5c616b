package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunSmallCorpus runs the whole benchmark on a small generated corpus,
// with a freshly built knowhub as the replica process, and checks that
// every figure was measured.
func TestRunSmallCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds knowhub and starts a replica process")
	}
	exe := filepath.Join(t.TempDir(), "knowhub")
	if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/knowhub").CombinedOutput(); err != nil {
		t.Fatalf("build knowhub: %v\n%s", err, out)
	}
	docs := t.TempDir()
	const files = 40
	for i := range files {
		page := fmt.Sprintf("# Page %d\n\n## Configure topic%d quickly\n\nStep %d explains topic%d and the gateway.\n\n## Retry policy\n\nRetries back off.\n", i, i, i, i)
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("p%02d.md", i)), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := Run(ctx, Config{Corpus: docs, Queries: 50, Edits: 2, Exe: exe, Out: &out,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	if res.Files != files || res.Sections != 2*files {
		t.Errorf("indexed %d files, %d sections; want %d, %d (the H1 sections are empty)", res.Files, res.Sections, files, 2*files)
	}
	for name, l := range map[string]Latency{"up": res.Up, "up from a process": res.UpFromProcess, "replica": res.Replica} {
		if l.N != 50 || l.P50 <= 0 || l.P50 > l.P99 || l.P99 > l.Max || l.FloorP50 <= 0 {
			t.Errorf("%s latency not measured: %+v", name, l)
		}
	}
	if res.EchoP50 <= 0 || res.EchoAfterWorkP50 <= 0 {
		t.Errorf("echo not measured: %v, %v", res.EchoP50, res.EchoAfterWorkP50)
	}
	if res.ColdIndex <= 0 || res.ReplicaReady <= 0 || res.ReplicaRestart <= 0 || res.SegmentBytes <= 0 || res.ReplicaRSS <= 0 || res.EditP50 < res.Debounce ||
		res.NodeRSS <= 0 || res.NodePeakRSS < res.NodeRSS {
		t.Errorf("figures missing: %+v", res)
	}
	for _, want := range []string{"cold index: 40 files", "memory of the all-in-one node", "query latency to knowhub up", "knowhub up from a client in a process of its own", "query latency to the query replica process", "restarted in", "edit to searchable"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
