// Command knowhub runs the knowhub retrieval backend (`knowhub up`) and
// talks to a running one (`search`, `stats`, `reindex`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/knowhub/knowhub/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
