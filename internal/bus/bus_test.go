package bus_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// counter counts a handler's deliveries per stream sequence.
type counter struct {
	mu sync.Mutex
	n  map[uint64]int
}

func (c *counter) add(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[uint64]int{}
	}
	c.n[seq]++
}

func (c *counter) get(seq uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[seq]
}

// runBus runs a bus whose one consumer on KH_FILES fails every message
// permanently, and returns the counter of its deliveries.
func runBus(t *testing.T, srv *natstest.Server, c bus.Consumer, log *slog.Logger) *counter {
	t.Helper()
	b, err := bus.New(srv.NC, log)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{}
	err = b.Handle(c, func(ctx context.Context, m *bus.Message) error {
		cnt.add(m.Seq)
		return bus.Permanent(errors.New("always poison"))
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-b.Running():
	case <-time.After(10 * time.Second):
		t.Fatal("bus not running")
	}
	return cnt
}

func dlqMsgs(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), contract.StreamDLQ)
	if err != nil {
		return 0
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A poison message published with a Nats-Expected-Last-Subject-Sequence
// header (as `knowhub reindex` publishes) is dead-lettered once: the
// header is not copied onto the KH_DLQ publish, where it would fail.
func TestPoisonWithNatsHeadersIsDeadLetteredOnce(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	subj := contract.SubjectFiles + ".docs.00000000000000aa"
	first, err := srv.JS.Publish(ctx, subj, []byte("{bad"))
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(subj)
	m.Data = []byte("{also bad")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(first.Sequence, 10))
	m.Header.Set(nats.MsgIdHdr, "poison-1")
	second, err := srv.JS.PublishMsg(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	cnt := runBus(t, srv, bus.Consumer{Stage: "test", Stream: contract.StreamFiles, Durable: "test", Filter: subj, Concurrency: 1},
		slog.New(slog.DiscardHandler))
	deadline := time.Now().Add(10 * time.Second)
	for dlqMsgs(t, srv.JS) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("poison message not dead-lettered in 10s; delivered %d times", cnt.get(second.Sequence))
		}
		time.Sleep(10 * time.Millisecond)
	}
	dl, err := mustStream(t, srv.JS, contract.StreamDLQ).GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := dl.Header.Get(contract.HeaderOrigSeq); got != strconv.FormatUint(second.Sequence, 10) {
		t.Errorf("dead letter is of sequence %s, want %d", got, second.Sequence)
	}
	for k := range dl.Header {
		if strings.HasPrefix(strings.ToLower(k), "nats-") {
			t.Errorf("dead letter carries header %s", k)
		}
	}
	// The message is acknowledged once dead-lettered: no redelivery.
	natstest.WaitFor(t, 10*time.Second, "the consumer to have nothing pending", func() bool {
		c, err := srv.JS.Consumer(ctx, contract.StreamFiles, "test")
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	if n := cnt.get(second.Sequence); n != 1 {
		t.Errorf("poison message delivered %d times, want 1", n)
	}
}

func mustStream(t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// When the dead-letter publish itself keeps failing (the dead-letter
// stream is gone, or JetStream has no room), the message is neither acked
// nor dropped: it is redelivered with growing delays until its dead letter
// is stored.
func TestFailingDeadLetterKeepsTheMessage(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	if err := srv.JS.DeleteStream(ctx, contract.StreamDLQ); err != nil {
		t.Fatal(err)
	}
	subj := contract.SubjectFiles + ".docs.00000000000000bb"
	pub, err := srv.JS.Publish(ctx, subj, []byte("{bad"))
	if err != nil {
		t.Fatal(err)
	}
	c := bus.Consumer{Stage: "test", Stream: contract.StreamFiles, Durable: "test", Filter: subj, Concurrency: 1,
		NakDelay: 10 * time.Millisecond, MaxNakDelay: 40 * time.Millisecond}
	cnt := runBus(t, srv, c, slog.New(slog.DiscardHandler))
	// Well past the ten deliveries after which it used to be dropped.
	natstest.WaitFor(t, 20*time.Second, "a dozen deliveries", func() bool { return cnt.get(pub.Sequence) >= 12 })
	cons, err := srv.JS.Consumer(ctx, contract.StreamFiles, "test")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending+int(info.NumPending) != 1 {
		t.Fatalf("the message whose dead letter failed is no longer pending: %+v", info)
	}
	// The dead-letter stream is back: the dead letter is stored and only
	// then is the message acknowledged.
	if _, err := srv.JS.CreateStream(ctx, jetstream.StreamConfig{Name: contract.StreamDLQ, Subjects: []string{contract.SubjectDLQ + ".>"}}); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, "the dead letter stored and the message acked", func() bool {
		dlq, err := mustStream(t, srv.JS, contract.StreamDLQ).Info(ctx)
		if err != nil || dlq.State.Msgs != 1 {
			return false
		}
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
}

func TestNakDelayDoublesUpToItsBound(t *testing.T) {
	for delivered, want := range map[uint64]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 1000: 30 * time.Second} {
		if got := bus.NakDelay(time.Second, 30*time.Second, delivered); got != want {
			t.Errorf("delivery %d: delay %s, want %s", delivered, got, want)
		}
	}
}

// A handler that cannot store its result because JetStream has no room
// is not poison: the message is not dead-lettered but redelivered until
// the write succeeds.
func TestStorageFullIsRetriedNotDeadLettered(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	subj := contract.SubjectFiles + ".docs.00000000000000cc"
	pub, err := srv.JS.Publish(ctx, subj, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bus.New(srv.NC, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{}
	full := &jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}
	c := bus.Consumer{Stage: "test", Stream: contract.StreamFiles, Durable: "test", Filter: subj, Concurrency: 1,
		MaxRetries: 1, NakDelay: 10 * time.Millisecond, MaxNakDelay: 20 * time.Millisecond}
	err = b.Handle(c, func(ctx context.Context, m *bus.Message) error {
		cnt.add(m.Seq)
		if cnt.get(m.Seq) < 20 {
			return fmt.Errorf("publish chunk set: %w", full)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	cons := func() *jetstream.ConsumerInfo {
		c, err := srv.JS.Consumer(ctx, contract.StreamFiles, "test")
		if err != nil {
			return nil
		}
		info, err := c.Info(ctx)
		if err != nil {
			return nil
		}
		return info
	}
	natstest.WaitFor(t, 20*time.Second, "the write to succeed and the message acked", func() bool {
		info := cons()
		return cnt.get(pub.Sequence) >= 20 && info != nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	dlq, err := mustStream(t, srv.JS, contract.StreamDLQ).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dlq.State.Msgs != 0 {
		t.Errorf("%d dead letters for a message that failed for want of storage", dlq.State.Msgs)
	}
}
