package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/knowhub/knowhub/internal/bench"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/corpus"
)

// Result holds the measured figures.
type Result struct {
	Files, Sections int
	Chunk           time.Duration // knowhub's chunker, before the index
	Index           time.Duration // an empty bleve index to every section indexed
	IndexCPU        time.Duration // user+system CPU of this process meanwhile
	PeakRSS         int64         // bytes, the process's peak
	RSS             int64         // bytes, once indexed and the sections dropped
	// Queries with hits, and the distribution of their time in process.
	Hits               int
	P50, P90, P99, Max time.Duration
}

// section is the document bleve indexes for one chunk: the fields knowhub
// searches, under bleve's default mapping (every field analysed by the
// standard analyser and searchable together as _all).
type section struct {
	Title   string `json:"title"`
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// Run indexes cfg.Corpus with bleve and times queries on it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Queries <= 0 {
		cfg.Queries = 2000
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1000
	}
	work, docs, size, err := corpus.Stage(cfg.Corpus, "knowhub-bleve-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(cfg.Out, "corpus %s: %.1f MB copied to %s\n", cfg.Corpus, float64(size)/1e6, docs)

	res := &Result{}
	start := time.Now()
	ids, sections, err := chunkCorpus(ctx, docs, cfg.Files, &res.Files)
	if err != nil {
		return nil, err
	}
	res.Chunk, res.Sections = time.Since(start), len(sections)
	unit := "sections"
	if cfg.Files {
		unit = "documents, one a file"
	}
	fmt.Fprintf(cfg.Out, "chunked %d files into %d %s in %s with knowhub's chunker (not counted below)\n",
		res.Files, res.Sections, unit, res.Chunk.Round(time.Millisecond))

	start = time.Now()
	cpuStart, _ := bench.CPUTime()
	idx, err := bleve.New(filepath.Join(work, "index"), bleve.NewIndexMapping())
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	for i := 0; i < len(sections); i += cfg.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := idx.NewBatch()
		for j := i; j < min(i+cfg.Batch, len(sections)); j++ {
			if err := b.Index(ids[j], &sections[j]); err != nil {
				return nil, err
			}
		}
		if err := idx.Batch(b); err != nil {
			return nil, err
		}
	}
	res.Index = time.Since(start)
	cpuEnd, _ := bench.CPUTime()
	res.IndexCPU = cpuEnd - cpuStart
	ids, sections = nil, nil
	runtime.GC()
	res.RSS, res.PeakRSS = bench.RSS(os.Getpid())
	fmt.Fprintf(cfg.Out, "bleve index (%s, default mapping, batches of %d): %s (%s of CPU); RSS %d MB, peak %d MB\n",
		bleveVersion(), cfg.Batch, res.Index.Round(time.Millisecond), res.IndexCPU.Round(time.Millisecond), res.RSS>>20, res.PeakRSS>>20)

	queries, err := corpus.Queries(docs, 500)
	if err != nil {
		return nil, err
	}
	search := func(q string) (bool, error) {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), 10, 0, false)
		r, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return false, err
		}
		return len(r.Hits) > 0, nil
	}
	for _, q := range queries { // warm up
		if _, err := search(q); err != nil {
			return nil, err
		}
	}
	times := make([]time.Duration, cfg.Queries)
	for i := range times {
		q := queries[i%len(queries)]
		t := time.Now()
		hit, err := search(q)
		if err != nil {
			return nil, err
		}
		times[i] = time.Since(t)
		if hit {
			res.Hits++
		}
	}
	slices.Sort(times)
	res.P50, res.P90, res.P99 = bench.Percentile(times, 50), bench.Percentile(times, 90), bench.Percentile(times, 99)
	res.Max = times[len(times)-1]
	fmt.Fprintf(cfg.Out, "query in process (top 10, no highlighting) over %d requests, %d with hits: p50 %s  p90 %s  p99 %s  max %s\n",
		len(times), res.Hits, res.P50, res.P90, res.P99, res.Max)
	return res, nil
}

// chunkCorpus cuts every Markdown file under dir into sections with
// knowhub's chunker, and returns them with their IDs. With whole, a file
// that has sections becomes one document: its title, and its text as the
// body.
func chunkCorpus(ctx context.Context, dir string, whole bool, files *int) ([]string, []section, error) {
	var ids []string
	var sections []section
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".md" && ext != ".mdx" {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		chunks, err := chunker.Split(filepath.ToSlash(rel), src, chunker.Options{})
		if errors.Is(err, chunker.ErrInvalidUTF8) || errors.Is(err, chunker.ErrTooDeep) {
			return nil // knowhub skips these files too
		}
		if err != nil {
			return err
		}
		if len(chunks) == 0 {
			return nil
		}
		*files++
		if whole {
			ids = append(ids, rel)
			sections = append(sections, section{Title: chunks[0].Title, Body: string(src)})
			return nil
		}
		for _, c := range chunks {
			ids = append(ids, rel+"#"+strconv.Itoa(c.Ord))
			sections = append(sections, section{Title: c.Title, Heading: strings.Join(c.HeadingPath, "\n"), Body: c.Text})
		}
		return nil
	})
	if err == nil && len(sections) == 0 {
		err = errors.New("no sections in the corpus")
	}
	return ids, sections, err
}

// bleveVersion is the version of bleve this binary was built with.
func bleveVersion() string {
	if v := moduleVersion("github.com/blevesearch/bleve/v2"); v != "" {
		return "bleve " + v
	}
	return "bleve"
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
