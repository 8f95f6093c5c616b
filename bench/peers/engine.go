package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/knowhub/knowhub/internal/eval"
)

// engine is a ranking engine with a collection indexed. It is used from
// one goroutine at a time.
type engine interface {
	// search returns up to k pages for q, best first, each page once at
	// the score of its best section, and the time the engine itself spent
	// on the query.
	search(q string, k int) ([]eval.Ranked, time.Duration, error)
	close() error
}

// peer is an engine the bench can run.
type peer struct {
	name string
	// open indexes c and describes the engine (library and version). An
	// engine that cannot run on this machine returns an unavailable error.
	open func(ctx context.Context, c *collection, cfg Config) (engine, string, error)
}

// peers lists every engine, in the order of the table.
var peers = []peer{
	{"knowhub", openKnowhub},
	{"sqlite-fts5", openSQLite},
	{"bleve", openBleve},
	{"minisearch", openMiniSearch},
}

// unavailable reports an engine that cannot run here, with why; the bench
// notes it and goes on with the others.
type unavailable struct{ reason string }

func (u unavailable) Error() string { return u.reason }

func isUnavailable(err error) (string, bool) {
	var u unavailable
	if errors.As(err, &u) {
		return u.reason, true
	}
	return "", false
}

// hit is one section an engine returned: its index in the collection's
// Sections, and the engine's score (higher is better).
type hit struct {
	idx   int
	score float64
}

// sectionEngine is an engine that ranks sections; pages turns it into an
// engine.
type sectionEngine interface {
	// sections returns up to n sections for q, best first.
	sections(q string, n int) ([]hit, time.Duration, error)
	close() error
}

// pages ranks pages by their sections: it asks for depth sections and
// keeps each page once, at the rank and score of its best section, as
// knowhub's eval.Collection does for its own hits.
type pages struct {
	s     sectionEngine
	secs  []section
	depth int
}

func (p pages) search(q string, k int) ([]eval.Ranked, time.Duration, error) {
	hits, took, err := p.s.sections(q, p.depth)
	if err != nil {
		return nil, took, err
	}
	for _, h := range hits {
		if h.idx < 0 || h.idx >= len(p.secs) {
			return nil, took, fmt.Errorf("the engine returned section %d of %d", h.idx, len(p.secs))
		}
	}
	return collapse(p.secs, hits, k), took, nil
}

func (p pages) close() error { return p.s.close() }

// collapse keeps the first k distinct pages of hits, in order, each at
// the score of its first (best) section.
func collapse(secs []section, hits []hit, k int) []eval.Ranked {
	out := make([]eval.Ranked, 0, min(k, len(hits)))
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		if len(out) == k {
			break
		}
		page := secs[h.idx].Page
		if seen[page] {
			continue
		}
		seen[page] = true
		out = append(out, eval.Ranked{DocID: page, Score: h.score})
	}
	return out
}

// sectionDepth is how many sections a section engine is asked for per
// query: knowhub's eval asks its engine for as many chunks before it
// collapses them to pages.
func sectionDepth(c *collection) int {
	if c.Markdown {
		return 1000
	}
	return eval.Depth // a document is one section
}

// knowhub is knowhub's own ranking, in process, through the same
// eval.Collection that `knowhub eval` scores.
type knowhub struct{ col *eval.Collection }

func openKnowhub(ctx context.Context, c *collection, _ Config) (engine, string, error) {
	var col *eval.Collection
	var err error
	if c.Markdown {
		col, err = eval.IndexMarkdownWith(ctx, c.Source, eval.MarkdownOptions{StripFrontMatter: c.Strip})
	} else {
		col, err = eval.IndexDocs(ctx, c.Docs, 0)
	}
	if err != nil {
		return nil, "", fmt.Errorf("index with knowhub: %w", err)
	}
	// The peers index what ReadMarkdown gave; knowhub must have indexed
	// the very same, or the comparison is off.
	if col.Docs != c.Pages || col.Chunks != len(c.Sections) {
		return nil, "", fmt.Errorf("knowhub indexed %d pages, %d sections; the peers were given %d, %d",
			col.Docs, col.Chunks, c.Pages, len(c.Sections))
	}
	return knowhub{col}, "knowhub " + buildVersion() + ", eval.Collection (SearchDocs, as `knowhub eval`)", nil
}

func (k knowhub) search(q string, n int) ([]eval.Ranked, time.Duration, error) {
	start := time.Now()
	r, err := k.col.Search(q, n)
	return r, time.Since(start), err
}

func (knowhub) close() error { return nil }

// buildVersion names knowhub's build: its VCS revision when the binary
// records one.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 7 {
			return s.Value[:7]
		}
	}
	return "(this tree)"
}

// moduleVersion is the version of the module at path this binary was
// built with, or "" when it is not known.
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
