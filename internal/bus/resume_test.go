package bus_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// startBus runs a bus on its own connection with handler h for the
// default consumer settings of stage "resume"; stop ends it.
func startBus(t *testing.T, srv *natstest.Server, c bus.Consumer, h bus.Handler) (nc *nats.Conn, stop func()) {
	t.Helper()
	nc, err := broker.Connect(broker.ClientConfig{URL: srv.ClientURL(), Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bus.New(nc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Handle(c, h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	select {
	case <-b.Running():
	case <-time.After(10 * time.Second):
		t.Fatal("bus not running")
	}
	var once atomic.Bool
	return nc, func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			<-done
			nc.Close()
		}
	}
}

// A worker that dies holding a message (its connection gone without an
// ack or a nak, as after kill -9) releases it within a couple of seconds:
// a restarted worker picks it up without waiting out a long ack wait.
func TestWorkHeldByADeadWorkerResumesQuickly(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	subj := contract.SubjectFiles + ".docs.00000000000000cc"
	c := bus.Consumer{Stage: "resume", Stream: contract.StreamFiles, Durable: "resume", Filter: subj, Concurrency: 1}
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	nc1, stop1 := startBus(t, srv, c, func(ctx context.Context, m *bus.Message) error {
		held <- struct{}{}
		<-release // hangs until the test ends
		return nil
	})
	defer stop1()
	defer close(release) // before stop1: the hung handler returns
	if _, err := srv.JS.Publish(ctx, subj, []byte("work")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("first worker never got the message")
	}
	// kill -9: the connection drops with the message unacknowledged.
	nc1.Close()
	killed := time.Now()
	got := make(chan time.Duration, 1)
	_, stop2 := startBus(t, srv, c, func(ctx context.Context, m *bus.Message) error {
		select {
		case got <- time.Since(killed):
		default:
		}
		return nil
	})
	defer stop2()
	select {
	case d := <-got:
		t.Logf("held message redelivered %s after its worker died", d.Round(10*time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("held message not redelivered within 5s of its worker's death")
	}
}

// A handler that runs longer than the ack wait is kept alive by
// in-progress acks: its message is not redelivered meanwhile.
func TestSlowHandlerIsNotRedelivered(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	subj := contract.SubjectFiles + ".docs.00000000000000dd"
	c := bus.Consumer{Stage: "slow", Stream: contract.StreamFiles, Durable: "slow", Filter: subj, Concurrency: 2, AckWait: 300 * time.Millisecond}
	var calls atomic.Int32
	done := make(chan struct{})
	_, stop := startBus(t, srv, c, func(ctx context.Context, m *bus.Message) error {
		if calls.Add(1) == 1 {
			<-time.After(4 * c.AckWait) // slow work
			close(done)
		}
		return nil
	})
	defer stop()
	if _, err := srv.JS.Publish(ctx, subj, []byte("slow work")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("slow handler never finished")
	}
	natstest.WaitFor(t, 5*time.Second, "the message acknowledged", func() bool {
		cons, err := srv.JS.Consumer(ctx, contract.StreamFiles, "slow")
		if err != nil {
			return false
		}
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0
	})
	if n := calls.Load(); n != 1 {
		t.Errorf("slow message handled %d times, want 1", n)
	}
}
