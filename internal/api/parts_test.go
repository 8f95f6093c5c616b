package api

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A shard reply longer than a NATS message arrives whole, in parts; a
// short one in one message; an error as the error its code stands for;
// and a subject nobody serves as no responders.
func TestShardRepliesComeInParts(t *testing.T) {
	srv := natstest.Start(t, "")
	svc, err := micro.AddService(srv.NC, micro.Config{Name: "partstest", Version: "0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	handler := shardEndpoint(srv.NC, func(r contract.ShardPageRequest) (*contract.ShardSearchReply, error) {
		if r.Key == "missing" {
			return nil, ErrNotFound
		}
		n := len(r.Key) // sections of 64 KB each
		reply := &contract.ShardSearchReply{Shard: 1, Sources: []contract.ShardSource{{Key: r.Key}}}
		for i := range n {
			reply.Hits = append(reply.Hits, contract.ShardHit{ID: string(rune('a' + i%26)), Ord: i, Score: float64(i) / 3,
				Text: strings.Repeat(string(rune('a'+i%26)), 64<<10)})
		}
		return reply, nil
	})
	if err := svc.AddEndpoint("page", handler, micro.WithEndpointSubject("parts.test")); err != nil {
		t.Fatal(err)
	}
	// Parts arrive on the test's own connection's inbox.
	rs := newShardReplies(srv.NC)
	for _, sections := range []int{3, 160} {
		key := strings.Repeat("k", sections)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := rs.request(ctx, "parts.test", contract.ShardPageRequest{Key: key})
		cancel()
		if err != nil {
			t.Fatalf("%d sections: %v", sections, err)
		}
		size := 0
		for i, h := range got.Hits {
			size += len(h.Text)
			if h.Ord != i || h.Score != float64(i)/3 || len(h.Text) != 64<<10 || h.Text[0] != byte('a'+i%26) {
				t.Fatalf("%d sections: hit %d arrived as %d, %v, %d bytes", sections, i, h.Ord, h.Score, len(h.Text))
			}
		}
		if len(got.Hits) != sections || got.Sources[0].Key != key {
			t.Fatalf("%d sections: %d arrived", sections, len(got.Hits))
		}
		if sections == 160 && size <= int(srv.NC.MaxPayload()) {
			t.Fatalf("%d bytes fit in one message of %d: the test sends no parts", size, srv.NC.MaxPayload())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := rs.request(ctx, "parts.test", contract.ShardPageRequest{Key: "missing"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a not found reply: %v", err)
	}
	if _, err := rs.request(ctx, "parts.nobody", contract.ShardPageRequest{Key: "k"}); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("nobody serving: %v", err)
	}
}
