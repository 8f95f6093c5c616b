// Command bleve indexes a corpus with bleve, the Go full-text search
// library, as a reference for knowhub's bench: the same sections (cut by
// knowhub's chunker), the same queries (the corpus's headings), on the same
// machine. The host is shared and its speed swings within the hour, so
// knowhub's figures are best read as ratios to this reference measured
// alongside them.
//
// It lives in bench/peers, a module of its own, so that knowhub does not
// depend on bleve:
//
//	cd bench/peers && go run ./bleve --corpus ../../../shared/corpora/openclaw-docs-i18n.tar.gz
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	cfg := Config{Out: os.Stdout}
	flag.StringVar(&cfg.Corpus, "corpus", "../../../shared/corpora/openclaw-docs", "Markdown `dir` or .tar.gz to index")
	flag.IntVar(&cfg.Queries, "queries", 2000, "timed queries")
	flag.IntVar(&cfg.Batch, "batch", 1000, "documents per bleve batch")
	flag.BoolVar(&cfg.Files, "files", false, "index each file whole, as one document, instead of knowhub's sections")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bleve reference:", err)
		os.Exit(1)
	}
}

// Config configures a run.
type Config struct {
	Corpus  string
	Queries int
	Batch   int
	// Files indexes each file as one document, its whole text as the
	// body, as a plain full-text setup would.
	Files bool
	Out   io.Writer
}
