package query

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/segment"
)

var (
	segmentFile = flag.String("segment", "", "a segment file for BenchmarkSegmentThroughObjectStore")
	objectURL   = flag.String("objects-url", "", "the NATS server BenchmarkSegmentThroughObjectStore puts the segment in (default: an embedded one)")
)

// BenchmarkSegmentThroughObjectStore measures what publishing segments in
// JetStream's object store would cost a new replica on another machine:
// putting a segment file into a file-backed object store bucket, then
// getting it back into a file and opening it (checksums included), on an
// embedded server. The alternative it is weighed against is replaying
// KH_INDEX (docs/performance.md). Run by hand on a real segment:
//
//	go test ./internal/query -run '^$' -bench SegmentThroughObjectStore -benchtime 1x -segment PATH [-objects-url nats://HOST:4222]
func BenchmarkSegmentThroughObjectStore(b *testing.B) {
	if *segmentFile == "" {
		b.Skip("no -segment file")
	}
	fi, err := os.Stat(*segmentFile)
	if err != nil {
		b.Fatal(err)
	}
	nc := natstest.Start(b, "").NC
	if *objectURL != "" {
		var err error
		if nc, err = nats.Connect(*objectURL); err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
	}
	// Without a deadline, a read waits the client's default (5 s) for
	// each chunk of a large object.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// With more than one chunk in flight, the put of a segment of the
	// archive is refused (JSStreamTooManyRequests, 429) by the embedded
	// server and by a stand-alone one alike.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1))
	if err != nil {
		b.Fatal(err)
	}
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "KH_SEGMENTS_BENCH", Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(b.TempDir(), "index.seg")
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		src, err := os.Open(*segmentFile)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: "docs"}, src); err != nil {
			b.Fatal(err)
		}
		src.Close()
		r, err := obs.Get(ctx, "docs")
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(dst)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, r); err != nil {
			b.Fatal(err)
		}
		r.Close()
		if err := out.Close(); err != nil {
			b.Fatal(err)
		}
		seg, err := segment.Open(dst)
		if err != nil {
			b.Fatal(err)
		}
		seg.Release()
	}
}
