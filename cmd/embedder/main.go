// Command embedder runs knowhub's embedder stage against a NATS server:
// it asks the configured embeddings endpoint (semantic.embeddings) for the
// vector of every section and publishes them to KH_VECTORS. Run
// several to share the work.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Stage(ctx, "embedder", app.Stages{Embedder: true}, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
