package cli

import (
	"context"
	"io"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
)

func cmdUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("up", stderr)
	data := c.fs.String("data", "", "data `dir` for the embedded NATS server (default ./.knowhub, or dataDir from the config)")
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
	if *data != "" {
		cfg.DataDir = *data
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
	return app.Up(ctx, cfg, log, stdout)
}
