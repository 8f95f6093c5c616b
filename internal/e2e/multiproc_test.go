// Package e2e runs knowhub's worker binaries as separate processes against
// one NATS server, as an operator would.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// buildWorkers compiles the worker commands into a temporary directory.
func buildWorkers(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin+string(os.PathSeparator),
		"../../cmd/watcher", "../../cmd/chunker", "../../cmd/indexer", "../../cmd/query")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build workers: %v\n%s", err, out)
	}
	return bin
}

// corpus copies the NATS documentation (or, without it, generated pages)
// into a temporary repository.
func corpus(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := "../../../shared/corpora/nats-docs"
	if _, err := os.Stat(src); err != nil {
		for i := range 200 {
			page := fmt.Sprintf("# Page %d\n\n## Usage\n\nStep %d explains topic%d in detail.\n\n## Options\n\nOption list %d.\n", i, i, i, i)
			if err := os.WriteFile(filepath.Join(dst, fmt.Sprintf("p%03d.md", i)), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dst
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// expected chunks every Markdown file the way the pipeline must: redacted,
// then split.
func expected(t *testing.T, root string) map[string][]string {
	t.Helper()
	red, err := app.NewRedactor(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".md" && ext != ".mdx" {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		cs, err := chunker.ChunkFile(&contract.FileEvent{Repo: "docs", Path: rel, Content: string(data)}, 1, red, chunker.Options{})
		if err != nil {
			return nil
		}
		var ids []string
		for _, c := range cs.Chunks {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		want[contract.DocKey("docs", rel)] = ids
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
}

func start(t *testing.T, bin, name, logDir string, args ...string) *proc {
	t.Helper()
	return startEnv(t, bin, name, logDir, nil, args...)
}

// startEnv is start with variables added to the process's environment.
func startEnv(t *testing.T, bin, name, logDir string, env []string, args ...string) *proc {
	t.Helper()
	logf, err := os.Create(filepath.Join(logDir, fmt.Sprintf("%s-%d.log", name, time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	stage := strings.TrimRight(name, "0123456789")
	cmd := exec.Command(filepath.Join(bin, stage), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logf}
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *proc) stop(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop on SIGTERM", p.name)
	}
	p.log.Close()
	if t.Failed() {
		out, _ := os.ReadFile(p.log.Name())
		t.Logf("%s log:\n%s", p.name, out)
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// workbench is what a test of the workers as processes starts from: the
// binaries, a NATS server, a repository of the NATS docs with the chunks
// each file must give, a configuration naming both, and a log folder.
type workbench struct {
	bin, docs, logs string
	srv             *natstest.Server
	want            map[string][]string
	args            []string
	kv              jetstream.KeyValue
}

func newWorkbench(t *testing.T) *workbench {
	t.Helper()
	w := &workbench{bin: buildWorkers(t), srv: natstest.Start(t, ""), docs: corpus(t), logs: t.TempDir()}
	w.want = expected(t, w.docs)
	cfgPath := filepath.Join(t.TempDir(), "knowhub.json")
	cfg := fmt.Sprintf(`{"nats": {"url": %q}, "http": {"listen": "off"}, "repositories": [{"name": "docs", "path": %q}]}`, w.srv.ClientURL(), w.docs)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	w.args = []string{"--config", cfgPath, "--log-level", "info"}
	var err error
	if w.kv, err = w.srv.JS.KeyValue(context.Background(), contract.BucketIndex); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWorkersAsProcessesSurviveAKilledIndexer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the worker binaries")
	}
	w := newWorkbench(t)
	bin, srv, want, logs, args, kv := w.bin, w.srv, w.want, w.logs, w.args, w.kv
	ctx := context.Background()
	countKeys := func() int {
		st, err := kv.Status(ctx)
		if err != nil {
			return -1
		}
		return int(st.Values())
	}

	// Two chunkers share the work; the indexer is killed mid-run.
	start(t, bin, "chunker1", logs, args...)
	start(t, bin, "chunker2", logs, args...)
	indexer := start(t, bin, "indexer1", logs, args...)
	start(t, bin, "watcher", logs, args...)
	natstest.WaitFor(t, 60*time.Second, "the indexer to write some documents", func() bool { return countKeys() >= 5 })
	indexer.kill()
	killedAt := countKeys()
	start(t, bin, "indexer2", logs, args...)
	start(t, bin, "query", logs, args...)

	natstest.WaitFor(t, 90*time.Second, "every file to be indexed", func() bool {
		p, err := app.ReadProgress(ctx, srv.JS)
		return err == nil && p.FilesLastSeq > 0 && p.ChunkerPending == 0 && p.IndexerPending == 0 && countKeys() == len(want)
	})
	t.Logf("indexer killed with %d of %d documents written", killedAt, len(want))

	// Every file is indexed exactly once, with exactly its chunks.
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for k := range keys.Keys() {
		seen++
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := contract.DecodeIndexDoc(e.Value())
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		var ids []string
		for _, c := range doc.Chunks {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, want[k]) {
			t.Errorf("%s (%s): chunks %d, want %d", k, doc.Path, len(ids), len(want[k]))
		}
	}
	if seen != len(want) {
		t.Errorf("bucket holds %d documents, want %d", seen, len(want))
	}
	if p, _ := app.ReadProgress(ctx, srv.JS); p.DeadLetters != 0 {
		t.Errorf("%d dead letters, want none", p.DeadLetters)
	}

	// The query process serves the whole corpus.
	total := 0
	for _, ids := range want {
		total += len(ids)
	}
	natstest.WaitFor(t, 30*time.Second, "the query replica to load every chunk", func() bool {
		msg, err := srv.NC.Request(contract.SubjectStats, []byte("{}"), 2*time.Second)
		if err != nil {
			return false
		}
		var st contract.StatsResponse
		return json.Unmarshal(msg.Data, &st) == nil && st.Collections[contract.CollectionDocs].Chunks == total
	})
	data, _ := json.Marshal(contract.SearchRequest{Query: "jetstream consumer"})
	msg, err := srv.NC.Request(contract.SubjectSearchDocs, data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp contract.SearchResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil || len(resp.Hits) == 0 {
		t.Errorf("search through the query process: %v, %d hits", err, len(resp.Hits))
	}
}
