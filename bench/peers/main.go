// Command peers compares knowhub's docs ranking with reference engines on
// one judged collection in one run: every engine indexes the same sections
// (cut by knowhub's chunker, with the fields knowhub searches: title, front
// matter summary, heading path, body) and answers the same queries, and
// one table gives each engine's page hit@1, hit@5 and nDCG@10.
//
// The engines: knowhub in process (eval.Collection, as `knowhub eval`
// scores it); SQLite FTS5 through the pure-Go modernc.org/sqlite, ranked
// by bm25() with the query's terms OR-ed; bleve 2 with its default mapping
// and scoring; and MiniSearch 7.2 with its default options under Node,
// when node is on PATH and `npm ci` has installed it here.
//
// Judging is at page level: each engine's section hits are collapsed to
// distinct pages in rank order (a page at the score of its best section),
// then scored as trec_eval would (internal/eval): a query hits at k when
// one of its first k pages is judged relevant.
//
// It takes the collections `knowhub eval` takes:
//
//	cd bench/peers && npm ci
//	go run . --markdown DOCS_DIR --queries Q.jsonl --qrels QRELS.tsv
//	go run . ../../../shared/eval/scifact
//	go run . --set ../../internal/eval/testdata/docs/summary-en --half dev
//
// It is a module of its own so that knowhub does not depend on the
// peers' libraries. For the same reason it is a command of its own rather
// than a `knowhub eval --peers` that would shell out to `go run` here: a
// knowhub binary has neither this source tree nor a Go toolchain with it,
// and such a flag would measure the tree's knowhub, not the binary's. This
// command takes `knowhub eval`'s collection flags as they are, and always
// measures the knowhub of the tree it sits in. ./bleve, beside it, is
// bleve's speed reference for knowhub's bench.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/knowhub/knowhub/internal/eval"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := Config{Out: stdout}
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Markdown, "markdown", "", "judge the Markdown `dir` through knowhub's chunker (needs --queries and --qrels)")
	fs.StringVar(&cfg.Queries, "queries", "", "queries `file`, JSONL {\"id\", \"text\"} (default DIR/queries.jsonl)")
	fs.StringVar(&cfg.Qrels, "qrels", "", "judgments `file`, query-id TAB page TAB grade (default DIR/qrels.tsv)")
	fs.IntVar(&cfg.Limit, "limit", 0, "evaluate only the first `N` judged queries (0: all)")
	strip := fs.String("strip-front-matter", "", "with --markdown, remove these front-matter `keys` (comma-separated) from every page before chunking")
	set := fs.String("set", "", "judge one judged docs set `dir` (see internal/eval/testdata/docs): its corpus, stripped keys and one half")
	half := fs.String("half", eval.Dev, "with --set, the `half` judged: dev or test")
	corpora := fs.String("corpora", "../../../shared/corpora", "with --set, the `dir` holding the sets' corpora")
	engines := fs.String("engines", "", "comma-separated `names` of the engines to run (default: knowhub,sqlite-fts5,bleve,minisearch)")
	fs.StringVar(&cfg.Runs, "runs", "", "write each engine's ranking to `dir`/ENGINE.run (trec_eval format), for comparing engines query by query")
	fs.StringVar(&cfg.NodeDir, "node-dir", ".", "`dir` holding minisearch.mjs and its node_modules")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage:
  go run . DIR                  DIR holds corpus.jsonl, queries.jsonl and qrels.tsv
  go run . --markdown DOCS_DIR --queries Q.jsonl --qrels QRELS.tsv
                                qrels name pages by their path relative to DOCS_DIR
  go run . --set SET_DIR --half dev|test
                                one half of a judged docs set (internal/eval/testdata/docs)

`)
		fs.PrintDefaults()
	}
	// Flags may come after DIR too.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(pos) {
	case 0:
	case 1:
		cfg.Dir = pos[0]
	default:
		return fmt.Errorf("want one collection DIR, got %q", pos)
	}
	if *strip != "" {
		cfg.StripFrontMatter = strings.Split(*strip, ",")
	}
	if *set != "" {
		if cfg.Dir != "" || cfg.Markdown != "" || cfg.Queries != "" || cfg.Qrels != "" {
			return errors.New("--set names the corpus, queries and judgments: give no DIR, --markdown, --queries or --qrels with it")
		}
		if *half != eval.Dev && *half != eval.Test {
			return fmt.Errorf("half %q: want %s or %s", *half, eval.Dev, eval.Test)
		}
		s, err := eval.LoadSet(*set)
		if err != nil {
			return err
		}
		cfg.Markdown = filepath.Join(*corpora, s.Corpus)
		cfg.Queries = filepath.Join(s.Dir, *half, "queries.jsonl")
		cfg.Qrels = filepath.Join(s.Dir, *half, "qrels.tsv")
		cfg.StripFrontMatter = append(cfg.StripFrontMatter, s.StripFrontMatter...)
	}
	if *engines != "" {
		cfg.Engines = strings.Split(*engines, ",")
	}
	_, err := Run(ctx, cfg)
	return err
}
