package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/watcher"
)

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig returns a configuration with the given repositories and the
// HTTP API off.
func testConfig(repos ...config.Repository) *config.Config {
	cfg := config.Default()
	cfg.HTTP.Listen = config.HTTPOff
	cfg.Watcher.DebounceMS = 20
	for i := range repos {
		if repos[i].Glob == "" {
			repos[i].Glob = config.DefaultGlob
		}
		if repos[i].Type == "" {
			repos[i].Type = contract.RepoCore
		}
	}
	cfg.Repositories = repos
	return cfg
}

// runNode starts every stage on srv and waits until the initial sync is
// indexed. The node stops when the test ends, or earlier through stopNode.
func runNode(t *testing.T, srv *natstest.Server, cfg *config.Config) *testNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	node, err := NewNode(ctx, cfg, srv.NC, srv.JS, All, testLogger(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	var once sync.Once
	tn := &testNode{Node: node}
	tn.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("node stopped with %v", err)
			}
		})
	}
	t.Cleanup(tn.stop)
	waitIndexed(t, srv, node)
	return tn
}

// testNode is a running Node that a test can stop early.
type testNode struct {
	*Node
	stop func()
}

// waitIndexed waits for the initial sync and for the pipeline to drain.
func waitIndexed(t *testing.T, srv *natstest.Server, node *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, ch := range []<-chan struct{}{node.Watcher.Ready(), node.API.Ready()} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("node not ready in time")
		}
	}
	if err := WaitCaughtUp(ctx, srv.JS, node.Query.Engine().Revision); err != nil {
		t.Fatalf("pipeline did not catch up: %v", err)
	}
}

func searchDocs(t *testing.T, nc *nats.Conn, req contract.SearchRequest) *contract.SearchResponse {
	t.Helper()
	data, _ := json.Marshal(req)
	msg, err := nc.Request(contract.SubjectSearchDocs, data, 5*time.Second)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		t.Fatalf("search %q: service error %s", req.Query, e)
	}
	var resp contract.SearchResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(resp *contract.SearchResponse) []string {
	var out []string
	for _, h := range resp.Hits {
		out = append(out, h.Repo+":"+h.Path)
	}
	return out
}

// waitSearch polls until a search satisfies cond.
func waitSearch(t *testing.T, nc *nats.Conn, q string, what string, cond func(*contract.SearchResponse) bool) *contract.SearchResponse {
	t.Helper()
	var resp *contract.SearchResponse
	natstest.WaitFor(t, 10*time.Second, what, func() bool {
		resp = searchDocs(t, nc, contract.SearchRequest{Query: q})
		return cond(resp)
	})
	return resp
}

func TestEndToEndLifecycle(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models.md"), "---\ntitle: Models\n---\n# Models\n\n## Fallbacks\n\nConfigure a fallback model chain with `fallbacks`.\n\n## Pricing\n\nEvery provider bills per token.\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "fallback model chain in a text file is not indexed")
	node := runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir, Priority: 10}))

	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "configure a fallback model chain"})
	if len(resp.Hits) == 0 || resp.Hits[0].Path != "models.md" || strings.Join(resp.Hits[0].HeadingPath, ">") != "Models>Fallbacks" {
		t.Fatalf("first hit %+v, want models.md § Models > Fallbacks", resp.Hits)
	}
	h := resp.Hits[0]
	if h.Repo != "docs" || h.Seq == 0 || h.ChunkID == "" || !strings.Contains(h.Snippet, "**fallback**") {
		t.Errorf("hit lacks provenance or a marked snippet: %+v", h)
	}
	for _, p := range paths(resp) {
		if strings.HasSuffix(p, ".txt") {
			t.Errorf("a .txt file was indexed: %v", p)
		}
	}

	// Edit a section: the old text is gone, the new one found.
	writeFile(t, filepath.Join(dir, "models.md"), "# Models\n\n## Fallbacks\n\nChain providers with the `failover` list.\n")
	waitSearch(t, srv.NC, "failover", "edited text to be searchable", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "bills per token"}); len(r.Hits) != 0 {
		t.Errorf("removed section still found: %v", paths(r))
	}

	// Delete the file: nothing of it is left.
	if err := os.Remove(filepath.Join(dir, "models.md")); err != nil {
		t.Fatal(err)
	}
	waitSearch(t, srv.NC, "failover", "deleted file to disappear", func(r *contract.SearchResponse) bool { return len(r.Hits) == 0 })
	if st := node.Query.Engine().Stats(true); st.Collections[contract.CollectionDocs].Sources != 0 {
		t.Errorf("stats after delete: %+v", st.Collections)
	}
}

func TestSameRelativePathInTwoReposNeverMixes(t *testing.T) {
	srv := natstest.Start(t, "")
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, "README.md"), "# Alpha\n\nThe alpha project ships a gateway.\n")
	writeFile(t, filepath.Join(b, "README.md"), "# Beta\n\nThe beta project ships a sandbox.\n")
	runNode(t, srv, testConfig(
		config.Repository{Name: "alpha", Path: a, Priority: 10},
		config.Repository{Name: "beta", Path: b, Priority: 20},
	))
	ra := searchDocs(t, srv.NC, contract.SearchRequest{Query: "gateway"})
	rb := searchDocs(t, srv.NC, contract.SearchRequest{Query: "sandbox"})
	if len(ra.Hits) != 1 || ra.Hits[0].Repo != "alpha" || len(rb.Hits) != 1 || rb.Hits[0].Repo != "beta" {
		t.Fatalf("README.md mixed across repos: gateway → %v, sandbox → %v", paths(ra), paths(rb))
	}
	if strings.Contains(ra.Hits[0].Snippet, "sandbox") || strings.Contains(rb.Hits[0].Snippet, "gateway") {
		t.Errorf("snippets mixed: %q / %q", ra.Hits[0].Snippet, rb.Hits[0].Snippet)
	}
	// Filtering by repo happens before the cut.
	rf := searchDocs(t, srv.NC, contract.SearchRequest{Query: "project ships", Repos: []string{"beta"}, TopK: 1})
	if len(rf.Hits) != 1 || rf.Hits[0].Repo != "beta" {
		t.Errorf("repo filter: %v", paths(rf))
	}
}

func TestCoreBeatsExtensionAndReportsShadowed(t *testing.T) {
	srv := natstest.Start(t, "")
	core, ext := t.TempDir(), t.TempDir()
	page := "# Sandbox\n\n## Network policy\n\nThe sandbox denies outbound network access by default.\n"
	writeFile(t, filepath.Join(core, "tools/sandbox.md"), page)
	// The extension's copy matches the query better but must still lose.
	writeFile(t, filepath.Join(ext, "tools/sandbox.md"), page+"\nSandbox network network network access.\n")
	runNode(t, srv, testConfig(
		config.Repository{Name: "core", Path: core, Priority: 10, Type: contract.RepoCore},
		config.Repository{Name: "plugin", Path: ext, Priority: 10, Type: contract.RepoExtension},
	))
	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "sandbox network access"})
	if len(resp.Hits) == 0 || resp.Hits[0].Repo != "core" {
		t.Fatalf("hits %v, want the core page first", paths(resp))
	}
	for _, h := range resp.Hits {
		if h.Repo == "plugin" && strings.Join(h.HeadingPath, ">") == "Sandbox>Network policy" {
			t.Errorf("shadowed section also returned as a hit: %+v", h)
		}
	}
	if len(resp.Shadowed) == 0 || resp.Shadowed[0].Repo != "plugin" || !strings.Contains(resp.Shadowed[0].Reason, "core") ||
		!strings.HasPrefix(resp.Shadowed[0].ShadowedBy, "core:tools/sandbox.md#") {
		t.Errorf("shadowed %+v, want the plugin page shadowed by core with a reason", resp.Shadowed)
	}
}

func TestSingleFileRepoIsSearchable(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "only.md"), "Heartbeat intervals keep the gateway session alive.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "solo", Path: dir}))
	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "heartbeat"})
	if len(resp.Hits) != 1 || resp.Hits[0].Title != "only" {
		t.Fatalf("single-file repo: hits %+v, want only.md titled from its file name", resp.Hits)
	}
}

// The planted secret is assembled at run time so this file holds none.
var plantedSecret = "sk-ant-api03-" + strings.Repeat("Zq9", 12) + "xY7_wV3-uT1sR5qP8oN2mL4kJ6hG0fE9dC3bA1zY5xW"

func TestPlantedSecretIsPersistedNowhere(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "setup.md"), "# Setup\n\nExport the key before starting:\n\n    export ANTHROPIC_API_KEY="+plantedSecret+"\n\nThen start the gateway.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "export key gateway"})
	if len(resp.Hits) == 0 {
		t.Fatal("the page about setup should still be indexed")
	}
	raw, _ := json.Marshal(resp)
	if strings.Contains(string(raw), plantedSecret) {
		t.Error("secret in a search reply")
	}
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "redacted"}); len(r.Hits) != 1 {
		t.Errorf("the redaction marker should be indexed in place of the key: %v", paths(r))
	}
	assertNowhere(t, srv.JS, plantedSecret)
}

// assertNowhere reads every message of every stream (KV buckets included)
// and fails if needle appears in a payload or header.
func assertNowhere(t *testing.T, js jetstream.JetStream, needle string) {
	t.Helper()
	ctx := context.Background()
	names := js.StreamNames(ctx)
	var streams []string
	for n := range names.Name() {
		streams = append(streams, n)
	}
	if len(streams) < 6 {
		t.Fatalf("only %d streams listed", len(streams))
	}
	for _, name := range streams {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := s.Info(ctx)
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("get %s/%d: %v", name, seq, err)
			}
			data := m.Data
			// Binary payloads are compressed: look inside them.
			switch {
			case name == "KV_"+contract.BucketIndex && len(data) > 0:
				doc, err := contract.DecodeIndexDoc(data)
				if err != nil {
					t.Fatalf("%s/%d: %v", name, seq, err)
				}
				data, _ = json.Marshal(doc)
			case name == contract.StreamFiles:
				ev, err := contract.DecodeFileEvent(data)
				if err != nil {
					t.Fatalf("%s/%d: %v", name, seq, err)
				}
				data, _ = json.Marshal(ev)
			case name == contract.StreamChunks:
				cs, err := contract.DecodeChunkSet(data)
				if err != nil {
					t.Fatalf("%s/%d: %v", name, seq, err)
				}
				data, _ = json.Marshal(cs)
			}
			hdr, _ := json.Marshal(m.Header)
			if strings.Contains(string(data), needle) || strings.Contains(string(hdr), needle) {
				t.Errorf("secret found in stream %s at sequence %d", name, seq)
			}
		}
	}
}

func TestRestartResumesWithoutRepublishing(t *testing.T) {
	storeDir := t.TempDir()
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		writeFile(t, filepath.Join(dir, name), "# "+name+"\n\nStable content of "+name+".\n")
	}
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	var lastSeq uint64
	func() {
		srv := natstest.Start(t, storeDir)
		node := runNode(t, srv, cfg)
		p, err := ReadProgress(context.Background(), srv.JS)
		if err != nil {
			t.Fatal(err)
		}
		lastSeq = p.FilesLastSeq
		node.stop()
		srv.NC.Close()
		srv.Shutdown()
	}()
	if lastSeq != 3 {
		t.Fatalf("first run published %d file events, want 3", lastSeq)
	}
	// While down: one file changes, one is deleted.
	writeFile(t, filepath.Join(dir, "b.md"), "# b\n\nRewritten while knowhub was down.\n")
	if err := os.Remove(filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t, storeDir)
	runNode(t, srv, cfg)
	p, err := ReadProgress(context.Background(), srv.JS)
	if err != nil {
		t.Fatal(err)
	}
	if p.FilesLastSeq != lastSeq+2 {
		t.Errorf("restart published %d events, want 2 (one change, one tombstone)", p.FilesLastSeq-lastSeq)
	}
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "rewritten while down"}); len(r.Hits) != 1 {
		t.Errorf("change made while down not indexed: %v", paths(r))
	}
	if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: "stable content"}); len(r.Hits) != 1 || r.Hits[0].Path != "a.md" {
		t.Errorf("after restart 'stable content' → %v, want only a.md", paths(r))
	}
}

func TestPoisonedMessagesGoToDeadLetters(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.md"), "# Fine\n\nA perfectly fine page.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	ctx := context.Background()
	bad := []*nats.Msg{
		{Subject: contract.SubjectFiles + ".docs.0000000000000001", Data: []byte("{not json")},
		{Subject: contract.FileSubject("docs", "bin.md"), Data: []byte(`{"schema":1,"repo":"docs","path":"bin.md","content":"ok ` + "\xff\xfe" + ` bad"}`)},
		{Subject: contract.FileSubject("docs", "future.md"), Data: mustJSON(t, contract.FileEvent{Schema: 99, Repo: "docs", Path: "future.md", Content: "x"})},
		{Subject: contract.SubjectChunks + ".docs.0000000000000002", Data: []byte(`{"schema":1,"repo":"bad repo!","path":"x.md"}`)},
	}
	for _, m := range bad {
		if _, err := srv.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	natstest.WaitFor(t, 15*time.Second, "four dead letters", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		return err == nil && p.DeadLetters == 4
	})
	s, _ := srv.JS.Stream(ctx, contract.StreamDLQ)
	reasons := map[string]string{}
	for seq := uint64(1); seq <= 4; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		reasons[m.Header.Get(contract.HeaderOrigSubject)] = m.Header.Get(contract.HeaderReason)
		if m.Header.Get(contract.HeaderStage) == "" || m.Header.Get(contract.HeaderOrigSeq) == "" {
			t.Errorf("dead letter %d lacks stage or sequence headers: %v", seq, m.Header)
		}
	}
	for subj, want := range map[string]string{
		bad[0].Subject: "decode file event",
		bad[1].Subject: "UTF-8",
		bad[2].Subject: "schema 99",
		bad[3].Subject: "invalid repo",
	} {
		if !strings.Contains(reasons[subj], want) {
			t.Errorf("dead letter for %s has reason %q, want it to mention %q", subj, reasons[subj], want)
		}
	}
	// The pipeline keeps going.
	writeFile(t, filepath.Join(dir, "later.md"), "# Later\n\nWritten after the poison.\n")
	waitSearch(t, srv.NC, "written after the poison", "a file written after poisoned messages", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReplayRebuildsTheSameIndex(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "# Alpha\n\n## Install\n\nInstall with the package manager.\n")
	writeFile(t, filepath.Join(dir, "b.md"), "# Beta\n\nRemoved soon.\n")
	node := runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	if err := os.Remove(filepath.Join(dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	waitSearch(t, srv.NC, "removed soon", "b.md to be deleted", func(r *contract.SearchResponse) bool { return len(r.Hits) == 0 })
	before := searchDocs(t, srv.NC, contract.SearchRequest{Query: "install package manager"})

	// Wipe the index bucket: it is a projection of the streams.
	ctx := context.Background()
	kv, _ := srv.JS.KeyValue(ctx, contract.BucketIndex)
	keys, _ := kv.ListKeys(ctx)
	for k := range keys.Keys() {
		if err := kv.Purge(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	waitSearch(t, srv.NC, "install package manager", "the wiped index to be empty", func(r *contract.SearchResponse) bool { return len(r.Hits) == 0 })

	res, err := watcher.Replay(ctx, srv.JS)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 1 || res.Tombstones != 1 {
		t.Errorf("replay %+v, want 1 file and 1 tombstone", res)
	}
	waitIndexed(t, srv, node.Node)
	after := searchDocs(t, srv.NC, contract.SearchRequest{Query: "install package manager"})
	if len(after.Hits) != len(before.Hits) || after.Hits[0].ChunkID != before.Hits[0].ChunkID || after.Hits[0].Score != before.Hits[0].Score {
		t.Errorf("replayed index differs:\nbefore %+v\nafter  %+v", before.Hits, after.Hits)
	}
}

func TestCorrelationIDFollowsAFile(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.md"), "# C\n\nCorrelated.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	ctx := context.Background()
	files, _ := srv.JS.Stream(ctx, contract.StreamFiles)
	chunks, _ := srv.JS.Stream(ctx, contract.StreamChunks)
	fm, err := files.GetLastMsgForSubject(ctx, contract.FileSubject("docs", "c.md"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := chunks.GetLastMsgForSubject(ctx, contract.ChunkSubject("docs", "c.md"))
	if err != nil {
		t.Fatal(err)
	}
	id := fm.Header.Get(contract.HeaderCorrelation)
	if id == "" || cm.Header.Get(contract.HeaderCorrelation) != id {
		t.Errorf("correlation id %q on the file, %q on its chunk set", id, cm.Header.Get(contract.HeaderCorrelation))
	}
	if cm.Header.Get(contract.HeaderSourceSeq) != fmt.Sprint(fm.Sequence) {
		t.Errorf("chunk set source sequence %q, want %d", cm.Header.Get(contract.HeaderSourceSeq), fm.Sequence)
	}
}

// TestStartRebuildsAnIndexOfAnotherAnalyzer: after an upgrade that changes
// the analysis, `knowhub up` finds documents built by the old analyzer and
// rebuilds them from KH_FILES, though no file changed.
func TestStartRebuildsAnIndexOfAnotherAnalyzer(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "# Alpha\n\n## Install\n\nInstall with the package manager.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	first := runNode(t, srv, cfg)
	if got := first.Query.StaleDocs(); got != "" {
		t.Errorf("a fresh index reports documents of analyzer %q", got)
	}
	first.stop()

	// Mark the document as built by an older analyzer.
	ctx := context.Background()
	kv, err := srv.JS.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	key := contract.DocKey("docs", "a.md")
	readDoc := func() *contract.IndexDoc {
		e, err := kv.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := contract.DecodeIndexDoc(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := readDoc()
	current := doc.Analyzer
	if current != contract.DocsBuild(analysis.Version) {
		t.Errorf("a docs document records %q, want %q", current, contract.DocsBuild(analysis.Version))
	}
	// What an index built before the chunker's version was recorded holds.
	doc.Analyzer = analysis.Version
	b, err := contract.EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, key, b); err != nil {
		t.Fatal(err)
	}

	second := runNode(t, srv, cfg)
	if got := second.Query.StaleDocs(); got != analysis.Version {
		t.Errorf("StaleDocs = %q, want %q", got, analysis.Version)
	}
	natstest.WaitFor(t, 10*time.Second, "the document to be rebuilt by "+current, func() bool {
		return readDoc().Analyzer == current
	})
	waitSearch(t, srv.NC, "install package manager", "the rebuilt document", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
}
