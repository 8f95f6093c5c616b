package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
)

func cmdUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("up", "up [DIR ...] [--config knowhub.json] [flags]", stdout, stderr)
	natsListen := c.fs.String("nats-listen", "", "embedded NATS `host:port` (default 127.0.0.1:4222)")
	httpListen := c.fs.String("http", "", "HTTP API `host:port`, or off (default 127.0.0.1:7700)")
	openclaw := c.fs.String("openclaw", "", "read repositories, secretPatterns and chunkMaxTokens from the doc-engine (or knowhub) plugin entry of this OpenClaw `openclaw.json`")
	dirs, err := c.parse(args)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if *natsListen != "" {
		cfg.NATS.Listen = *natsListen
	}
	if *httpListen != "" {
		cfg.HTTP.Listen = *httpListen
	}
	if *openclaw != "" {
		oc, err := config.LoadOpenClaw(*openclaw)
		if err != nil {
			return err
		}
		cfg.ApplyOpenClaw(oc)
	}
	if len(dirs) > 0 {
		repos, err := config.RepositoriesFromArgs(dirs)
		if err != nil {
			return err
		}
		cfg.Repositories = append(cfg.Repositories, repos...)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	// A missing folder must not keep the others from being served: the
	// watcher leaves it out and picks it up when it appears.
	if err := cfg.CheckPaths(); err != nil {
		log.Warn("some repository paths are not usable yet", "err", err)
	}
	return app.Up(ctx, cfg, log, stdout, invokedAs())
}

// invokedAs is how the user ran this binary, for the hints `up` prints:
// "go run ./cmd/knowhub" under go run, the bare name when it is the one
// found on $PATH, else the path as typed.
func invokedAs() string {
	arg0 := os.Args[0]
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		return "go run ./cmd/knowhub"
	}
	base := filepath.Base(arg0)
	if base == arg0 {
		return base
	}
	if p, err := exec.LookPath(base); err == nil {
		a, errA := filepath.Abs(arg0)
		b, errB := filepath.Abs(p)
		if errA == nil && errB == nil && a == b {
			return base
		}
	}
	return arg0
}
