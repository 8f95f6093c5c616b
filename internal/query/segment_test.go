package query

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/segment"
)

// putPage writes a docs page's index document into KH_INDEX, as the
// indexer does.
func putPage(t testing.TB, kv jetstream.KeyValue, an *analysis.Analyzer, seq uint64, path, markdown string) {
	t.Helper()
	chunks, err := chunker.Split(path, []byte(markdown), chunker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := &contract.ChunkSet{Repo: "docs", Path: path, FileSeq: seq, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: chunks}
	val, err := contract.EncodeIndexDoc(indexer.BuildDoc(cs, an))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), contract.DocKey("docs", path), val); err != nil {
		t.Fatal(err)
	}
}

// replica runs a replica until the test ends and waits for it to be
// ready; stop ends it early.
func replica(t testing.TB, js jetstream.JetStream, dir string, logs *natstest.LogBuffer) (r *Replica, stop func()) {
	t.Helper()
	return replicaWith(t, Config{}, js, dir, logs)
}

// replicaWith is replica with a configuration.
func replicaWith(t testing.TB, cfg Config, js jetstream.JetStream, dir string, logs *natstest.LogBuffer) (r *Replica, stop func()) {
	t.Helper()
	if cfg.DefaultTopK == 0 {
		cfg.DefaultTopK, cfg.MaxTopK = 10, 100
	}
	r, err := New(cfg, Deps{JS: js, Logger: slog.New(slog.NewTextHandler(logs, nil)), SegmentDir: dir, SegmentQuiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case <-r.Ready():
	case err := <-done:
		t.Fatalf("replica stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("replica not ready after 20s")
	}
	return r, stop
}

// answers renders the docs searches of the queries, timings aside.
func answers(t testing.TB, r *Replica, queries ...string) string {
	t.Helper()
	var out strings.Builder
	for _, q := range queries {
		resp, err := r.Engine().SearchDocs(contract.SearchRequest{Query: q, TopK: 10, Content: true})
		if err != nil {
			t.Fatal(err)
		}
		resp.TookMicros = 0
		b, _ := json.Marshal(resp)
		fmt.Fprintf(&out, "%s\n", b)
	}
	b, _ := json.Marshal(r.Engine().Stats(true))
	fmt.Fprintf(&out, "%s\n", b)
	return out.String()
}

// segmentAt waits for the replica's segment to reflect revision rev.
func segmentAt(t testing.TB, dir string, rev uint64) {
	t.Helper()
	natstest.WaitFor(t, 10*time.Second, fmt.Sprintf("a segment at revision %d", rev), func() bool {
		seg, err := segment.Open(filepath.Join(dir, SegmentFile))
		if err != nil {
			return false
		}
		defer seg.Release()
		return seg.Meta.Revision == rev
	})
}

var queries = []string{"gateway restart", "token rotation", "quasar operator", "install", "removed page words", "retention policy"}

// A replica restarts from its segment and follows KH_INDEX from the
// revision it reflects: updates, deletions and additions made while it
// was down are all there, nothing removed comes back, and every answer
// equals that of a replica that replayed the bucket.
func TestRestartFromSegmentAppliesWhatChangedMeanwhile(t *testing.T) {
	srv := natstest.Start(t, "")
	kv, err := srv.JS.KeyValue(context.Background(), contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	an := analysis.New()
	putPage(t, kv, an, 1, "gateway.md", "# Gateway\n\nThe gateway restarts cleanly.\n\n## Tokens\n\nToken rotation happens daily.\n")
	putPage(t, kv, an, 2, "gone.md", "# Gone\n\nRemoved page words live here.\n")
	putPage(t, kv, an, 3, "streams.md", "# Streams\n\nThe retention policy keeps the last value.\n")
	dir := t.TempDir()
	var logs natstest.LogBuffer
	first, stop := replica(t, srv.JS, dir, &logs)
	segmentAt(t, dir, first.Engine().Revision())
	// Changes while no replica runs.
	stop()
	putPage(t, kv, an, 4, "gateway.md", "# Gateway\n\nThe gateway restarts in two seconds.\n")
	if err := kv.Delete(context.Background(), contract.DocKey("docs", "gone.md")); err != nil {
		t.Fatal(err)
	}
	putPage(t, kv, an, 5, "quasar.md", "# Quasar\n\nThe quasar operator installs itself.\n")

	var logs2 natstest.LogBuffer
	restarted, _ := replica(t, srv.JS, dir, &logs2)
	if !restarted.seg.loaded || !strings.Contains(logs2.String(), "index segment loaded") {
		t.Fatalf("the replica did not start from its segment:\n%s", logs2.String())
	}
	fresh, _ := replica(t, srv.JS, "", &natstest.LogBuffer{})
	want, got := answers(t, fresh, queries...), answers(t, restarted, queries...)
	if got != want {
		t.Errorf("restarted from the segment:\n%s\nreplayed:\n%s", got, want)
	}
	for _, tc := range []struct {
		q    string
		want string
	}{{"removed page words", ""}, {"quasar operator", "quasar.md"}, {"gateway two seconds", "gateway.md"}} {
		r, _ := restarted.Engine().SearchDocs(contract.SearchRequest{Query: tc.q})
		var paths []string
		for _, h := range r.Hits {
			paths = append(paths, h.Path)
		}
		if tc.want == "" && strings.Contains(strings.Join(paths, " "), "gone.md") || tc.want != "" && (len(paths) == 0 || paths[0] != tc.want) {
			t.Errorf("%q: %v, want %q first", tc.q, paths, tc.want)
		}
	}
	// The restarted replica writes its segment again once it caught up.
	segmentAt(t, dir, restarted.Engine().Revision())
}

// A segment that is damaged, of another layout, of another analyzer or
// of another bucket is not used: the replica says why, replays the
// bucket, answers as a fresh replica, and writes a good segment.
func TestUnusableSegmentIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		spoil     func(t *testing.T, path string)
	}{
		{"damaged", "level=WARN msg=\"index segment unreadable", func(t *testing.T, path string) {
			edit(t, path, func(b []byte) { b[len(b)/2] ^= 0x10 })
		}},
		{"older layout", "level=INFO msg=\"index segment of another layout", func(t *testing.T, path string) {
			edit(t, path, func(b []byte) { binary.LittleEndian.PutUint32(b[8:], segment.Layout-1) })
		}},
		{"another analyzer", "built for", func(t *testing.T, path string) {
			respell(t, path, func(m *segment.Meta) { m.Builds[contract.CollectionDocs] = "an-older-analyzer" })
		}},
		{"another bucket", "another KH_INDEX bucket", func(t *testing.T, path string) {
			respell(t, path, func(m *segment.Meta) { m.Bucket = "2001-01-01T00:00:00Z" })
		}},
		{"ahead of the bucket", "beyond the bucket", func(t *testing.T, path string) {
			respell(t, path, func(m *segment.Meta) { m.Revision += 100 })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := natstest.Start(t, "")
			kv, err := srv.JS.KeyValue(context.Background(), contract.BucketIndex)
			if err != nil {
				t.Fatal(err)
			}
			an := analysis.New()
			putPage(t, kv, an, 1, "gateway.md", "# Gateway\n\nThe gateway restarts cleanly.\n\n## Tokens\n\nToken rotation happens daily.\n")
			putPage(t, kv, an, 2, "streams.md", "# Streams\n\nThe retention policy keeps the last value.\n")
			dir := t.TempDir()
			first, stop := replica(t, srv.JS, dir, &natstest.LogBuffer{})
			rev := first.Engine().Revision()
			segmentAt(t, dir, rev)
			want := answers(t, first, queries...)
			stop()
			tc.spoil(t, filepath.Join(dir, SegmentFile))
			var logs natstest.LogBuffer
			again, _ := replica(t, srv.JS, dir, &logs)
			if again.seg.loaded || !strings.Contains(logs.String(), tc.log) || !strings.Contains(logs.String(), "rebuilding it from the bucket") {
				t.Errorf("loaded %v; logs lack %q:\n%s", again.seg.loaded, tc.log, logs.String())
			}
			if got := answers(t, again, queries...); got != want {
				t.Errorf("after the rebuild:\n%s\nwant:\n%s", got, want)
			}
			natstest.WaitFor(t, 10*time.Second, "a good segment again", func() bool {
				seg, err := segment.Open(filepath.Join(dir, SegmentFile))
				if err != nil {
					return false
				}
				defer seg.Release()
				return seg.Meta.Revision == rev && seg.Meta.Builds[contract.CollectionDocs] == built(contract.CollectionDocs) && seg.Meta.Bucket != "2001-01-01T00:00:00Z"
			})
		})
	}
}

func edit(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// respell rewrites a segment with its meta changed.
func respell(t *testing.T, path string, fn func(*segment.Meta)) {
	t.Helper()
	seg, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := seg.Meta
	var cols []segment.Collection
	for _, c := range []string{contract.CollectionDocs, contract.CollectionTools, contract.CollectionKB} {
		snap, err := seg.Collection(c, func(string, []byte) (any, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, segment.Collection{Name: c, Snapshot: snap})
	}
	fn(&m)
	if err := segment.Write(path, m, cols, func(string, any) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
}

// A bucket purged while the replica was down (as the integrity check
// does to rebuild a damaged store) leaves no deletion markers: the
// restarted replica still drops the documents the bucket lost, keeps
// those written again, and answers as a replica that replayed it.
func TestRestartAfterAPurgeDropsWhatTheBucketLost(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	kv, err := srv.JS.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	an := analysis.New()
	putPage(t, kv, an, 1, "gateway.md", "# Gateway\n\nThe gateway restarts cleanly.\n")
	putPage(t, kv, an, 2, "gone.md", "# Gone\n\nRemoved page words live here.\n")
	dir := t.TempDir()
	first, stop := replica(t, srv.JS, dir, &natstest.LogBuffer{})
	segmentAt(t, dir, first.Engine().Revision())
	stop()
	str, err := srv.JS.Stream(ctx, "KV_"+contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	if err := str.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	putPage(t, kv, an, 3, "gateway.md", "# Gateway\n\nThe gateway restarts cleanly.\n")
	var logs natstest.LogBuffer
	restarted, _ := replica(t, srv.JS, dir, &logs)
	if !restarted.seg.loaded || !strings.Contains(logs.String(), "documents=1") {
		t.Errorf("loaded %v; logs:\n%s", restarted.seg.loaded, logs.String())
	}
	fresh, _ := replica(t, srv.JS, "", &natstest.LogBuffer{})
	if got, want := answers(t, restarted, queries...), answers(t, fresh, queries...); got != want {
		t.Errorf("restarted from the segment:\n%s\nreplayed:\n%s", got, want)
	}
}

// A write that never finished (a crash) leaves a temporary file, which
// the next start removes once it is old enough not to be another
// replica's write in progress.
func TestStartRemovesUnfinishedSegmentFiles(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	old, recent := filepath.Join(dir, SegmentFile+".tmp-1"), filepath.Join(dir, SegmentFile+".tmp-2")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("half a segment"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	replica(t, srv.JS, dir, &natstest.LogBuffer{})
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an hour-old temporary file: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a temporary file just written: %v", err)
	}
}

// A replica that built its index on the heap reads it from the first
// segment it writes, once nothing changed since: it answers as before,
// and takes updates after as any replica does.
func TestReplicaReadsItsIndexFromTheSegmentItWrote(t *testing.T) {
	srv := natstest.Start(t, "")
	kv, err := srv.JS.KeyValue(context.Background(), contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	an := analysis.New()
	putPage(t, kv, an, 1, "gateway.md", "# Gateway\n\nThe gateway restarts cleanly.\n\n## Tokens\n\nToken rotation happens daily.\n")
	putPage(t, kv, an, 2, "streams.md", "# Streams\n\nThe retention policy keeps the last value.\n")
	dir := t.TempDir()
	var logs natstest.LogBuffer
	r, _ := replica(t, srv.JS, dir, &logs)
	before := answers(t, r, queries...)
	natstest.WaitFor(t, 10*time.Second, "the replica to read its index from its segment", func() bool {
		return strings.Contains(logs.String(), "index now read from its segment")
	})
	if after := answers(t, r, queries...); after != before {
		t.Errorf("answers changed when the index moved to the segment:\n%s\nbefore:\n%s", after, before)
	}
	putPage(t, kv, an, 3, "quasar.md", "# Quasar\n\nThe quasar operator installs itself.\n")
	natstest.WaitFor(t, 10*time.Second, "the new page searchable", func() bool {
		resp, err := r.Engine().SearchDocs(contract.SearchRequest{Query: "quasar operator"})
		return err == nil && len(resp.Hits) > 0 && resp.Hits[0].Path == "quasar.md"
	})
	segmentAt(t, dir, r.Engine().Revision())
	if n := strings.Count(logs.String(), "index now read from its segment"); n != 1 {
		t.Errorf("the replica moved its index to a segment %d times, want once", n)
	}
}
