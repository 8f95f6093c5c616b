package api

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/natstest"
)

// laneService serves h on subject "lane.test" through l, over a real NATS
// micro service.
func laneService(t *testing.T, nc *nats.Conn, l *lane, h micro.HandlerFunc) {
	t.Helper()
	svc, err := micro.AddService(nc, micro.Config{Name: "lanetest", Version: "0.0.1", QueueGroup: "lanetest"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("test", l.handler(h, nil), micro.WithEndpointSubject("lane.test")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = svc.Stop()
		l.stop()
	})
}

// replies collects the replies to requests published on one inbox.
type replies struct {
	mu   sync.Mutex
	msgs map[string]*nats.Msg
}

func collect(t *testing.T, nc *nats.Conn) (string, *replies) {
	t.Helper()
	r := &replies{msgs: map[string]*nats.Msg{}}
	inbox := nats.NewInbox()
	sub, err := nc.Subscribe(inbox+".*", func(m *nats.Msg) {
		r.mu.Lock()
		r.msgs[m.Subject[len(inbox)+1:]] = m
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return inbox, r
}

func (r *replies) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func (r *replies) get(id string) *nats.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msgs[id]
}

// A lane of n workers runs n requests at once, never more, queues the
// next ones up to its bound and refuses the one after with a 503
// overload error; once the handlers return, every queued request is
// answered.
func TestLaneRunsRequestsInParallelUpToItsBound(t *testing.T) {
	const workers, queue = 4, 8
	srv := natstest.Start(t, "")
	l := newLane(srv.NC, workers, queue)
	var inside, most atomic.Int32
	release := make(chan struct{})
	laneService(t, srv.NC, l, func(req micro.Request) {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release // a barrier: only all workers inside at once get past the WaitFor below
		inside.Add(-1)
		_ = req.Respond(req.Data())
	})
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	inbox, got := collect(t, client)
	for i := range workers + queue {
		id := strconv.Itoa(i)
		if err := client.PublishRequest("lane.test", inbox+"."+id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	natstest.WaitFor(t, 10*time.Second, "every worker inside its handler at once", func() bool {
		return inside.Load() == workers
	})
	natstest.WaitFor(t, 10*time.Second, "the queue to fill", func() bool { return l.queued() == queue })

	over, err := client.Request("lane.test", []byte("one too many"), 10*time.Second)
	if err != nil {
		t.Fatalf("a request beyond the queue got no reply: %v", err)
	}
	if code, desc := over.Header.Get(micro.ErrorCodeHeader), over.Header.Get(micro.ErrorHeader); code != "503" || desc != overloadedMessage {
		t.Fatalf("a request beyond the queue: code %q, error %q; want 503 %q", code, desc, overloadedMessage)
	}
	if got.count() != 0 {
		t.Fatalf("%d requests answered while every handler was blocked", got.count())
	}

	close(release)
	natstest.WaitFor(t, 10*time.Second, "every queued request answered", func() bool { return got.count() == workers+queue })
	for i := range workers + queue {
		id := strconv.Itoa(i)
		if m := got.get(id); m.Header.Get(micro.ErrorHeader) != "" || string(m.Data) != id {
			t.Errorf("request %s: reply %q, error %q", id, m.Data, m.Header.Get(micro.ErrorHeader))
		}
	}
	if m := most.Load(); m != workers {
		t.Errorf("at most %d handlers ran at once, want exactly the bound %d", m, workers)
	}
}

// A lane of one worker answers requests pipelined by one client in the
// order they were sent, as writes need.
func TestSerialLaneKeepsOrder(t *testing.T) {
	srv := natstest.Start(t, "")
	var mu sync.Mutex
	var order []string
	laneService(t, srv.NC, newLane(srv.NC, 1, DefaultQueue), func(req micro.Request) {
		mu.Lock()
		order = append(order, string(req.Data()))
		mu.Unlock()
		_ = req.Respond(nil)
	})
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	inbox, got := collect(t, client)
	const n = 200
	for i := range n {
		id := strconv.Itoa(i)
		if err := client.PublishRequest("lane.test", inbox+"."+id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	natstest.WaitFor(t, 10*time.Second, "every request answered", func() bool { return got.count() == n })
	mu.Lock()
	defer mu.Unlock()
	for i, id := range order {
		if id != strconv.Itoa(i) {
			t.Fatalf("request %d handled in position %d: %v", i, i, order)
		}
	}
}

// Stopping a lane answers the requests still queued with a 503 rather than
// leaving their callers to time out.
func TestLaneStopAnswersQueued(t *testing.T) {
	srv := natstest.Start(t, "")
	l := newLane(srv.NC, 1, 4)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	laneService(t, srv.NC, l, func(req micro.Request) {
		entered <- struct{}{}
		<-release
		_ = req.Respond([]byte("done"))
	})
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	inbox, got := collect(t, client)
	for i := range 3 {
		if err := client.PublishRequest("lane.test", inbox+"."+strconv.Itoa(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	<-entered
	natstest.WaitFor(t, 10*time.Second, "two requests queued", func() bool { return l.queued() == 2 })
	stopped := make(chan struct{})
	go func() { l.stop(); close(stopped) }()
	natstest.WaitFor(t, 10*time.Second, "the lane to refuse work", func() bool {
		select {
		case <-l.quit:
			return true
		default:
			return false
		}
	})
	close(release)
	<-stopped
	natstest.WaitFor(t, 10*time.Second, "three replies", func() bool { return got.count() == 3 })
	if m := got.get("0"); string(m.Data) != "done" {
		t.Errorf("the running request: %q, error %q", m.Data, m.Header.Get(micro.ErrorHeader))
	}
	for _, id := range []string{"1", "2"} {
		if m := got.get(id); m.Header.Get(micro.ErrorCodeHeader) != "503" || m.Header.Get(micro.ErrorHeader) != stoppingMessage {
			t.Errorf("queued request %s: code %q, error %q", id, m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader))
		}
	}
}

// Workers reply as micro's handlers do: data, headers and error replies
// arrive intact, while micro's service goes on with the next request.
func TestLaneReplies(t *testing.T) {
	srv := natstest.Start(t, "")
	laneService(t, srv.NC, newLane(srv.NC, 4, DefaultQueue), func(req micro.Request) {
		switch string(req.Data()) {
		case "json":
			_ = req.RespondJSON(map[string]string{"echo": req.Headers().Get("X-Echo")})
		default:
			_ = req.Error("404", "no such thing: "+string(req.Data()), nil)
		}
	})
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	inbox, got := collect(t, client)
	const n = 100
	for i := range n {
		m := nats.NewMsg("lane.test")
		m.Reply = inbox + "." + strconv.Itoa(i)
		m.Data = []byte(strconv.Itoa(i))
		if i%2 == 0 {
			m.Data = []byte("json")
			m.Header.Set("X-Echo", strconv.Itoa(i))
		}
		if err := client.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	natstest.WaitFor(t, 10*time.Second, "every request answered", func() bool { return got.count() == n })
	for i := range n {
		m := got.get(strconv.Itoa(i))
		if i%2 == 0 {
			if want := `{"echo":"` + strconv.Itoa(i) + `"}`; string(m.Data) != want {
				t.Errorf("request %d: %q, want %q", i, m.Data, want)
			}
			continue
		}
		if code, desc := m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader); code != "404" || desc != "no such thing: "+strconv.Itoa(i) {
			t.Errorf("request %d: code %q, error %q", i, code, desc)
		}
	}
}
