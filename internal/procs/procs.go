// Package procs sizes a query node's Go scheduler to its work: all the
// processors while the pipeline has work (indexing a change, loading the
// index) or while requests pile up, one while it only answers requests
// one at a time.
//
// Why: a request crosses about eight goroutine hand-offs between the
// socket, the NATS server, the client library and the search. With an
// idle processor at hand, each hand-off wakes an operating-system thread
// for it (a futex call, tens of microseconds on a virtual machine) that
// then finds nothing to do, as the readied goroutine runs on the
// processor it was readied on. A search is serial anyway (one NATS
// subscription per endpoint), so a node that only answers requests loses
// nothing on one processor and skips those wake-ups: on openclaw-docs the
// median request through `knowhub up` took 0.24–0.28 ms instead of
// 0.34–0.38 ms, in runs alternated with a node keeping every processor.
package procs

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdle is how long a node goes without work before it drops to
// one processor.
const DefaultIdle = time.Second

// saturated is the share of a tick that requests may take before the
// node is taken to be loaded rather than answering one request at a
// time. One client waiting on each reply kept a node at 0.43–0.47 a tick
// on openclaw-docs, and by the medians of search and round trip at about
// two thirds on the twenty-language archive, whose searches take longer;
// requests that queue keep it near 1.
const saturated = 0.9

// Config tunes a Governor.
type Config struct {
	// Idle is how long the node must go without work before it drops to
	// one processor (DefaultIdle when zero).
	Idle time.Duration
	// Off leaves GOMAXPROCS alone.
	Off bool
}

// Governor lowers GOMAXPROCS to one while the node is idle and restores
// the runtime's default as soon as work arrives. Its methods are safe for
// concurrent use and do nothing on a nil or disabled Governor, so stages
// may hold one unconditionally. It leaves GOMAXPROCS alone when the
// GOMAXPROCS environment variable sets it or when the default is one.
type Governor struct {
	idle time.Duration
	tick time.Duration
	on   bool
	log  *slog.Logger

	mu  sync.Mutex  // serialises changes of GOMAXPROCS
	low atomic.Bool // running on one processor

	work     atomic.Uint64 // units of pipeline work seen
	inFlight atomic.Int64  // requests being answered
	reqNanos atomic.Int64  // time spent answering requests, summed
}

// New returns a Governor; Run starts it.
func New(cfg Config, log *slog.Logger) *Governor {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	_, pinned := os.LookupEnv("GOMAXPROCS")
	return &Governor{
		idle: cfg.Idle,
		tick: max(cfg.Idle/4, time.Millisecond),
		on:   !cfg.Off && !pinned && runtime.GOMAXPROCS(0) > 1,
		log:  log.With("component", "procs"),
	}
}

// Enabled tells whether g may change GOMAXPROCS.
func (g *Governor) Enabled() bool { return g != nil && g.on }

// Low tells whether g runs the process on one processor.
func (g *Governor) Low() bool { return g != nil && g.low.Load() }

// Busy records a unit of pipeline work (a stream message, an index update)
// and restores every processor at once if the node was idle.
func (g *Governor) Busy() {
	if !g.Enabled() {
		return
	}
	g.work.Add(1)
	if g.low.Load() {
		g.raise()
	}
}

// Enter records the start of a request and returns its start time, to be
// passed to Exit. A request that starts while another runs means requests
// come faster than one at a time: that is work for every processor.
func (g *Governor) Enter() time.Time {
	if !g.Enabled() {
		return time.Time{}
	}
	if g.inFlight.Add(1) > 1 {
		g.Busy()
	}
	return time.Now()
}

// Exit records the end of the request that Enter returned start for.
func (g *Governor) Exit(start time.Time) {
	if !g.Enabled() {
		return
	}
	g.reqNanos.Add(int64(time.Since(start)))
	g.inFlight.Add(-1)
}

// Run lowers the processors once the node has been idle for the
// configured time and raises them again when requests take most of a tick
// (work raises them in Busy). It returns nil when ctx ends, with the
// runtime's default restored.
func (g *Governor) Run(ctx context.Context) error {
	if !g.Enabled() {
		<-ctx.Done()
		return nil
	}
	defer g.raise()
	t := time.NewTicker(g.tick)
	defer t.Stop()
	lastWork, lastReq := g.work.Load(), g.reqNanos.Load()
	active, lastTick := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			w, r := g.work.Load(), g.reqNanos.Load()
			loaded := float64(r-lastReq) > saturated*float64(now.Sub(lastTick))
			if w != lastWork || loaded || g.inFlight.Load() > 1 {
				active = now
				g.raise() // also catches work that came as it was lowered
			} else if now.Sub(active) >= g.idle {
				g.lower(w)
			}
			lastWork, lastReq, lastTick = w, r, now
		}
	}
}

// lower drops to one processor unless work came since the tick that
// counted seen units of it.
func (g *Governor) lower(seen uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.low.Load() || g.work.Load() != seen {
		return
	}
	runtime.GOMAXPROCS(1)
	g.low.Store(true)
	g.log.Debug("idle: one processor")
}

func (g *Governor) raise() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.low.Load() {
		return
	}
	runtime.SetDefaultGOMAXPROCS()
	g.low.Store(false)
	g.log.Debug("busy: every processor", "procs", runtime.GOMAXPROCS(0))
}
