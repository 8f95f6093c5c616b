//go:build soak

// The soak test: real worker processes against a real nats-server
// process, random kill -9 of workers and of the server while files are
// indexed and edited, then a check that the index equals a clean run's.
// Run it with
//
//	go test -tags soak -run Soak ./internal/e2e -soak.duration 20s
//
// (the short form CI runs; give a longer duration to soak for real).
package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/contract"
)

var (
	soakDuration = flag.Duration("soak.duration", 20*time.Second, "how long to kill processes and edit files")
	soakSeed     = flag.Uint64("soak.seed", 0, "random seed (0: from the clock)")
)

// supervised is a process the soak restarts whenever it is not running.
type supervised struct {
	name string
	argv []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// start starts the process; it is safe to call from any goroutine.
func (s *supervised) start(logDir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(logDir, s.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done, s.log = cmd, done, logf
	return nil
}

func (s *supervised) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *supervised) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

func (s *supervised) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func TestSoakKillsConverge(t *testing.T) {
	bin := buildWorkers(t)
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "nats-server"), "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("build nats-server: %v\n%s", err, out)
	}
	seed := *soakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	logs := t.TempDir()
	docs := corpus(t)
	cfgPath := filepath.Join(t.TempDir(), "knowhub.json")
	cfg := fmt.Sprintf(`{"nats": {"url": %q}, "http": {"listen": "off"}, "watcher": {"debounceMs": 50}, "repositories": [{"name": "docs", "path": %q}]}`, url, docs)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfgPath, "--log-level", "info"}
	server := &supervised{name: "nats-server", argv: []string{filepath.Join(bin, "nats-server"), "-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", strconv.Itoa(port)}}
	workers := []*supervised{
		{name: "watcher", argv: append([]string{filepath.Join(bin, "watcher")}, args...)},
		{name: "chunker1", argv: append([]string{filepath.Join(bin, "chunker")}, args...)},
		{name: "chunker2", argv: append([]string{filepath.Join(bin, "chunker")}, args...)},
		{name: "indexer1", argv: append([]string{filepath.Join(bin, "indexer")}, args...)},
		{name: "indexer2", argv: append([]string{filepath.Join(bin, "indexer")}, args...)},
	}
	all := append([]*supervised{server}, workers...)
	// The supervisor restarts whatever is not running, the server first;
	// it is stopped before the processes are, however the test ends, so
	// that nothing is restarted behind the clean-up and left running.
	stopSup := make(chan struct{})
	supDone := make(chan struct{})
	var stopOnce sync.Once
	stopSupervisor := func() { stopOnce.Do(func() { close(stopSup); <-supDone }) }
	defer func() {
		stopSupervisor()
		for _, p := range slices.Backward(all) {
			p.stop()
		}
		if t.Failed() {
			for _, p := range all {
				out, _ := os.ReadFile(filepath.Join(logs, p.name+".log"))
				t.Logf("%s log (tail):\n%s", p.name, tail(out, 3000))
			}
		}
	}()
	if err := server.start(logs); err != nil {
		close(supDone)
		t.Fatal(err)
	}
	nc, err := broker.Connect(broker.ClientConfig{URL: url, Name: "soak"})
	for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // the server is starting
		nc, err = broker.Connect(broker.ClientConfig{URL: url, Name: "soak"})
	}
	if err != nil {
		close(supDone)
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		close(supDone)
		t.Fatal(err)
	}
	ctx := context.Background()
	go func() {
		defer close(supDone)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSup:
				return
			case <-tick.C:
			}
			for _, p := range all {
				if p.running() {
					continue
				}
				if err := p.start(logs); err != nil {
					t.Errorf("supervisor: %v", err)
					return
				}
				if p == server {
					break // the workers reconnect on their own; restart them on the next tick
				}
			}
		}
	}()

	// Edits and kills for the soak's duration.
	files, _ := filepath.Glob(filepath.Join(docs, "*.md"))
	if len(files) == 0 {
		t.Fatal("no Markdown files at the corpus root to edit")
	}
	kills := map[string]int{}
	edits, creates, deletes := 0, 0, 0
	end := time.Now().Add(*soakDuration)
	nextKill := time.Now().Add(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
	for time.Now().Before(end) {
		k := rng.IntN(10)
		if len(files) == 0 {
			k = 6 // every file deleted: create one
		}
		switch {
		case k < 6:
			f := files[rng.IntN(len(files))]
			data, err := os.ReadFile(f)
			if err == nil {
				data = append(data, fmt.Sprintf("\n## Soak edit %d\n\nEdited at step %d.\n", edits, edits)...)
				_ = os.WriteFile(f, data, 0o644)
				edits++
			}
		case k < 8:
			f := filepath.Join(docs, fmt.Sprintf("soak-%d.md", creates))
			_ = os.WriteFile(f, []byte(fmt.Sprintf("# Soak page %d\n\nCreated during the soak.\n", creates)), 0o644)
			files = append(files, f)
			creates++
		default:
			i := rng.IntN(len(files))
			if os.Remove(files[i]) == nil {
				deletes++
			}
			files = slices.Delete(files, i, i+1)
		}
		if time.Now().After(nextKill) {
			victim := all[rng.IntN(len(all))]
			if victim.running() {
				victim.kill()
				kills[victim.name]++
			}
			nextKill = time.Now().Add(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		}
		time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond) // the pace of edits
	}
	editsDone := time.Now()

	// Converge: every process up, the pipeline drained, the index equal
	// to a clean chunking of the files as they now are.
	want := expected(t, docs)
	kv, err := js.KeyValue(ctx, contract.BucketIndex)
	for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // the server restarting
		kv, err = js.KeyValue(ctx, contract.BucketIndex)
	}
	if err != nil {
		t.Fatal(err)
	}
	var diff string
	converged := false
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		p, err := app.ReadProgress(ctx, js)
		if err != nil || p.ChunkerPending != 0 || p.IndexerPending != 0 {
			continue
		}
		if diff = compareIndex(ctx, kv, want); diff == "" {
			converged = true
			break
		}
	}
	stopSupervisor()
	total := 0
	for _, n := range kills {
		total += n
	}
	t.Logf("soak: seed %d, %s of edits (%d edits, %d new files, %d deletions), %d kills %v, %d files, converged %t in %s after the last edit",
		seed, soakDuration.String(), edits, creates, deletes, total, kills, len(want), converged, time.Since(editsDone).Round(10*time.Millisecond))
	if !converged {
		t.Fatalf("the index did not converge to a clean run's: %s", diff)
	}
	if p, _ := app.ReadProgress(ctx, js); p.DeadLetters != 0 {
		t.Errorf("%d dead letters, want none", p.DeadLetters)
	}
}

// compareIndex returns how KH_INDEX differs from want (document key →
// sorted chunk ids), or "" when it holds exactly that.
func compareIndex(ctx context.Context, kv jetstream.KeyValue, want map[string][]string) string {
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return err.Error()
	}
	live := 0
	for k := range keys.Keys() {
		if len(k) < 5 || k[:5] != contract.CollectionDocs+"." {
			continue
		}
		e, err := kv.Get(ctx, k)
		if err != nil {
			return err.Error()
		}
		doc, err := contract.DecodeIndexDoc(e.Value())
		if err != nil {
			return fmt.Sprintf("%s: %v", k, err)
		}
		if doc.Deleted {
			if _, ok := want[k]; ok {
				return fmt.Sprintf("%s (%s) is deleted in the index", k, doc.Path)
			}
			continue
		}
		live++
		var ids []string
		for _, c := range doc.Chunks {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, want[k]) {
			return fmt.Sprintf("%s (%s): %d chunks, want %d", k, doc.Path, len(ids), len(want[k]))
		}
	}
	if live != len(want) {
		return fmt.Sprintf("index holds %d documents, want %d", live, len(want))
	}
	return ""
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
