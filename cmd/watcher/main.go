// Command watcher runs knowhub's watcher stage against a NATS server: it
// publishes the configured repositories' files to KH_FILES and follows
// their changes. Run one watcher per set of repositories.
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
	code := cli.Stage(ctx, "watcher", app.Stages{Watcher: true}, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
