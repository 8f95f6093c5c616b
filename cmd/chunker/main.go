// Command chunker runs knowhub's chunker stage against a NATS server; run several
// to share the work.
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
	code := cli.Stage(ctx, "chunker", app.Stages{Chunker: true}, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
