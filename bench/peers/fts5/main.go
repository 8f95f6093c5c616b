// Command fts5 builds a SQLite FTS5 index of a corpus, as a reference for
// the cold index of knowhub's bench: the same sections (cut by knowhub's
// chunker, with the fields knowhub searches: title, front matter summary,
// heading path, body), on the same machine, in the same hour. knowhub's
// cold index runs the whole pipeline (read, hash, redact, chunk, analyse,
// store in JetStream, build the replica's postings); this times FTS5's
// build alone, from sections already in memory to the transaction
// committed on disk, and prints the read-and-chunk pass beside it.
//
// It lives in bench/peers, a module of its own, so that knowhub does not
// depend on SQLite:
//
//	cd bench/peers && go run ./fts5 --corpus ../../../shared/corpora/openclaw-docs-i18n.tar.gz
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite, registered as "sqlite"

	"github.com/knowhub/knowhub/internal/bench"
	"github.com/knowhub/knowhub/internal/corpus"
	"github.com/knowhub/knowhub/internal/eval"
)

func main() {
	cfg := Config{Out: os.Stdout}
	flag.StringVar(&cfg.Corpus, "corpus", "../../../shared/corpora/openclaw-docs", "Markdown `dir` or .tar.gz to index")
	flag.BoolVar(&cfg.Memory, "memory", false, "build the index in memory instead of a database file")
	asJSON := flag.Bool("json", false, "also print the figures as JSON")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := Run(ctx, cfg)
	if err == nil && *asJSON {
		err = json.NewEncoder(os.Stdout).Encode(res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fts5 reference:", err)
		os.Exit(1)
	}
}

// Config configures a run.
type Config struct {
	Corpus string
	// Memory builds the index in an in-memory database.
	Memory bool
	Out    io.Writer
}

// Result holds the measured figures.
type Result struct {
	Files, Sections int
	Chunk           time.Duration // reading and chunking with knowhub's chunker
	ChunkCPU        time.Duration
	Build           time.Duration // an empty FTS5 table to every section committed
	BuildCPU        time.Duration // user+system CPU of this process meanwhile
}

// section is one row: the fields knowhub searches.
type section struct{ title, summary, heading, body string }

// Run chunks cfg.Corpus and builds an FTS5 index of its sections.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	work, docs, size, err := corpus.Stage(cfg.Corpus, "knowhub-fts5-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(cfg.Out, "corpus %s: %.1f MB copied to %s\n", cfg.Corpus, float64(size)/1e6, docs)

	res := &Result{}
	start := time.Now()
	cpuStart, _ := bench.CPUTime()
	files, _, err := eval.ReadMarkdownWith(ctx, docs, eval.MarkdownOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", docs, err)
	}
	var secs []section
	for _, f := range files {
		for _, ch := range f.Chunks {
			secs = append(secs, section{
				title:   ch.Title,
				summary: joinNonEmpty("\n", ch.Summary, ch.ReadWhen),
				heading: strings.Join(ch.HeadingPath, "\n"),
				body:    ch.Text,
			})
		}
	}
	if len(secs) == 0 {
		return nil, errors.New("no sections in the corpus")
	}
	cpuEnd, _ := bench.CPUTime()
	res.Files, res.Sections = len(files), len(secs)
	res.Chunk, res.ChunkCPU = time.Since(start), cpuEnd-cpuStart
	fmt.Fprintf(cfg.Out, "read and chunked %d files into %d sections in %s (%s of CPU) with knowhub's chunker (not counted below)\n",
		res.Files, res.Sections, res.Chunk.Round(time.Millisecond), res.ChunkCPU.Round(time.Millisecond))

	dsn, where := filepath.Join(work, "fts5.db"), "a database file"
	if cfg.Memory {
		dsn, where = ":memory:", "memory"
	}
	start = time.Now()
	cpuStart, _ = bench.CPUTime()
	version, err := build(ctx, dsn, secs)
	if err != nil {
		return nil, err
	}
	cpuEnd, _ = bench.CPUTime()
	res.Build, res.BuildCPU = time.Since(start), cpuEnd-cpuStart
	fmt.Fprintf(cfg.Out, "SQLite %s FTS5 (modernc.org/sqlite %s, unicode61) build in %s, one transaction: %s (%s of CPU)\n",
		version, moduleVersion("modernc.org/sqlite"), where, res.Build.Round(time.Millisecond), res.BuildCPU.Round(time.Millisecond))
	return res, nil
}

// build creates an FTS5 table in the database dsn and inserts every
// section in one transaction; it returns SQLite's version.
func build(ctx context.Context, dsn string, secs []section) (string, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return "", fmt.Errorf("open sqlite: %w", err)
	}
	defer db.Close()
	// Every connection to :memory: is a database of its own: keep one.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE VIRTUAL TABLE sections USING fts5(title, summary, heading, body)"); err != nil {
		return "", fmt.Errorf("create fts5 table: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("begin sqlite load: %w", err)
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, "INSERT INTO sections(rowid, title, summary, heading, body) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return "", fmt.Errorf("prepare sqlite insert: %w", err)
	}
	for i, s := range secs {
		if _, err := ins.ExecContext(ctx, i+1, s.title, s.summary, s.heading, s.body); err != nil {
			return "", fmt.Errorf("insert section %d into sqlite: %w", i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("commit sqlite load: %w", err)
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		return "", fmt.Errorf("read sqlite version: %w", err)
	}
	return version, nil
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range info.Deps {
		if m.Path == path {
			return m.Version
		}
	}
	return ""
}
