package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// bleveBatch is the number of sections per bleve batch, as the bleve
// speed bench (./bleve) indexes them.
const bleveBatch = 1000

// bleveEngine is bleve with its default mapping (every field analysed by
// the standard analyser and searchable together as _all) and its default
// scoring, asked a match query (the query's terms OR-ed).
type bleveEngine struct {
	idx  bleve.Index
	work string
}

func openBleve(ctx context.Context, c *collection, _ Config) (engine, string, error) {
	work, err := os.MkdirTemp("", "knowhub-peers-bleve-")
	if err != nil {
		return nil, "", fmt.Errorf("make bleve index folder: %w", err)
	}
	idx, err := bleve.New(filepath.Join(work, "index"), bleve.NewIndexMapping())
	if err != nil {
		os.RemoveAll(work)
		return nil, "", fmt.Errorf("create bleve index: %w", err)
	}
	e := &bleveEngine{idx: idx, work: work}
	for i := 0; i < len(c.Sections); i += bleveBatch {
		if err := ctx.Err(); err != nil {
			e.close()
			return nil, "", err
		}
		b := idx.NewBatch()
		for j := i; j < min(i+bleveBatch, len(c.Sections)); j++ {
			if err := b.Index(strconv.Itoa(j), &c.Sections[j]); err != nil {
				e.close()
				return nil, "", fmt.Errorf("index section %s with bleve: %w", c.Sections[j].ID, err)
			}
		}
		if err := idx.Batch(b); err != nil {
			e.close()
			return nil, "", fmt.Errorf("index a batch with bleve: %w", err)
		}
	}
	about := "bleve " + moduleVersion("github.com/blevesearch/bleve/v2") + ", default mapping and scoring, match query"
	return pages{s: e, secs: c.Sections, depth: sectionDepth(c)}, about, nil
}

func (e *bleveEngine) sections(q string, n int) ([]hit, time.Duration, error) {
	start := time.Now()
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), n, 0, false)
	r, err := e.idx.Search(req)
	took := time.Since(start)
	if err != nil {
		return nil, took, fmt.Errorf("search bleve: %w", err)
	}
	hits := make([]hit, 0, len(r.Hits))
	for _, h := range r.Hits {
		i, err := strconv.Atoi(h.ID)
		if err != nil {
			return nil, took, fmt.Errorf("bleve returned an unknown id %q", h.ID)
		}
		hits = append(hits, hit{idx: i, score: h.Score})
	}
	return hits, took, nil
}

func (e *bleveEngine) close() error {
	err := e.idx.Close()
	if rerr := os.RemoveAll(e.work); err == nil {
		err = rerr
	}
	return err
}
