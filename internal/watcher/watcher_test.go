package watcher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/fsnotify/fsnotify"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

const (
	secret   = "SECRET-TOKEN-123"
	redacted = "[REDACTED]"
)

// fakeRedactor replaces the planted secret.
type fakeRedactor struct{}

func (fakeRedactor) String(s string) string { return strings.ReplaceAll(s, secret, redacted) }

// env is one test's embedded JetStream and log.
type env struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	logs *natstest.LogBuffer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	srv, err := broker.StartEmbedded(ctx, broker.EmbeddedConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := broker.Connect(broker.ClientConfig{URL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.EnsureTopology(ctx, js); err != nil {
		t.Fatal(err)
	}
	return &env{nc: nc, js: js, logs: &natstest.LogBuffer{}}
}

func (e *env) newWatcher(t testing.TB, cfg Config) *Watcher {
	t.Helper()
	w, err := New(cfg, Deps{
		JS:         e.js,
		Redactor:   fakeRedactor{},
		Logger:     slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxPayload: e.nc.MaxPayload(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run starts w.Run, waits for Ready and stops it at cleanup, checking
// that it returned nil.
func run(t testing.TB, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v after cancel", err)
		}
	})
	select {
	case <-w.Ready():
	case err := <-done:
		t.Fatalf("Run returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("watcher not ready after 10s")
	}
}

func scan(t testing.TB, w *Watcher, force bool) ScanResult {
	t.Helper()
	res, err := w.Scan(context.Background(), force)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitFor polls cond every few milliseconds until it holds, failing the
// test when timeout passes first.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-poll.C:
		}
	}
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func shaOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// lastMsg returns the last KH_FILES message of a file, or nil.
func (e *env) lastMsg(t testing.TB, repoName, rel string) *jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := e.js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, contract.FileSubject(repoName, rel))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (e *env) event(t testing.TB, repoName, rel string) (contract.FileEvent, *jetstream.RawStreamMsg) {
	t.Helper()
	m := e.lastMsg(t, repoName, rel)
	if m == nil {
		return contract.FileEvent{}, nil
	}
	ev, err := contract.DecodeFileEvent(m.Data)
	if err != nil {
		t.Fatalf("decode event of %s: %v", rel, err)
	}
	return *ev, m
}

// hasContent reports whether the last message of rel is a put of content
// (after redaction).
func (e *env) hasContent(t testing.TB, repoName, rel, content string) bool {
	ev, m := e.event(t, repoName, rel)
	return m != nil && !ev.Deleted && ev.Content == content
}

func (e *env) isTombstone(t testing.TB, repoName, rel string) bool {
	ev, m := e.event(t, repoName, rel)
	return m != nil && ev.Deleted && m.Header.Get(contract.HeaderOp) == contract.OpDelete
}

func (e *env) streamState(t testing.TB) jetstream.StreamState {
	t.Helper()
	s, err := e.js.Stream(context.Background(), contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State
}

func (e *env) lastSeq(t testing.TB) uint64 { return e.streamState(t).LastSeq }

var meta = contract.RepoMeta{Priority: 10, Type: contract.RepoCore}

func TestInitialSync(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	outside := t.TempDir()
	files := map[string]string{
		"a.md":              "# A\nMARK-a token " + secret + " end\n",
		"sub/b.mdx":         "# B\nMARK-b <Tag/>\n",
		"sub/with space.md": "# S\nMARK-s\n",
		"c.txt":             "MARK-c not markdown\n",
		"excluded/d.md":     "MARK-d excluded\n",
		"node_modules/e.md": "MARK-e dependency\n",
		".git/f.md":         "MARK-f git\n",
		"bin.md":            "MARK-bin \x00 binary\n",
		"bad.md":            "MARK-bad \xff\xfe invalid\n",
		"big.md":            "MARK-big " + strings.Repeat("x", 2000),
	}
	for rel, c := range files {
		writeFile(t, root, rel, c)
	}
	writeFile(t, outside, "g.md", "MARK-g behind a symlinked directory\n")
	writeFile(t, outside, "h.md", "# H\nMARK-h symlinked file\n")
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "h.md"), filepath.Join(root, "link-file.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "missing.md"), filepath.Join(root, "dangling.md")); err != nil {
		t.Fatal(err)
	}

	w := e.newWatcher(t, Config{
		Repos:        []Repo{{Name: "docs", Root: root, Meta: meta, Exclude: []string{"excluded/**"}}},
		MaxFileBytes: 1024,
	})
	run(t, w)

	// Ready means acknowledged: no polling needed.
	want := map[string]string{
		"a.md":              "# A\nMARK-a token " + redacted + " end\n",
		"sub/b.mdx":         files["sub/b.mdx"],
		"sub/with space.md": files["sub/with space.md"],
	}
	if got := e.streamState(t).Msgs; got != uint64(len(want)) {
		t.Errorf("stream holds %d messages, want %d", got, len(want))
	}
	for rel, content := range want {
		ev, m := e.event(t, "docs", rel)
		if m == nil {
			t.Errorf("%s: not published", rel)
			continue
		}
		raw := files[rel]
		if ev.Content != content || ev.Deleted || ev.Schema != contract.SchemaVersion ||
			ev.Repo != "docs" || ev.Path != rel || !reflect.DeepEqual(ev.Meta, meta) || ev.SHA256 != shaOf(raw) ||
			ev.Size != int64(len(raw)) {
			t.Errorf("%s: event %+v", rel, ev)
		}
		h := m.Header
		for k, v := range map[string]string{
			contract.HeaderOp:       contract.OpPut,
			contract.HeaderRepo:     "docs",
			contract.HeaderPath:     escapePath(rel),
			contract.HeaderSHA256:   shaOf(raw),
			contract.HeaderRepoMeta: meta.String(),
			contract.HeaderSchema:   strconv.Itoa(contract.SchemaVersion),
		} {
			if got := h.Get(k); got != v {
				t.Errorf("%s: header %s = %q, want %q", rel, k, got, v)
			}
		}
		if h.Get(contract.HeaderCorrelation) == "" {
			t.Errorf("%s: no correlation id", rel)
		}
	}
	if _, m := e.event(t, "docs", "sub/with space.md"); m != nil && m.Header.Get(contract.HeaderPath) != "sub/with%20space.md" {
		t.Errorf("path header %q", m.Header.Get(contract.HeaderPath))
	}
	for _, rel := range []string{"c.txt", "excluded/d.md", "node_modules/e.md", ".git/f.md", "bin.md", "bad.md", "big.md", "linked/g.md", "dangling.md", "link-file.md"} {
		if e.lastMsg(t, "docs", rel) != nil {
			t.Errorf("%s published", rel)
		}
	}

	logs := e.logs.String()
	for rel, reason := range map[string]string{"bin.md": "binary", "bad.md": "invalid UTF-8", "big.md": "larger than 1024 bytes", "link-file.md": "outside the repository"} {
		if !strings.Contains(logs, "path="+rel) || !strings.Contains(logs, reason) {
			t.Errorf("no skip logged for %s (%s):\n%s", rel, reason, logs)
		}
	}
	if strings.Contains(logs, "MARK-") || strings.Contains(logs, secret) {
		t.Errorf("file content in the log:\n%s", logs)
	}
}

func TestEventLargerThanMaxPayloadSkipped(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "small.md", "# small\n")
	// Random letters: events are compressed, so the content must not be.
	rng := rand.New(rand.NewPCG(1, 2))
	large := make([]byte, 4000)
	for i := range large {
		large[i] = 'a' + byte(rng.IntN(26))
	}
	writeFile(t, root, "large.md", string(large))
	w, err := New(Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}},
		Deps{JS: e.js, Redactor: fakeRedactor{}, MaxPayload: 2048,
			Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	res := scan(t, w, false)
	if res != (ScanResult{Published: 1, Skipped: 1}) {
		t.Errorf("scan result %+v", res)
	}
	if e.lastMsg(t, "docs", "large.md") != nil {
		t.Error("large.md published")
	}
	if !strings.Contains(e.logs.String(), "exceeds the server's max payload") {
		t.Errorf("no reason logged:\n%s", e.logs.String())
	}
}

func TestRestartPublishesNothingUnchanged(t *testing.T) {
	e := newEnv(t)
	rootA, rootB := t.TempDir(), t.TempDir()
	for _, r := range []string{rootA, rootB} {
		writeFile(t, r, "a.md", "# A "+r)
		writeFile(t, r, "x/b.md", "# B")
		writeFile(t, r, "x/y/c.mdx", "# C")
	}
	cfg := Config{Repos: []Repo{
		{Name: "one", Root: rootA, Meta: meta},
		{Name: "two", Root: rootB, Meta: meta},
	}}
	if res := scan(t, e.newWatcher(t, cfg), false); res != (ScanResult{Published: 6}) {
		t.Fatalf("first scan %+v", res)
	}
	before := e.lastSeq(t)
	if res := scan(t, e.newWatcher(t, cfg), false); res != (ScanResult{Unchanged: 6}) {
		t.Errorf("restart scan %+v", res)
	}
	if after := e.lastSeq(t); after != before {
		t.Errorf("restart published %d messages", after-before)
	}
}

func TestChangesWhileDown(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "a.md", "# A v1")
	writeFile(t, root, "b.md", "# B")
	writeFile(t, root, "c.md", "# C")
	writeFile(t, root, "same.md", "# same")
	cfg := Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}}
	scan(t, e.newWatcher(t, cfg), false)

	writeFile(t, root, "a.md", "# A v2")
	if err := os.Remove(filepath.Join(root, "b.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "c.md", "now \x00 binary")
	writeFile(t, root, "d.md", "# D")

	res := scan(t, e.newWatcher(t, cfg), false)
	if want := (ScanResult{Published: 2, Deleted: 2, Unchanged: 1, Skipped: 1}); res != want {
		t.Errorf("scan %+v, want %+v", res, want)
	}
	if ev, _ := e.event(t, "docs", "a.md"); ev.Content != "# A v2" || ev.SHA256 != shaOf("# A v2") {
		t.Errorf("a.md: %+v", ev)
	}
	if !e.hasContent(t, "docs", "d.md", "# D") {
		t.Error("d.md not published")
	}
	for _, rel := range []string{"b.md", "c.md"} {
		ev, m := e.event(t, "docs", rel)
		if !e.isTombstone(t, "docs", rel) || ev.Content != "" || ev.Path != rel {
			t.Errorf("%s: want a tombstone, got %+v", rel, ev)
		}
		if m != nil && m.Header.Get(contract.HeaderPath) != rel {
			t.Errorf("%s: tombstone path header %q", rel, m.Header.Get(contract.HeaderPath))
		}
	}
	// A third start sees the tombstones as state: nothing to do.
	before := e.lastSeq(t)
	if res := scan(t, e.newWatcher(t, cfg), false); res != (ScanResult{Unchanged: 3, Skipped: 1}) {
		t.Errorf("third scan %+v", res)
	}
	if e.lastSeq(t) != before {
		t.Error("third scan published")
	}
}

func TestRepoMetaChangeRepublishes(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "a.md", "# A")
	writeFile(t, root, "b/c.md", "# C")
	scan(t, e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}}), false)

	ext := contract.RepoMeta{Priority: 20, Type: contract.RepoExtension}
	res := scan(t, e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: ext}}}), false)
	if res != (ScanResult{Published: 2}) {
		t.Errorf("scan %+v", res)
	}
	for _, rel := range []string{"a.md", "b/c.md"} {
		ev, m := e.event(t, "docs", rel)
		if !reflect.DeepEqual(ev.Meta, ext) || m.Header.Get(contract.HeaderRepoMeta) != ext.String() {
			t.Errorf("%s: meta %+v, header %q", rel, ev.Meta, m.Header.Get(contract.HeaderRepoMeta))
		}
	}
}

func TestForceScanRepublishesEverything(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	for i := range 5 {
		writeFile(t, root, fmt.Sprintf("d%d/f.md", i), fmt.Sprintf("# %d", i))
	}
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}})
	scan(t, w, false)
	before := e.lastSeq(t)
	if res := scan(t, w, false); res != (ScanResult{Unchanged: 5}) {
		t.Errorf("second scan %+v", res)
	}
	if res := scan(t, w, true); res != (ScanResult{Published: 5}) {
		t.Errorf("forced scan %+v", res)
	}
	if got := e.lastSeq(t) - before; got != 5 {
		t.Errorf("forced scan published %d messages, want 5", got)
	}
}

// A repository whose root does not exist is warned about and left out:
// the other repositories are served, nothing of it is tombstoned, and it
// is picked up once it appears.
func TestMissingRootIsWarnedAndPickedUpLater(t *testing.T) {
	e := newEnv(t)
	present := t.TempDir()
	writeFile(t, present, "here.md", "# here")
	missing := filepath.Join(t.TempDir(), "later")
	w := e.newWatcher(t, Config{
		Repos:             []Repo{{Name: "docs", Root: present, Meta: meta}, {Name: "later", Root: missing, Meta: meta}},
		DebounceMS:        20,
		MissingRootPollMS: 50,
	})
	if res, err := w.Scan(context.Background(), false); err != nil || res.Published != 1 {
		t.Fatalf("Scan with one missing root: %+v, %v; want the present repository published", res, err)
	}
	if !strings.Contains(e.logs.String(), "repository root missing") || !strings.Contains(e.logs.String(), "repo=later") {
		t.Errorf("no warning names the missing repository:\n%s", e.logs.String())
	}
	run(t, w)
	writeFile(t, missing, "new.md", "# new")
	waitFor(t, 10*time.Second, "the repository that appeared", func() bool { return e.hasContent(t, "later", "new.md", "# new") })
	writeFile(t, missing, "live.md", "# live")
	waitFor(t, 10*time.Second, "a live change in it", func() bool { return e.hasContent(t, "later", "live.md", "# live") })
}

func TestNewValidates(t *testing.T) {
	e := newEnv(t)
	deps := Deps{JS: e.js, Redactor: fakeRedactor{}}
	for name, tc := range map[string]struct {
		cfg  Config
		deps Deps
	}{
		"bad name":     {Config{Repos: []Repo{{Name: "a.b", Root: "/tmp"}}}, deps},
		"duplicate":    {Config{Repos: []Repo{{Name: "a", Root: "/tmp"}, {Name: "a", Root: "/tmp"}}}, deps},
		"no root":      {Config{Repos: []Repo{{Name: "a"}}}, deps},
		"bad glob":     {Config{Repos: []Repo{{Name: "a", Root: "/tmp", Glob: "[x"}}}, deps},
		"bad exclude":  {Config{Repos: []Repo{{Name: "a", Root: "/tmp", Exclude: []string{"{x"}}}}, deps},
		"no redactor":  {Config{}, Deps{JS: e.js}},
		"no js":        {Config{}, Deps{Redactor: fakeRedactor{}}},
		"neg debounce": {Config{DebounceMS: -1}, deps},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(tc.cfg, tc.deps); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

// barrier writes a fresh file and waits until it is published: every file
// system event before it has then been processed.
func (e *env) barrier(t testing.TB, root string) {
	t.Helper()
	n := barriers.Add(1)
	rel := fmt.Sprintf("barrier-%d.md", n)
	content := fmt.Sprintf("# barrier %d", n)
	writeFile(t, root, rel, content)
	waitFor(t, 10*time.Second, rel, func() bool { return e.hasContent(t, "docs", rel, content) })
}

var barriers atomic.Int64

func TestLive(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "existing.md", "# existing")
	w := e.newWatcher(t, Config{
		Repos:      []Repo{{Name: "docs", Root: root, Meta: meta, Exclude: []string{"drafts/**"}}},
		DebounceMS: 50,
	})
	run(t, w)
	const timeout = 10 * time.Second

	t.Run("create", func(t *testing.T) {
		writeFile(t, root, "new.md", "# new "+secret)
		waitFor(t, timeout, "new.md", func() bool { return e.hasContent(t, "docs", "new.md", "# new "+redacted) })
	})
	t.Run("edit", func(t *testing.T) {
		writeFile(t, root, "new.md", "# new, edited")
		waitFor(t, timeout, "edit", func() bool { return e.hasContent(t, "docs", "new.md", "# new, edited") })
		if _, m := e.event(t, "docs", "new.md"); m.Header.Get(contract.HeaderSHA256) != shaOf("# new, edited") {
			t.Errorf("sha header %q", m.Header.Get(contract.HeaderSHA256))
		}
	})
	t.Run("atomic save", func(t *testing.T) {
		before := e.lastSeq(t)
		tmp := filepath.Join(root, ".new.md.swp")
		if err := os.WriteFile(tmp, []byte("# new, saved atomically"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(root, "new.md")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, timeout, "atomic save", func() bool { return e.hasContent(t, "docs", "new.md", "# new, saved atomically") })
		e.barrier(t, root)
		if got := e.lastSeq(t) - before; got != 2 {
			t.Errorf("atomic save published %d messages, want 1 (+1 barrier)", got-1)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := os.Remove(filepath.Join(root, "new.md")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, timeout, "tombstone", func() bool { return e.isTombstone(t, "docs", "new.md") })
	})
	t.Run("becomes binary", func(t *testing.T) {
		writeFile(t, root, "existing.md", "now \x00 binary")
		waitFor(t, timeout, "tombstone", func() bool { return e.isTombstone(t, "docs", "existing.md") })
	})
	t.Run("new subdirectory", func(t *testing.T) {
		writeFile(t, root, "d1/d2/d3/x.md", "# x")
		waitFor(t, timeout, "d1/d2/d3/x.md", func() bool { return e.hasContent(t, "docs", "d1/d2/d3/x.md", "# x") })
		// The new directories are watched.
		writeFile(t, root, "d1/d2/y.md", "# y")
		waitFor(t, timeout, "d1/d2/y.md", func() bool { return e.hasContent(t, "docs", "d1/d2/y.md", "# y") })
	})
	t.Run("excluded directory", func(t *testing.T) {
		writeFile(t, root, "drafts/z.md", "# draft")
		e.barrier(t, root)
		if e.lastMsg(t, "docs", "drafts/z.md") != nil {
			t.Error("excluded file published")
		}
	})
	t.Run("remove directory", func(t *testing.T) {
		if err := os.RemoveAll(filepath.Join(root, "d1")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, timeout, "tombstones", func() bool {
			return e.isTombstone(t, "docs", "d1/d2/d3/x.md") && e.isTombstone(t, "docs", "d1/d2/y.md")
		})
	})
	t.Run("rename directory", func(t *testing.T) {
		writeFile(t, root, "r1/sub/y.md", "# ry")
		waitFor(t, timeout, "r1/sub/y.md", func() bool { return e.hasContent(t, "docs", "r1/sub/y.md", "# ry") })
		if err := os.Rename(filepath.Join(root, "r1"), filepath.Join(root, "r2")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, timeout, "rename", func() bool {
			return e.isTombstone(t, "docs", "r1/sub/y.md") && e.hasContent(t, "docs", "r2/sub/y.md", "# ry")
		})
		// Watches follow the new name, including below it.
		writeFile(t, root, "r2/sub/z.md", "# rz")
		waitFor(t, timeout, "r2/sub/z.md", func() bool { return e.hasContent(t, "docs", "r2/sub/z.md", "# rz") })
		if e.lastMsg(t, "docs", "r1/sub/z.md") != nil {
			t.Error("event reported under the old directory name")
		}
	})
	t.Run("burst", func(t *testing.T) {
		before := e.lastSeq(t)
		const writes = 50
		for i := range writes {
			writeFile(t, root, "burst.md", fmt.Sprintf("# burst %d", i))
		}
		final := fmt.Sprintf("# burst %d", writes-1)
		waitFor(t, timeout, "final burst content", func() bool { return e.hasContent(t, "docs", "burst.md", final) })
		e.barrier(t, root)
		events := e.lastSeq(t) - before - 1
		t.Logf("%d writes → %d events", writes, events)
		if events < 1 || events > 10 {
			t.Errorf("%d writes published %d events", writes, events)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads every file")
		}
		writeFile(t, root, "locked.md", "# locked")
		waitFor(t, timeout, "locked.md", func() bool { return e.hasContent(t, "docs", "locked.md", "# locked") })
		if err := os.Chmod(filepath.Join(root, "locked.md"), 0); err != nil {
			t.Fatal(err)
		}
		waitFor(t, timeout, "tombstone", func() bool { return e.isTombstone(t, "docs", "locked.md") })
	})
	logs := e.logs.String()
	for _, content := range []string{secret, "# new", "# burst", "# barrier", "now "} {
		if strings.Contains(logs, content) {
			t.Errorf("content %q in the log:\n%s", content, logs)
		}
	}
}

// TestLiveConstantWritesStillPublish: writes more often than the debounce
// still publish within the max delay.
func TestLiveConstantWritesStillPublish(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	w := e.newWatcher(t, Config{
		Repos:      []Repo{{Name: "docs", Root: root, Meta: meta}},
		DebounceMS: 500,
	})
	run(t, w)

	stop := make(chan struct{})
	var writerDone sync.WaitGroup
	writerDone.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if err := os.WriteFile(filepath.Join(root, "stream.md"), []byte(fmt.Sprintf("# tick %d", i)), 0o644); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	waitFor(t, 10*time.Second, "a publish during constant writes", func() bool {
		return e.lastMsg(t, "docs", "stream.md") != nil
	})
	close(stop)
	writerDone.Wait()
}

// TestOverflowRescans: an fsnotify overflow makes the watcher rescan, which
// finds a change it got no event for.
func TestOverflowRescans(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "quiet/q.md", "# q v1")
	w := e.newWatcher(t, Config{
		Repos:      []Repo{{Name: "docs", Root: root, Meta: meta}},
		DebounceMS: 20,
	})
	run(t, w)

	quiet := filepath.Join(w.repos[0].root, "quiet")
	w.watchMu.Lock()
	fsw := w.fsw
	if err := fsw.Remove(quiet); err != nil {
		t.Fatal(err)
	}
	delete(w.watched, quiet)
	w.watchMu.Unlock()

	writeFile(t, root, "quiet/q.md", "# q v2")
	e.barrier(t, root)
	if !e.hasContent(t, "docs", "quiet/q.md", "# q v1") {
		t.Fatal("an unwatched change was published: the test proves nothing")
	}
	fsw.Errors <- fsnotify.ErrEventOverflow
	waitFor(t, 10*time.Second, "rescan", func() bool { return e.hasContent(t, "docs", "quiet/q.md", "# q v2") })
	// The rescan watched the directory again.
	writeFile(t, root, "quiet/q.md", "# q v3")
	waitFor(t, 10*time.Second, "live again", func() bool { return e.hasContent(t, "docs", "quiet/q.md", "# q v3") })
}

func TestPathEscaping(t *testing.T) {
	for _, rel := range []string{"a.md", "sub/with space.md", "ü/100%.md", "a/b?c#d.md"} {
		esc := escapePath(rel)
		if strings.ContainsAny(esc, " ?#") {
			t.Errorf("%q escaped to %q", rel, esc)
		}
		back, err := unescapePath(esc)
		if err != nil || back != rel {
			t.Errorf("%q → %q → %q, %v", rel, esc, back, err)
		}
	}
}

// TestLivePublishFailureIsRetried: while the stream is gone, changes stay
// dirty and are published once it is back; the watcher keeps running.
func TestLivePublishFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}, DebounceMS: 20})
	run(t, w)
	ctx := context.Background()
	if err := e.js.DeleteStream(ctx, contract.StreamFiles); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "later.md", "# Later\n")
	waitFor(t, 10*time.Second, "the failed publish to be logged", func() bool {
		return strings.Contains(e.logs.String(), "publishing changes failed; retrying")
	})
	if err := broker.EnsureTopology(ctx, e.js); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the retried publish", func() bool { return e.hasContent(t, "docs", "later.md", "# Later\n") })
}

func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	const limit = 1000
	for _, size := range []int{0, 1, 511, 512, 513, limit - 1, limit, limit + 1, limit + 5000} {
		p := filepath.Join(dir, strconv.Itoa(size))
		data := bytes.Repeat([]byte("abcdefghij"), size/10+1)[:size]
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readLimited(p, limit)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		want := data[:min(size, limit+1)] // one byte past the limit shows it is over
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d bytes, want %d", size, len(got), len(want))
		}
	}
	if _, err := readLimited(filepath.Join(dir, "missing"), limit); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Files named like credentials are never published, even when the glob
// selects them, and the skip log says why; names that merely resemble
// them are published.
func TestCredentialFilesNeverIndexed(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	skipped := []string{".env", ".env.local", "config/.env.production", "credentials.json", "agents/main/auth-profiles.json"}
	kept := []string{"env.md", ".environment.md", "docs/credentials.md", "my-credentials.json"}
	for _, rel := range append(slices.Clone(skipped), kept...) {
		writeFile(t, root, rel, "# MARK-"+rel+"\nOPENAI_API_KEY=MARK-value\n")
	}
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta, Glob: "**/*"}}})
	res := scan(t, w, false)
	if res.Published != len(kept) || res.Skipped != len(skipped) {
		t.Errorf("scan result %+v, want %d published and %d skipped", res, len(kept), len(skipped))
	}
	for _, rel := range skipped {
		if e.lastMsg(t, "docs", rel) != nil {
			t.Errorf("%s published", rel)
		}
	}
	for _, rel := range kept {
		if e.lastMsg(t, "docs", rel) == nil {
			t.Errorf("%s not published", rel)
		}
	}
	logs := e.logs.String()
	for _, rel := range skipped {
		if !strings.Contains(logs, "path="+rel+" ") || !strings.Contains(logs, "named like a credentials file") {
			t.Errorf("no credentials skip logged for %s:\n%s", rel, logs)
		}
	}
	if strings.Contains(logs, "MARK-value") {
		t.Errorf("file content in the log:\n%s", logs)
	}
}

// A file whose name is not valid UTF-8 is skipped by the watcher with that
// reason, instead of being published and dead-lettered downstream; UTF-16
// with a byte-order mark (what Windows editors save as "Unicode") is
// indexed as its UTF-8 text, and UTF-16 without one is refused by name.
func TestFileNamesAndUTF16(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "ok.md", "# OK\n")
	if err := os.WriteFile(filepath.Join(root, "caf\xe9.md"), []byte("# Latin-1 name\n"), 0o644); err != nil {
		t.Skipf("this filesystem refuses a name that is not UTF-8: %v", err)
	}
	text := "# Überblick\nMARK-utf16 größe 中文\n"
	le := []byte{0xFF, 0xFE}
	be := []byte{0xFE, 0xFF}
	var bare []byte
	for _, r := range utf16.Encode([]rune(text)) {
		le = append(le, byte(r), byte(r>>8))
		be = append(be, byte(r>>8), byte(r))
		bare = append(bare, byte(r), byte(r>>8))
	}
	writeFile(t, root, "le.md", string(le))
	writeFile(t, root, "be.md", string(be))
	writeFile(t, root, "bare.md", string(bare[:len(bare)-8])) // no CJK: mostly NUL high bytes
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}})
	res := scan(t, w, false)
	if res.Published != 3 || res.Skipped != 2 {
		t.Errorf("scan result %+v, want 3 published (ok, le, be) and 2 skipped", res)
	}
	for _, rel := range []string{"le.md", "be.md"} {
		if ev, m := e.event(t, "docs", rel); m == nil || ev.Content != text {
			t.Errorf("%s: content %q, want the UTF-8 text %q", rel, ev.Content, text)
		}
	}
	logs := e.logs.String()
	for _, want := range []string{"file name is not valid UTF-8", "UTF-16 without a byte-order mark is not supported"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no skip logged saying %q:\n%s", want, logs)
		}
	}
}

func TestDecodeText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []byte
		ok     bool
		reason string
	}{
		{"UTF-8", []byte("# plain\n"), true, ""},
		{"binary", []byte("PK\x03\x04\x00\x00\x08\x00\x08\x00\x9a\x01\x00\x00\x00\x00\x00\x00"), false, "binary"},
		{"UTF-16LE with NUL", []byte{0xFF, 0xFE, 'a', 0, 0, 0}, false, "NUL character"},
	} {
		_, reason, ok := decodeText(tc.in)
		if ok != tc.ok || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: ok %v reason %q, want ok %v and a reason naming %q", tc.name, ok, reason, tc.ok, tc.reason)
		}
	}
}

// A repository that indexes English only leaves out the pages of locale
// folders and the pages whose text is in another language, counts them,
// and tombstones those it had published; pages too short to tell stay.
func TestLanguagesLeaveOtherLanguagesOut(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	pages := map[string]string{
		"guide.md":                 "# Gateway\n\nTo configure the gateway, open the settings file and set the token. When it starts, it reads the file.",
		"short.md":                 "# Gateway",
		"zh-CN/guide.md":           "# 网关\n\n要配置网关，请打开设置文件并设置令牌。",
		"docs/ja/guide.md":         "# ゲートウェイ\n\nゲートウェイを設定するには、設定ファイルを開きます。",
		"translations/fr/guide.md": "# Gateway\n\nThis page is not translated yet: the folder decides, as in doc-engine.",
		"notes-ar.md":              "# البوابة\n\nلتكوين البوابة، افتح ملف الإعدادات وقم بتعيين الرمز المميز.",
		"notes-it.md":              "# Gateway\n\nPer configurare il gateway, apri il file delle impostazioni e imposta il token. Quando il gateway si avvia, legge il file.",
	}
	for rel, text := range pages {
		writeFile(t, root, rel, text)
	}
	all := Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}}
	if res := scan(t, e.newWatcher(t, all), false); res != (ScanResult{Published: 7}) {
		t.Fatalf("every language: %+v", res)
	}
	en := Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta, Languages: []string{"en"}}}}
	if res, want := scan(t, e.newWatcher(t, en), false), (ScanResult{Published: 2, Deleted: 5, OtherLanguage: 5}); res != want {
		t.Fatalf("English only: %+v, want %+v", res, want)
	}
	for rel := range pages {
		kept := rel == "guide.md" || rel == "short.md"
		if got := !e.isTombstone(t, "docs", rel); got != kept {
			t.Errorf("%s: live %v, want %v", rel, got, kept)
		}
	}
	if _, m := e.event(t, "docs", "guide.md"); m.Header.Get(contract.HeaderRepoMeta) != meta.String()+";l=en" {
		t.Errorf("meta header %q", m.Header.Get(contract.HeaderRepoMeta))
	}
	// A new translation is counted, never published; a restart publishes nothing.
	writeFile(t, root, "ko/guide.md", "# 게이트웨이\n\n게이트웨이를 구성하려면 설정 파일을 여세요.")
	before := e.lastSeq(t)
	if res, want := scan(t, e.newWatcher(t, en), false), (ScanResult{Unchanged: 2, OtherLanguage: 6}); res != want {
		t.Errorf("rescan: %+v, want %+v", res, want)
	}
	if e.lastSeq(t) != before {
		t.Error("the rescan published")
	}
	// Every language again: the pages come back.
	if res, want := scan(t, e.newWatcher(t, all), false), (ScanResult{Published: 8}); res != want {
		t.Errorf("every language again: %+v, want %+v", res, want)
	}
}

// Live, a translation that appears is never published, and an English
// page edited into another language is tombstoned.
func TestLiveLanguages(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "guide.md", "# Guide\n\nTo configure the gateway, open the settings file and set the token when it starts.")
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta, Languages: []string{"en"}}}, DebounceMS: 50})
	run(t, w)
	const timeout = 10 * time.Second
	// The translation is written first; the English page after it is the
	// mark that the batch holding both was processed.
	writeFile(t, root, "zh-CN/guide.md", "# 指南\n\n要配置网关，请打开设置文件并设置令牌。")
	writeFile(t, root, "next.md", "# Next\n\nWhen the gateway is running, open the dashboard and check the status of the channels.")
	waitFor(t, timeout, "next.md", func() bool { return e.lastMsg(t, "docs", "next.md") != nil })
	if m := e.lastMsg(t, "docs", "zh-CN/guide.md"); m != nil {
		t.Error("the translation was published")
	}
	writeFile(t, root, "guide.md", "# 指南\n\n要配置网关，请打开设置文件并设置令牌。网关启动时会读取它。")
	waitFor(t, timeout, "guide.md tombstone", func() bool { return e.isTombstone(t, "docs", "guide.md") })
}
