package api

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Default bounds of the NATS request lanes (Config.Concurrency, Config.Queue).
const (
	// DefaultQueue is how many requests may wait for a worker of a lane
	// before new ones are refused as overloaded.
	DefaultQueue = 1024
)

// Messages of the replies a lane sends without running the handler.
const (
	overloadedMessage = "overloaded: every worker is busy and the request queue is full; retry later or add a query replica"
	stoppingMessage   = "unavailable: the service is stopping"
)

// lane runs NATS micro handlers on a fixed number of goroutines fed by a
// bounded FIFO queue. A micro endpoint calls its handler on the one
// goroutine of its subscription, so without a lane an endpoint answers one
// request at a time. A lane of one worker keeps the order in which requests
// arrived; a wider one answers them in parallel. When every worker is busy
// and the queue is full, a request is answered at once with a 503 error
// instead of waiting without bound.
//
// The micro service's own statistics (`nats micro stats`) then count each
// request but time only its hand-off, and see only the errors the lane
// itself replies with; the Prometheus metrics (Metrics.microHandler) run
// inside the worker and time the work.
//
// A lane is safe for concurrent use. stop refuses new requests, answers
// the queued ones with a 503 and waits for the running ones to return.
type lane struct {
	nc   *nats.Conn // replies go out on it
	jobs chan laneJob
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	// running counts the handlers running now.
	running atomic.Int32
}

type laneJob struct {
	h   micro.HandlerFunc
	req *laneRequest
}

// newLane starts a lane of workers goroutines (at least 1) and a queue of
// queue requests (none when 0 or less) that replies on nc.
func newLane(nc *nats.Conn, workers, queue int) *lane {
	l := &lane{nc: nc, jobs: make(chan laneJob, max(queue, 0)), quit: make(chan struct{})}
	for range max(workers, 1) {
		l.wg.Go(l.work)
	}
	return l
}

func (l *lane) work() {
	for {
		select {
		case <-l.quit:
			return
		default:
		}
		select {
		case j := <-l.jobs:
			l.running.Add(1)
			j.h(j.req)
			l.running.Add(-1)
		case <-l.quit:
			return
		}
	}
}

// handler returns a micro handler that queues each request for h; a
// request refused because the lane is full is passed to rejected (which may
// be nil) after its 503 reply.
func (l *lane) handler(h micro.HandlerFunc, rejected func()) micro.HandlerFunc {
	return func(req micro.Request) {
		select {
		case <-l.quit:
			_ = req.Error("503", stoppingMessage, nil)
			return
		default:
		}
		// The worker gets a request of its own: micro's reads what its
		// handler replied with once the handler returns, which a reply
		// sent later from the worker would race with.
		lr := &laneRequest{nc: l.nc, subject: req.Subject(), reply: req.Reply(), data: req.Data(), headers: req.Headers()}
		select {
		case l.jobs <- laneJob{h: h, req: lr}:
		default:
			_ = req.Error("503", overloadedMessage, nil)
			if rejected != nil {
				rejected()
			}
		}
	}
}

// queued is the number of requests waiting for a worker.
func (l *lane) queued() int { return len(l.jobs) }

// stop refuses new requests, answers those still queued with a 503 and
// waits until the running handlers have returned. It is idempotent.
func (l *lane) stop() {
	l.once.Do(func() { close(l.quit) })
	l.wg.Wait()
	for {
		select {
		case j := <-l.jobs:
			_ = j.req.Error("503", stoppingMessage, nil)
		default:
			return
		}
	}
}

// laneRequest is a micro.Request answered from a lane's worker: it replies
// as micro's own does, on the lane's connection to the request's reply
// subject.
type laneRequest struct {
	nc             *nats.Conn
	subject, reply string
	data           []byte
	headers        micro.Headers
}

func (r *laneRequest) Respond(data []byte, opts ...micro.RespondOpt) error {
	m := &nats.Msg{Subject: r.reply, Data: data}
	for _, opt := range opts {
		opt(m)
	}
	if err := r.nc.PublishMsg(m); err != nil {
		return fmt.Errorf("%w: %s", micro.ErrRespond, err)
	}
	return nil
}

func (r *laneRequest) RespondJSON(v any, opts ...micro.RespondOpt) error {
	data, err := json.Marshal(v)
	if err != nil {
		return micro.ErrMarshalResponse
	}
	return r.Respond(data, opts...)
}

func (r *laneRequest) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	if code == "" || description == "" {
		return fmt.Errorf("%w: error code and description", micro.ErrArgRequired)
	}
	m := &nats.Msg{Subject: r.reply, Header: nats.Header{
		micro.ErrorHeader:     []string{description},
		micro.ErrorCodeHeader: []string{code},
	}}
	for _, opt := range opts {
		opt(m)
	}
	m.Data = data
	return r.nc.PublishMsg(m)
}

func (r *laneRequest) Data() []byte           { return r.data }
func (r *laneRequest) Headers() micro.Headers { return r.headers }
func (r *laneRequest) Subject() string        { return r.subject }
func (r *laneRequest) Reply() string          { return r.reply }
