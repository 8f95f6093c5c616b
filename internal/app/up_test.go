package app

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

func TestUpServesAndStopsCleanly(t *testing.T) {
	docs := t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# A\n\nThe gateway restarts cleanly.\n")
	writeFile(t, filepath.Join(docs, "empty.md"), "---\ntitle: nothing else\n---\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.DataDir = t.TempDir()
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = "127.0.0.1:0"
	for round := range 2 { // the second run resumes from the data dir
		var out natstest.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Up(ctx, cfg, testLogger(t), &out, "knowhub") }()
		natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "search with:") })
		// Off the default port, the hint names the address in use; the
		// first run explains the file that holds no section, the second
		// says it checked the files and found none changed.
		said := []string{"indexed 1 file, 1 section in", "(1 of the 2 files read hold no section); search with: knowhub search --nats-url nats://127.0.0.1:"}
		if round == 1 {
			said = []string{"checked 2 files in", "none changed; 1 file, 1 section searchable; search with: knowhub search --nats-url nats://127.0.0.1:"}
		}
		for _, want := range append([]string{"NATS   nats://127.0.0.1:", "HTTP   http://127.0.0.1:", "repo   docs"}, said...) {
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
	err = Up(t.Context(), cfg, testLogger(t), &bytes.Buffer{}, "knowhub")
	if err == nil || !strings.Contains(err.Error(), "--nats-listen") {
		t.Errorf("busy NATS port: %v, want an error naming --nats-listen", err)
	}
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = ln.Addr().String()
	err = Up(t.Context(), cfg, testLogger(t), &bytes.Buffer{}, "knowhub")
	if err == nil || !strings.Contains(err.Error(), "--http") {
		t.Errorf("busy HTTP port: %v, want an error naming --http", err)
	}
}

// A second `up` on a data directory in use exits at once with an error
// naming the directory and the process holding it; the first keeps
// serving.
func TestSecondUpOnOneDataDirExits(t *testing.T) {
	docs := t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# A\n\nThe gateway restarts cleanly.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.DataDir = t.TempDir()
	cfg.NATS.Listen = "127.0.0.1:-1"
	var out natstest.LogBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Up(ctx, cfg, testLogger(t), &out, "knowhub") }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("first up stopped with %v", err)
		}
	}()
	natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "indexed 1 file,") })
	second := *cfg
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	err := Up(ctx2, &second, testLogger(t), &bytes.Buffer{}, "knowhub")
	if err == nil || ctx2.Err() != nil {
		t.Fatalf("second up on the same data dir: %v, want an immediate error", err)
	}
	if !strings.Contains(err.Error(), cfg.DataDir) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q should name %s and process %d", err, cfg.DataDir, os.Getpid())
	}
}

// A repository no longer passed to `up` is removed at start, with a log
// line saying how many files.
func TestUpRemovesARepositoryNoLongerConfigured(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, "a.md"), "# A\n\nKept.\n")
	writeFile(t, filepath.Join(b, "b.md"), "# B\n\nDropped.\n")
	dataDir := t.TempDir()
	for round, repos := range [][]config.Repository{
		{{Name: "keep", Path: a}, {Name: "dropped", Path: b}},
		{{Name: "keep", Path: a}},
	} {
		cfg := testConfig(repos...)
		cfg.DataDir = dataDir
		cfg.NATS.Listen = "127.0.0.1:-1"
		var out, logs natstest.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Up(ctx, cfg, slog.New(slog.NewTextHandler(&logs, nil)), &out, "knowhub") }()
		natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "search with:") })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := []string{"indexed 2 files", "none changed; 1 file, 1 section searchable"}[round]
		if !strings.Contains(out.String(), want) {
			t.Errorf("round %d: %q, want %q", round, out.String(), want)
		}
		if round == 1 && !strings.Contains(logs.String(), "repo=dropped files=1") {
			t.Errorf("no log line names the removed repository:\n%s", logs.String())
		}
	}
}

func TestUpWithoutRepositoriesSaysHowToAddOne(t *testing.T) {
	cfg := testConfig()
	cfg.DataDir = t.TempDir()
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = config.HTTPOff
	var out natstest.LogBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Up(ctx, cfg, testLogger(t), &out, "knowhub") }()
	natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "indexed 0 files") })
	if !strings.Contains(out.String(), "repo   none: no documentation is indexed. Name folders (knowhub up DIR ...)") {
		t.Errorf("output does not say how to add a repository:\n%s", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A restart says what it found: the files it checked and what changed,
// not a count of files "indexed" when none was.
func TestUpRestartSaysWhatChanged(t *testing.T) {
	docs, dataDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(docs, "a.md"), "# A\n\nFirst.\n")
	writeFile(t, filepath.Join(docs, "b.md"), "# B\n\nSecond.\n")
	run := func(edit func()) string {
		t.Helper()
		edit()
		cfg := testConfig(config.Repository{Name: "docs", Path: docs})
		cfg.DataDir = dataDir
		cfg.NATS.Listen = "127.0.0.1:-1"
		var out natstest.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Up(ctx, cfg, testLogger(t), &out, "knowhub") }()
		natstest.WaitFor(t, 20*time.Second, "up to report the index", func() bool { return strings.Contains(out.String(), "search with:") })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for i, tc := range []struct {
		edit      func()
		want, not string
	}{
		{func() {}, "indexed 2 files, 2 sections in", "checked"},
		{func() {}, "checked 2 files in", "indexed"},
		{func() { writeFile(t, filepath.Join(docs, "b.md"), "# B\n\nSecond, edited.\n") }, "checked 2 files in", "none changed"},
	} {
		out := run(tc.edit)
		if !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("start %d: output lacks %q or holds %q:\n%s", i+1, tc.want, tc.not, out)
		}
		switch i {
		case 1:
			if !strings.Contains(out, "none changed; 2 files, 2 sections searchable") {
				t.Errorf("an unchanged restart: %s", out)
			}
		case 2:
			if !strings.Contains(out, "1 file changed, 0 files gone, indexed") {
				t.Errorf("a restart after an edit: %s", out)
			}
		}
	}
}
