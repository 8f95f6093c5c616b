package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/bench"
	"github.com/knowhub/knowhub/internal/eval"
)

// Config configures a run.
type Config struct {
	// Dir is a folder holding corpus.jsonl, queries.jsonl and qrels.tsv
	// (BEIR's layout); each document is a page of one section.
	Dir string
	// Markdown is a folder of Markdown pages, cut into sections by
	// knowhub's chunker; Queries and Qrels are then required, the qrels
	// naming pages by their path relative to Markdown.
	Markdown, Queries, Qrels string
	// StripFrontMatter names front-matter keys cut from every Markdown
	// page before it is chunked, for every engine (eval.StripFrontMatter).
	StripFrontMatter []string
	// Limit evaluates only the first Limit judged queries (0: all).
	Limit int
	// Engines names the engines to run, in the table's order (empty: all).
	Engines []string
	// NodeDir is the folder holding minisearch.mjs and node_modules
	// ("" is the current folder, this module's when run with go run .).
	NodeDir string
	// Runs, when set, is a folder where each engine's ranking is written
	// as a trec_eval run file, ENGINE.run, for comparing engines query by
	// query.
	Runs string
	Out  io.Writer
}

// Row is one engine's figures on the collection, at page level: a query
// hits at k when one of the first k distinct pages is judged relevant.
type Row struct {
	Engine, About string
	Queries       int
	Hit1, Hit5    int
	NDCG10        float64
	// Index is the time from nothing to every section searchable;
	// knowhub's includes reading and chunking the files.
	Index time.Duration
	// P50 and P90 are the engine's time per query.
	P50, P90 time.Duration
}

// Result is a run: a row per engine that ran, and why the others did not.
type Result struct {
	Pages, Sections int
	Rows            []Row
	Skipped         map[string]string
}

// Run loads the judged collection cfg names, indexes the same sections
// into every engine in turn, runs every judged query through it and
// prints one table.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Limit < 0 {
		return nil, fmt.Errorf("limit %d: want 0 or more", cfg.Limit)
	}
	selected, err := selectPeers(cfg.Engines)
	if err != nil {
		return nil, err
	}
	c, err := loadCollection(ctx, cfg)
	if err != nil {
		return nil, err
	}
	judged := c.judgedQueries(cfg.Limit)
	if len(judged) == 0 {
		return nil, errors.New("no query has a relevant page")
	}
	unit := "documents, a section each"
	if c.Markdown {
		unit = fmt.Sprintf("pages, %d sections (knowhub's chunker)", len(c.Sections))
	}
	fmt.Fprintf(cfg.Out, "collection %s: %d %s; %d queries, %d judged evaluated\n", c.Source, c.Pages, unit, len(c.Queries), len(judged))
	for _, s := range c.Skipped {
		fmt.Fprintf(cfg.Out, "note: skipped %s\n", s)
	}
	if n := c.unknownPages(); n > 0 {
		fmt.Fprintf(cfg.Out, "note: %d judged pages are not in the collection; no engine can return them\n", n)
	}

	res := &Result{Pages: c.Pages, Sections: len(c.Sections), Skipped: map[string]string{}}
	for _, p := range selected {
		row, err := runPeer(ctx, p, c, judged, cfg)
		if reason, ok := isUnavailable(err); ok {
			res.Skipped[p.name] = reason
			fmt.Fprintf(cfg.Out, "%s: skipped: %s\n", p.name, reason)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Fprintf(cfg.Out, "%s: %s; indexed in %s, %d queries searched\n", p.name, row.About, row.Index.Round(time.Millisecond), row.Queries)
		res.Rows = append(res.Rows, row)
	}
	fmt.Fprintln(cfg.Out)
	writeTable(cfg.Out, res.Rows)
	return res, nil
}

// selectPeers returns the named engines in the table's order, or every
// engine when names is empty.
func selectPeers(names []string) ([]peer, error) {
	if len(names) == 0 {
		return peers, nil
	}
	var out []peer
	known := make([]string, len(peers))
	for i, p := range peers {
		known[i] = p.name
		if slices.Contains(names, p.name) {
			out = append(out, p)
		}
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown engine %q: want some of %s", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// runPeer indexes c with p and scores it on the judged queries, one at a
// time so that the time per query is the engine's alone.
func runPeer(ctx context.Context, p peer, c *collection, judged []eval.Query, cfg Config) (Row, error) {
	start := time.Now()
	e, about, err := p.open(ctx, c, cfg)
	if err != nil {
		return Row{}, err
	}
	row := Row{Engine: p.name, About: about, Index: time.Since(start)}
	s := &timed{e: e}
	rep, err := eval.Run(ctx, s, judged, c.Qrels, eval.Options{Workers: 1})
	if cerr := e.close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return Row{}, err
	}
	row.Queries, row.NDCG10 = rep.Queries, rep.NDCG10
	if cfg.Runs != "" {
		if err := writeRunFile(filepath.Join(cfg.Runs, p.name+".run"), rep.Results, p.name); err != nil {
			return Row{}, err
		}
	}
	for _, r := range rep.Results {
		rel := c.Qrels[r.QueryID]
		if hitAt(r.Run, rel, 1) {
			row.Hit1++
		}
		if hitAt(r.Run, rel, 5) {
			row.Hit5++
		}
	}
	slices.Sort(s.took)
	row.P50, row.P90 = bench.Percentile(s.took, 50), bench.Percentile(s.took, 90)
	return row, nil
}

// writeRunFile writes results to path as a trec_eval run tagged tag.
func writeRunFile(path string, results []eval.Result, tag string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := eval.WriteRun(f, results, tag); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hitAt reports whether one of the first k pages of run is relevant.
func hitAt(run []eval.Ranked, rel map[string]int, k int) bool {
	for _, r := range run[:min(k, len(run))] {
		if rel[r.DocID] > 0 {
			return true
		}
	}
	return false
}

// timed is an eval.Searcher over an engine that keeps the engine's time
// per query. eval.Run must call it from one goroutine (Workers: 1).
type timed struct {
	e    engine
	took []time.Duration
}

func (t *timed) Search(q string, k int) ([]eval.Ranked, error) {
	r, took, err := t.e.search(q, k)
	t.took = append(t.took, took)
	return r, err
}

// writeTable prints rows as a Markdown table.
func writeTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| engine | queries | page hit@1 | page hit@5 | nDCG@10 | index | query p50 | query p90 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d (%.3f) | %d (%.3f) | %.4f | %s | %s | %s |\n",
			r.Engine, r.Queries, r.Hit1, share(r.Hit1, r.Queries), r.Hit5, share(r.Hit5, r.Queries), r.NDCG10,
			r.Index.Round(time.Millisecond), short(r.P50), short(r.P90))
	}
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// short rounds a query time for display.
func short(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
