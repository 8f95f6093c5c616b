package broker

import (
	"context"
	"testing"
	"time"
)

// The embedded server's buffers are bounded by BufferLimit (16 MiB unless
// set), never below the largest message it accepts, and its memory store
// by MaxMemoryStore.
func TestEmbeddedBuffersAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		payload     int32
		limit, want int64
	}{
		{"default", 0, 0, DefaultBufferLimit},
		{"configured", 1 << 20, 4 << 20, 4 << 20},
		{"raised to the max payload", 32 << 20, 16 << 20, 32 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e, err := StartEmbedded(ctx, EmbeddedConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir(), MaxPayload: tc.payload, BufferLimit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Shutdown()
			v, err := e.srv.Varz(nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.MaxPending != tc.want {
				t.Errorf("max_pending %d, want %d", v.MaxPending, tc.want)
			}
			if v.JetStream.Config == nil || v.JetStream.Config.MaxMemory != MaxMemoryStore {
				t.Errorf("JetStream config %+v, want max memory %d", v.JetStream.Config, MaxMemoryStore)
			}
			if e.opts.StreamMaxBufferedSize != tc.want || e.opts.StreamMaxBufferedMsgs != MaxBufferedMsgs {
				t.Errorf("stream ingest queue bounded at %d bytes and %d messages, want %d and %d",
					e.opts.StreamMaxBufferedSize, e.opts.StreamMaxBufferedMsgs, tc.want, MaxBufferedMsgs)
			}
		})
	}
}
