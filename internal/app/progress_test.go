package app

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// BenchmarkReadProgress is one poll of the pipeline's position, which
// WaitCaughtUp makes every 20 ms while a node syncs.
func BenchmarkReadProgress(b *testing.B) {
	srv := natstest.Start(b, "")
	ctx := context.Background()
	for _, subj := range []string{contract.FileSubject("docs", "a.md"), contract.ChunkSubject("docs", "a.md")} {
		if _, err := srv.JS.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: []byte("x")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadProgress(ctx, srv.JS); err != nil {
			b.Fatal(err)
		}
	}
}
