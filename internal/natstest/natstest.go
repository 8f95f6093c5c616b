// Package natstest starts a real in-process NATS server with JetStream for
// tests, in a temporary directory, with the contract's topology declared.
package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/broker"
)

// Server is a running test server with one client connection.
type Server struct {
	*broker.Embedded
	NC *nats.Conn
	JS jetstream.JetStream
}

// Start starts a server on a free port with its store in dir (t.TempDir()
// when empty) and stops it when the test ends.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := broker.StartEmbedded(ctx, broker.EmbeddedConfig{Listen: "127.0.0.1:-1", StoreDir: dir})
	if err != nil {
		t.Fatalf("start nats: %v", err)
	}
	nc, err := broker.Connect(broker.ClientConfig{URL: srv.ClientURL(), Name: t.Name()})
	if err != nil {
		srv.Shutdown()
		t.Fatalf("connect: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.EnsureTopology(ctx, js); err != nil {
		t.Fatalf("topology: %v", err)
	}
	t.Cleanup(func() {
		nc.Close()
		srv.Shutdown()
	})
	return &Server{Embedded: srv, NC: nc, JS: js}
}

// WaitFor polls cond every 10ms until it holds or timeout passes, then
// fails the test with what.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
