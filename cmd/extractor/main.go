// Command extractor runs knowhub's extractor stage against a NATS server:
// it sanitizes agent transcripts and extracts knowledge from them. Run
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
	code := cli.Stage(ctx, "extractor", app.Stages{Extractor: true}, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
