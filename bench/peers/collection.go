package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/knowhub/knowhub/internal/eval"
)

// section is one unit every engine indexes: a section knowhub's chunker
// cut from a Markdown page, with the fields knowhub searches, or a whole
// document of a corpus.jsonl collection.
type section struct {
	ID      string `json:"-"`
	Page    string `json:"-"` // the page it belongs to: what qrels name
	Title   string `json:"title,omitempty"`
	Summary string `json:"summary,omitempty"` // front matter summary and read_when, as knowhub joins them
	Heading string `json:"heading,omitempty"` // the heading path, one heading a line
	Body    string `json:"body,omitempty"`
}

// collection is a judged collection loaded for every engine.
type collection struct {
	Source   string
	Markdown bool // pages are Markdown files under Source, cut into sections
	// Docs holds a corpus.jsonl collection's documents, which knowhub
	// indexes through eval.IndexDocs.
	Docs     []eval.Doc
	Pages    int
	Sections []section
	Skipped  []string // Markdown files the chunker rejected
	Strip    []string // front-matter keys cut before chunking
	Queries  []eval.Query
	Qrels    eval.Qrels
}

// loadCollection reads a judged collection: the Markdown folder
// cfg.Markdown with cfg.Queries and cfg.Qrels, or the folder cfg.Dir
// holding corpus.jsonl, queries.jsonl and qrels.tsv (BEIR's layout).
func loadCollection(ctx context.Context, cfg Config) (*collection, error) {
	queries, qrels := cfg.Queries, cfg.Qrels
	switch {
	case cfg.Markdown != "" && cfg.Dir != "":
		return nil, errors.New("give either a collection folder or --markdown, not both")
	case cfg.Markdown != "" && (queries == "" || qrels == ""):
		return nil, errors.New("--markdown needs --queries and --qrels")
	case cfg.Markdown == "" && cfg.Dir == "":
		return nil, errors.New("want a collection folder (corpus.jsonl, queries.jsonl, qrels.tsv) or --markdown DOCS_DIR")
	case cfg.Markdown == "":
		if queries == "" {
			queries = filepath.Join(cfg.Dir, "queries.jsonl")
		}
		if qrels == "" {
			qrels = filepath.Join(cfg.Dir, "qrels.tsv")
		}
	}
	// Check every input before reading any, which takes a while.
	inputs := []string{queries, qrels, cfg.Markdown}
	if cfg.Markdown == "" {
		inputs[2] = filepath.Join(cfg.Dir, "corpus.jsonl")
	}
	for _, p := range inputs {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", p)
		} else if err != nil {
			return nil, err
		}
	}
	c := &collection{}
	var err error
	if c.Queries, err = eval.LoadQueries(queries); err != nil {
		return nil, fmt.Errorf("load queries: %w", err)
	}
	if c.Qrels, err = eval.LoadQrels(qrels); err != nil {
		return nil, fmt.Errorf("load judgments: %w", err)
	}
	if cfg.Markdown != "" {
		c.Source, c.Markdown = cfg.Markdown, true
		c.Strip = cfg.StripFrontMatter
		files, skipped, err := eval.ReadMarkdownWith(ctx, cfg.Markdown, eval.MarkdownOptions{StripFrontMatter: cfg.StripFrontMatter})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", cfg.Markdown, err)
		}
		c.Pages, c.Skipped = len(files), skipped
		for _, f := range files {
			for _, ch := range f.Chunks {
				c.Sections = append(c.Sections, section{
					ID:      f.Path + "#" + strconv.Itoa(ch.Ord),
					Page:    f.Path,
					Title:   ch.Title,
					Summary: joinNonEmpty("\n", ch.Summary, ch.ReadWhen),
					Heading: strings.Join(ch.HeadingPath, "\n"),
					Body:    ch.Text,
				})
			}
		}
	} else {
		c.Source = cfg.Dir
		if c.Docs, err = eval.LoadCorpus(inputs[2]); err != nil {
			return nil, fmt.Errorf("load corpus: %w", err)
		}
		c.Pages = len(c.Docs)
		c.Sections = make([]section, len(c.Docs))
		for i, d := range c.Docs {
			c.Sections[i] = section{ID: d.ID, Page: d.ID, Title: d.Title, Body: d.Text}
		}
	}
	if len(c.Sections) == 0 {
		return nil, fmt.Errorf("no section in %s", c.Source)
	}
	return c, nil
}

// judgedQueries returns the queries that have a relevant page, in file
// order, at most limit of them (0: all).
func (c *collection) judgedQueries(limit int) []eval.Query {
	var out []eval.Query
	for _, q := range c.Queries {
		if len(c.Qrels[q.ID]) > 0 {
			out = append(out, q)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// unknownPages counts the judged pages that are not in the collection: a
// judgment that no engine can satisfy, usually a path typed wrong.
func (c *collection) unknownPages() int {
	pages := make(map[string]bool, c.Pages)
	for _, s := range c.Sections {
		pages[s.Page] = true
	}
	n := 0
	for _, rel := range c.Qrels {
		for p := range rel {
			if !pages[p] {
				n++
			}
		}
	}
	return n
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
