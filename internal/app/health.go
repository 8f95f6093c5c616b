package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/knowhub/knowhub/internal/api"
)

// ListenHealth opens the health and metrics listener of a worker process
// (`--metrics host:port`) and serves it while the node runs: /metrics,
// /healthz and /readyz (see api.WorkerHandler). A node that serves the
// HTTP API has them there already.
func (n *Node) ListenHealth(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics cannot listen on %s (%v): choose another address with --metrics", addr, err)
	}
	srv := &http.Server{
		Handler:           api.WorkerHandler(api.NewMetrics(n.js), n.nc, n.workerReady),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	n.add("health", func(ctx context.Context) error {
		return serveUntil(ctx, srv, func() error { return srv.Serve(ln) })
	})
	return ln.Addr(), nil
}

// workerReady reports what keeps the node's stages from being ready: a
// problem that blocks progress (a full disk), and a watcher is ready
// once its initial sync is published.
func (n *Node) workerReady() error {
	if err := n.Problem(); err != nil {
		return err
	}
	if n.Watcher != nil {
		select {
		case <-n.Watcher.Ready():
		default:
			return errors.New("the initial sync of the repositories is running")
		}
	}
	return nil
}
