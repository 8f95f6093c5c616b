package query

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/segment"
)

// SegmentFile is the name of a replica's segment file in its segment
// directory.
const SegmentFile = "index.seg"

// segState is what a replica knows of its segment file.
type segState struct {
	dir   string
	quiet time.Duration
	// bucket identifies KH_INDEX (see bucketID), and last is its last
	// revision when the replica started.
	bucket string
	last   uint64
	// loaded is set when the replica started from its segment.
	loaded bool
	// written is the revision of the segment on disk; busy is set while
	// one is being written. Both belong to the follow loop.
	written uint64
	busy    chan struct{}
	wg      sync.WaitGroup
	// wrote carries the revision of each segment written; swapped is
	// set once the replica reads its index from a segment it wrote
	// (see swapToSegment). Both belong to the follow loop.
	wrote   chan uint64
	swapped bool
	// mapped is set once the index is read from a segment: loaded at
	// start or swapped to (FromSegment).
	mapped atomic.Bool
}

// FromSegment reports whether the replica reads its index from a segment
// file: one it started from, or one it wrote (see swapToSegment).
func (s *Replica) FromSegment() bool { return s.seg.mapped.Load() }

// wait waits for a segment being written.
func (st *segState) wait() { st.wg.Wait() }

// bucketID identifies the KH_INDEX bucket by its stream's creation time,
// and returns its last revision.
func (s *Replica) bucketID(ctx context.Context) (string, uint64, error) {
	str, err := s.js.Stream(ctx, "KV_"+contract.BucketIndex)
	if err != nil {
		return "", 0, err
	}
	info, err := str.Info(ctx)
	if err != nil {
		return "", 0, err
	}
	return info.Created.UTC().Format(time.RFC3339Nano), info.State.LastSeq, nil
}

// builds is what this build stamps on each collection's documents.
func builds() map[string]string {
	out := make(map[string]string, len(engine.Collections))
	for _, c := range engine.Collections {
		out[c] = built(c)
	}
	return out
}

// openSegment loads the replica's segment into its engine and returns the
// KH_INDEX revision it reflects. It reports false, saying why, when there
// is none or it cannot be used (damaged, of another layout, analyzer or
// bucket): the replica then replays the bucket, and writes a new one.
func (s *Replica) openSegment(ctx context.Context, kv jetstream.KeyValue) (uint64, bool) {
	path := filepath.Join(s.seg.dir, SegmentFile)
	start := time.Now()
	s.removeStale(path)
	seg, err := segment.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Info("no index segment yet: loading the index from the bucket", "path", path)
		return 0, false
	case errors.Is(err, segment.ErrLayout):
		s.log.Info("index segment of another layout: rebuilding it from the bucket", "path", path, "err", err)
		return 0, false
	case err != nil:
		s.log.Warn("index segment unreadable: rebuilding it from the bucket", "path", path, "err", err)
		return 0, false
	}
	rev, err := s.restore(seg)
	if err != nil {
		seg.Release()
		s.log.Warn("index segment not used: rebuilding it from the bucket", "path", path, "err", err)
		return 0, false
	}
	gone, err := s.dropGone(ctx, kv)
	if err != nil {
		// The engine holds the segment's documents: start it afresh.
		if err := s.engine.Restore(nil, 0); err != nil {
			s.log.Error("empty the index", "err", err)
		}
		s.log.Warn("index segment not used: rebuilding it from the bucket", "path", path, "err", err)
		return 0, false
	}
	if gone > 0 {
		s.log.Warn("index segment held documents the bucket lost without a deletion (a purge); removed", "documents", gone)
	}
	seg.Settle()
	s.seg.loaded, s.seg.written = true, rev
	s.seg.mapped.Store(true)
	if seg.Meta.StaleDocs != "" {
		v := seg.Meta.StaleDocs
		s.staleDocs.Store(&v)
	}
	s.log.Info("index segment loaded", "path", path, "revision", rev, "took", time.Since(start).Round(time.Millisecond))
	return rev, true
}

// staleAfter is how old a temporary segment file must be to be left
// over by a write that never finished (a crash) rather than one going on
// in another replica sharing the directory.
const staleAfter = 10 * time.Minute

// removeStale removes the temporary files that writes of path left
// behind.
func (s *Replica) removeStale(path string) {
	tmps, _ := filepath.Glob(path + ".tmp-*")
	for _, tmp := range tmps {
		if fi, err := os.Stat(tmp); err == nil && time.Since(fi.ModTime()) > staleAfter {
			if err := os.Remove(tmp); err == nil {
				s.log.Info("removed an unfinished segment file", "path", tmp)
			}
		}
	}
}

// restore checks a segment against the bucket and this build, and loads
// it into the engine.
func (s *Replica) restore(seg *segment.Segment) (uint64, error) {
	m, bucket, last := seg.Meta, s.seg.bucket, s.seg.last
	if m.Bucket != bucket {
		return 0, fmt.Errorf("segment of another %s bucket (made %s, this one %s)", contract.BucketIndex, m.Bucket, bucket)
	}
	if m.Revision > last {
		return 0, fmt.Errorf("segment at revision %d, beyond the bucket's %d", m.Revision, last)
	}
	for c, want := range builds() {
		if got := m.Builds[c]; got != want {
			return 0, fmt.Errorf("segment of %s built for %q, this build is %q", c, got, want)
		}
	}
	if m.Shard != s.shard() {
		return 0, fmt.Errorf("segment of shard %q, this replica's is %q", m.Shard, s.shard())
	}
	snaps := make(map[string]*search.Snapshot, len(engine.Collections))
	for _, c := range engine.Collections {
		if !seg.Has(c) {
			return 0, fmt.Errorf("segment has no collection %s", c)
		}
		snap, err := seg.Collection(c, engine.DecodeExtra)
		if err != nil {
			return 0, err
		}
		snaps[c] = snap
	}
	if err := s.engine.Restore(snaps, m.Revision); err != nil {
		return 0, err
	}
	return m.Revision, nil
}

// dropGone removes from the engine every document whose key the bucket
// no longer holds, and returns how many. A deletion leaves a marker that
// the watch from the segment's revision applies, but a purge of the
// bucket's stream (a store rebuilt, markers purged) leaves none. A key
// that comes back after the listing has a revision beyond the segment's,
// which the watch applies.
func (s *Replica) dropGone(ctx context.Context, kv jetstream.KeyValue) (int, error) {
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", contract.BucketIndex, err)
	}
	live := make(map[string]bool)
	for k := range lister.Keys() {
		live[k] = true
	}
	if err := ctx.Err(); err != nil {
		return 0, err // the listing may be incomplete
	}
	gone := 0
	for _, k := range s.engine.Keys() {
		if !live[k] {
			s.engine.Apply(k, nil, 0)
			gone++
		}
	}
	return gone, nil
}

// saveSegment writes the engine's segment when it changed since the last
// one, unless one is being written: then it tries again after a quiet
// period (when quiet is set). It runs on the follow loop, between two
// updates, so that the snapshot and its revision agree; the file is
// written in the background.
func (s *Replica) saveSegment(quiet *time.Timer) {
	st := &s.seg
	if st.dir == "" || s.engine.Revision() == st.written {
		return
	}
	if st.busy != nil {
		select {
		case <-st.busy:
			st.busy = nil
		default:
			if quiet != nil {
				quiet.Reset(st.quiet)
			}
			return
		}
	}
	start := time.Now()
	snaps, rev := s.engine.Snapshot()
	took := time.Since(start)
	cols := make([]segment.Collection, 0, len(engine.Collections))
	for _, c := range engine.Collections {
		cols = append(cols, segment.Collection{Name: c, Snapshot: snaps[c]})
	}
	meta := segment.Meta{Revision: rev, Bucket: st.bucket, Builds: builds(), StaleDocs: s.StaleDocs(), Shard: s.shard(), Written: time.Now().UTC()}
	st.written = rev
	done := make(chan struct{})
	st.busy = done
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		defer close(done)
		path := filepath.Join(st.dir, SegmentFile)
		if err := segment.Write(path, meta, cols, engine.EncodeExtra); err != nil {
			s.log.Warn("index segment not written", "path", path, "err", err)
			return
		}
		s.log.Info("index segment written", "path", path, "revision", rev, "snapshot", took.Round(time.Millisecond),
			"took", time.Since(start).Round(time.Millisecond))
		select {
		case st.wrote <- rev:
		default:
		}
	}()
}

// swapToSegment makes a replica that built its index on the heap (a first
// start, or a segment it could not use) read it from the segment it has
// just written at revision rev, if nothing changed since: the postings,
// text and vectors then leave the Go heap for the file's map, as after a
// restart. It runs once per process, on the follow loop, between two
// updates; a replica that started from a segment reads from it already.
// (Each swap maps a file for good: doing it once keeps the files a
// replica holds to two, as a restart does.)
func (s *Replica) swapToSegment(rev uint64) {
	st := &s.seg
	if st.loaded || st.swapped || s.engine.Revision() != rev {
		return
	}
	st.swapped = true
	start := time.Now()
	path := filepath.Join(st.dir, SegmentFile)
	seg, err := segment.Open(path)
	if err != nil {
		s.log.Warn("index segment not read back: the index stays on the heap", "path", path, "err", err)
		return
	}
	if seg.Meta.Revision != rev {
		seg.Release() // another replica's, sharing the directory
		return
	}
	snaps := make(map[string]*search.Snapshot, len(engine.Collections))
	for _, c := range engine.Collections {
		if snaps[c], err = seg.Collection(c, engine.DecodeExtra); err != nil {
			break
		}
	}
	if err == nil {
		err = s.engine.Restore(snaps, rev)
	}
	if err != nil {
		seg.Release()
		s.log.Warn("index segment not read back: the index stays on the heap", "path", path, "err", err)
		return
	}
	seg.Settle()
	st.mapped.Store(true)
	// The heap index is garbage now; the runtime hands its pages back to
	// the OS as it scavenges.
	s.log.Info("index now read from its segment", "path", path, "revision", rev, "took", time.Since(start).Round(time.Millisecond))
}

// shard names the replica's docs shard as a segment records it: "" when
// not sharded, else "<shard>/<shards>".
func (s *Replica) shard() string {
	i, n := s.engine.Shard()
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", i, n)
}
