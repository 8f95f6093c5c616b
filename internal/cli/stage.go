package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
)

// Stage runs one worker (`cmd/watcher`, `cmd/chunker`, `cmd/indexer`,
// `cmd/query`) against the NATS server the configuration names, and returns
// the process exit code.
func Stage(ctx context.Context, name string, stages app.Stages, args []string, stdout, stderr io.Writer) int {
	c := newCommon(name, name+" [flags]", stdout, stderr)
	cpuProfile := c.fs.String("cpuprofile", "", "write a CPU profile of the worker to `file` until it stops")
	var httpListen, metricsListen, shard *string
	if stages.Query {
		httpListen = c.fs.String("http", "", "HTTP API `host:port`, or off (default 127.0.0.1:7700); it serves /metrics, /healthz and /readyz too")
		shard = c.fs.String("shard", "", "search shard `i/n` of the docs pages, such as 0/2 (query.shard and query.shards; default: every page)")
	} else {
		metricsListen = c.fs.String("metrics", "", "serve /metrics, /healthz and /readyz on `host:port` (default off)")
	}
	err := func() error {
		if _, err := c.parse(args); err != nil {
			return err
		}
		cfg, err := c.load()
		if err != nil {
			return err
		}
		if httpListen != nil && *httpListen != "" {
			cfg.HTTP.Listen = *httpListen
		}
		if shard != nil && *shard != "" {
			i, n, err := config.ParseShard(*shard)
			if err != nil {
				return usageError{fmt.Errorf("--shard: %w", err)}
			}
			cfg.Query.Shard, cfg.Query.Shards = i, n
		}
		if err := cfg.Validate(); err != nil {
			return err
		}
		if stages.Embedder && !cfg.Semantic.Embeddings.Enabled() {
			return usageError{errors.New("the embedder needs semantic.embeddings.url and model in the configuration")}
		}
		if stages.Watcher {
			if len(cfg.Repositories) == 0 {
				return usageError{fmt.Errorf("no repositories: pass --config with a repositories list")}
			}
		}
		log, err := c.logger(stderr)
		if err != nil {
			return err
		}
		if stages.Watcher {
			// The watcher leaves a missing folder out and picks it up
			// when it appears.
			if err := cfg.CheckPaths(); err != nil {
				log.Warn("some repository paths are not usable yet", "err", err)
			}
		}
		if *cpuProfile != "" {
			stop, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-"+name)
		if err != nil {
			return err
		}
		defer func() { _ = nc.Drain() }()
		node, err := app.NewNode(ctx, cfg, nc, js, stages, log)
		if err != nil {
			return err
		}
		addr := node.HTTPAddr()
		if metricsListen != nil && *metricsListen != "" {
			a, err := node.ListenHealth(*metricsListen)
			if err != nil {
				return err
			}
			addr = a.String()
		}
		log.Info("worker started", "stage", name, "nats", nc.ConnectedUrlRedacted(), "http", addr)
		return node.Run(ctx)
	}()
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	return 0
}

// stages maps a stage name to the stage set that runs it.
var stages = map[string]app.Stages{
	"watcher":   {Watcher: true},
	"chunker":   {Chunker: true},
	"indexer":   {Indexer: true},
	"query":     {Query: true},
	"extractor": {Extractor: true},
	"embedder":  {Embedder: true},
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("missing stage: knowhub worker watcher|chunker|indexer|query|extractor|embedder [flags]")}
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, "usage: knowhub worker watcher|chunker|indexer|query|extractor|embedder [flags]\n\nknowhub worker STAGE -h lists a stage's flags.\n")
		return nil
	}
	st, ok := stages[args[0]]
	if !ok {
		return usageError{fmt.Errorf("unknown stage %q: want watcher, chunker, indexer, query, extractor or embedder", args[0])}
	}
	if code := Stage(ctx, args[0], st, args[1:], stdout, stderr); code != 0 {
		return errSilent
	}
	return nil
}

// errSilent reports failure after the error was already printed.
var errSilent = errors.New("")
