package procs

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start runs a governor with a short idle time and returns it with the
// default GOMAXPROCS it must restore.
func start(t *testing.T, idle time.Duration) (*Governor, int) {
	t.Helper()
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: there is nothing to lower")
	}
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	g := New(Config{Idle: idle}, quiet())
	if !g.Enabled() {
		t.Fatalf("governor disabled with GOMAXPROCS %d and no GOMAXPROCS variable", def)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if got := runtime.GOMAXPROCS(0); got != def {
			t.Errorf("GOMAXPROCS after stop = %d, want the default %d", got, def)
		}
	})
	return g, def
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestIdleLowersAndWorkRaises(t *testing.T) {
	// An idle time long enough that no pause of a loaded test machine
	// between two Busy calls 2 ms apart reaches it.
	g, def := start(t, 500*time.Millisecond)
	waitFor(t, "one processor when idle", func() bool { return g.Low() && runtime.GOMAXPROCS(0) == 1 })
	g.Busy()
	if got := runtime.GOMAXPROCS(0); got != def || g.Low() {
		t.Fatalf("after Busy: GOMAXPROCS %d (low %v), want %d at once", got, g.Low(), def)
	}
	// Steady work keeps every processor: Busy more often than the idle
	// time for two idle times.
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		g.Busy()
		if g.Low() {
			t.Fatal("lowered while work kept coming")
		}
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, "one processor once work stops", func() bool { return g.Low() && runtime.GOMAXPROCS(0) == 1 })
}

func TestOverlappingRequestsRaise(t *testing.T) {
	g, def := start(t, 20*time.Millisecond)
	waitFor(t, "one processor when idle", g.Low)
	// One request at a time keeps the node on one processor.
	s := g.Enter()
	g.Exit(s)
	if !g.Low() {
		t.Fatal("a lone short request raised the processors")
	}
	a := g.Enter()
	b := g.Enter()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Fatalf("two requests at once: GOMAXPROCS %d, want %d", got, def)
	}
	g.Exit(b)
	g.Exit(a)
	waitFor(t, "one processor once requests stop", g.Low)
}

func TestSaturatingRequestsRaise(t *testing.T) {
	g, def := start(t, 20*time.Millisecond)
	waitFor(t, "one processor when idle", g.Low)
	// Back-to-back requests, one at a time, that fill every tick: the
	// node is loaded even though none overlaps.
	deadline := time.Now().Add(5 * time.Second)
	for g.Low() {
		if time.Now().After(deadline) {
			t.Fatal("requests filling every tick did not raise the processors")
		}
		s := g.Enter()
		for time.Since(s) < time.Millisecond {
		}
		g.Exit(s)
	}
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Fatalf("GOMAXPROCS %d, want %d", got, def)
	}
}

func TestDisabled(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: a governor is always disabled")
	}
	if New(Config{Off: true}, quiet()).Enabled() {
		t.Error("Off: enabled")
	}
	t.Setenv("GOMAXPROCS", "2")
	if New(Config{}, quiet()).Enabled() {
		t.Error("GOMAXPROCS set in the environment: enabled")
	}
	// A nil or disabled governor does nothing and stops with its context.
	var g *Governor
	g.Busy()
	g.Exit(g.Enter())
	d := New(Config{Off: true}, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	before := runtime.GOMAXPROCS(0)
	d.Busy()
	d.Exit(d.Enter())
	if runtime.GOMAXPROCS(0) != before || d.Low() {
		t.Error("a disabled governor changed GOMAXPROCS")
	}
}
