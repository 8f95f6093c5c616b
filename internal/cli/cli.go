// Package cli implements the knowhub command: `up` runs everything in one
// process; `search`, `stats` and `reindex` talk to a running knowhub over
// NATS.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/datadir"
)

// Main runs the knowhub command with args (without the program name) and
// returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmds := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"up":      cmdUp,
		"search":  cmdSearch,
		"read":    cmdRead,
		"stats":   cmdStats,
		"reindex": cmdReindex,
		"repos":   cmdRepos,
		"worker":  cmdWorker,
		"tools":   cmdTools,
		"kb":      cmdKB,
		"extract": cmdExtract,
		"bench":   cmdBench,
		"eval":    cmdEval,
		"mcp":     cmdMCP,
		"health":  cmdHealth,
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			if _, ok := cmds[rest[0]]; ok {
				return Main(ctx, append(rest[:1:1], "-h"), stdout, stderr)
			}
		}
		usage(stdout)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, Version())
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "knowhub: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	if err := cmd(ctx, rest, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if errors.Is(err, errSilent) {
			return 1
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "knowhub %s: %v\n", name, err)
			return 2
		}
		fmt.Fprintf(stderr, "knowhub %s: %v\n", name, err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprint(w, `knowhub: retrieval for AI agents over NATS JetStream

Usage:
  knowhub up [DIR ...] [--config knowhub.json]   run NATS, every worker and the HTTP API
  knowhub search "QUERY" [--top-k N] [--repo R] [--json]
  knowhub read ID [--context neighbours|page]     read a section a search found, its neighbours or its page
  knowhub stats [--json]                          files, sections, repositories, pipeline position
  knowhub reindex [--rescan] [--wait D] [--json]  rebuild the index from the files read (--rescan: read them again)
  knowhub repos [list] | remove NAME               repositories in the index; remove one
  knowhub tools add CATALOG.json | rm NAME... | search "QUERY" [--type core|sourced] [--limit N]
  knowhub kb save|search|get|helpful|harmful|revise|review|replay   knowledge entries
  knowhub kb revoke --transcript ID               revoke every entry extracted from a transcript
  knowhub extract TRANSCRIPT.json | --replay [--since T] [--dry-run]
  knowhub mcp [--scopes S]                        serve MCP on stdio, calling a running knowhub over NATS
  knowhub worker STAGE [flags]                    run one stage (watcher, chunker, indexer, query) against NATS
  knowhub health [URL]                            probe a process's /readyz: exit 0 when it is ready
  knowhub bench [--corpus DIR]                    measure indexing, query latency and memory
  knowhub eval DIR | --markdown DIR [--json]      score retrieval on a judged collection (nDCG@10, recall, MRR, hit@k)
  knowhub eval --sets DIR --half dev|test         score every judged docs set of DIR in one table

Run "knowhub COMMAND -h" for a command's flags, "knowhub --version" for the version.
`)
}

type usageError struct{ error }

// common holds the flags every command shares.
type common struct {
	fs       *flag.FlagSet
	config   string
	logLevel string
	data     string
	client   *config.ClientFlags
	synopsis string    // one usage line, without "knowhub"
	help     io.Writer // where -h prints the flags
	// usage, when set, is printed by -h in place of the usage line.
	usage func(io.Writer)
	// shared names the flags every command has (configuration, logging,
	// the NATS connection): -h lists them after the command's own.
	shared map[string]bool
}

// newCommon makes the flag set of the command name ("kb save"), whose
// usage line is synopsis (for example `search "QUERY" [flags]`). -h
// prints the usage and every flag to stdout; a bad flag is reported in
// one line with the usage line.
func newCommon(name, synopsis string, stdout, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet("knowhub "+name, flag.ContinueOnError), synopsis: synopsis, help: stdout}
	c.fs.SetOutput(io.Discard)
	c.fs.Usage = func() {}
	c.fs.StringVar(&c.config, "config", "", "configuration `file` (JSON)")
	c.fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	c.fs.StringVar(&c.data, "data", "", "data `dir` of the knowhub up on this host (default ./.knowhub, dataDir from the config, or $KNOWHUB_DATA_DIR): up keeps its NATS server's token there, which commands on this host use")
	c.client = config.BindClientFlags(c.fs)
	c.shared = map[string]bool{}
	c.fs.VisitAll(func(f *flag.Flag) { c.shared[f.Name] = true })
	return c
}

// parse parses args, allowing flags after positional arguments.
func (c *common) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printHelp()
				return nil, err
			}
			return nil, usageError{fmt.Errorf("%v\nusage: knowhub %s (knowhub %s -h lists the flags)", err, c.synopsis, c.fs.Name()[len("knowhub "):])}
		}
		args = c.fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// printHelp writes the usage line and every flag with its default: the
// command's own flags first, then those every command shares under a
// heading of their own.
func (c *common) printHelp() {
	if c.usage != nil {
		c.usage(c.help)
	} else {
		fmt.Fprintf(c.help, "usage: knowhub %s\n\nflags:\n", c.synopsis)
	}
	own := flag.NewFlagSet(c.fs.Name(), flag.ContinueOnError)
	shared := flag.NewFlagSet(c.fs.Name(), flag.ContinueOnError)
	c.fs.VisitAll(func(f *flag.Flag) {
		to := own
		if c.shared[f.Name] {
			to = shared
		}
		to.Var(f.Value, f.Name, f.Usage)
		to.Lookup(f.Name).DefValue = f.DefValue
	})
	for _, fs := range []*flag.FlagSet{own, shared} {
		if fs == shared {
			fmt.Fprintf(c.help, "\nconfiguration and connection flags (every command):\n")
		}
		fs.SetOutput(c.help)
		fs.PrintDefaults()
	}
}

// load reads the configuration: file (or defaults) < environment < flags.
func (c *common) load() (*config.Config, error) {
	var cfg *config.Config
	if c.config != "" {
		var err error
		if cfg, err = config.Load(c.config); err != nil {
			return nil, err
		}
	} else {
		cfg = config.Default()
	}
	if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
		return nil, err
	}
	c.client.Apply(&cfg.NATS)
	if c.data != "" {
		cfg.DataDir = c.data
	}
	useLocalToken(&cfg.NATS, cfg.DataDir)
	return cfg, nil
}

// useLocalToken gives a client that names no credential the token of the
// knowhub up whose data directory is dir, when it connects to this host
// only: the token is never sent to another machine.
func useLocalToken(n *config.NATS, dir string) {
	if n.HasAuth() || !loopbackURLs(n.URL) {
		return
	}
	if tok, err := datadir.ReadNATSToken(dir); err == nil {
		n.Token = tok
	}
}

// loopbackURLs reports whether every server of a comma-separated NATS URL
// list is on this host.
func loopbackURLs(list string) bool {
	for _, s := range strings.Split(list, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return false
		}
		host := u.Hostname()
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.ToUpper(c.logLevel))); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", c.logLevel)}
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// plural is n with the noun that fits it: "1 tool", "2 tools".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
