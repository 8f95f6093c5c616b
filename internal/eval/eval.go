// Package eval measures retrieval quality on judged collections: it runs
// every judged query through a Searcher and reports nDCG@10, Recall@10,
// Recall@100 and MRR@10 with trec_eval's conventions, and hit@1 and hit@5. Collection puts a
// corpus (JSONL documents or a folder of Markdown) through the real
// analysis, chunking, indexing and search code, without NATS.
package eval

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/engine"
)

// Depth is the number of documents retrieved per query by default.
const Depth = 100

// Searcher ranks a collection's documents for a query. Search returns at
// most k documents, each once, best first. It must be safe for concurrent
// use: Run calls it from several goroutines.
type Searcher interface {
	Search(query string, k int) ([]Ranked, error)
}

// Options tune Run.
type Options struct {
	// Limit evaluates only the first Limit judged queries, in the order of
	// the queries; 0 evaluates all.
	Limit int
	// Depth is the number of documents retrieved per query; 0 means Depth.
	Depth int
	// Workers is the number of queries searched at once; 0 means
	// GOMAXPROCS.
	Workers int
	// Semantic is the semantic matching used (RunSets only; see
	// Collection.SetSemantic); nil leaves the default.
	Semantic *engine.SemanticMode
	// Together (RunSets only) indexes the corpora of every set that
	// strips no front matter into one engine, each corpus a repository of
	// its own, as `knowhub up` serves several repositories: a set's
	// judged page then also has to come from its own repository. Sets
	// that strip front matter are evaluated alone.
	Together bool
	// Embed (RunSets only), when set, gives sections and queries vectors
	// from this embeddings endpoint, fused at EmbedWeight.
	Embed       *embedding.Client
	EmbedWeight float64
}

// Result is one evaluated query.
type Result struct {
	QueryID string
	// Run is what the Searcher returned, in trec_eval order (see Order).
	Run []Ranked
	Scores
}

// Report is the outcome of Run. Its JSON form carries the means and the
// number of evaluated queries only.
type Report struct {
	Scores      // means over the evaluated queries
	Queries int `json:"queries"`
	// Unjudged counts queries without a relevant document: they are not
	// evaluated. Missing counts judged query IDs absent from the queries.
	Unjudged int `json:"-"`
	Missing  int `json:"-"`
	// Results holds every evaluated query, in the order of the queries.
	Results []Result `json:"-"`
	// SearchTime is the wall-clock time spent searching.
	SearchTime time.Duration `json:"-"`
}

// Run searches every query that has at least one relevant document in
// qrels and averages its figures. A query with no retrieved document scores
// 0. The first Search error stops the run.
func Run(ctx context.Context, s Searcher, queries []Query, qrels Qrels, opts Options) (*Report, error) {
	depth := opts.Depth
	if depth <= 0 {
		depth = Depth
	}
	rep := &Report{}
	present := make(map[string]bool, len(queries))
	var judged []Query
	for _, q := range queries {
		present[q.ID] = true
		if len(qrels[q.ID]) == 0 {
			rep.Unjudged++
			continue
		}
		judged = append(judged, q)
	}
	for qid := range qrels {
		if !present[qid] {
			rep.Missing++
		}
	}
	if opts.Limit > 0 && len(judged) > opts.Limit {
		judged = judged[:opts.Limit]
	}
	if len(judged) == 0 {
		return nil, errors.New("no query has a relevant document")
	}
	rep.Results = make([]Result, len(judged))
	start := time.Now()
	err := forEach(ctx, len(judged), opts.Workers, func(i int) error {
		q := judged[i]
		run, err := s.Search(q.Text, depth)
		if err != nil {
			return fmt.Errorf("search query %s: %w", q.ID, err)
		}
		run = Order(run)
		if len(run) > depth {
			run = run[:depth]
		}
		ids := make([]string, len(run))
		for j, r := range run {
			ids[j] = r.DocID
		}
		rep.Results[i] = Result{QueryID: q.ID, Run: run, Scores: scoreIDs(ids, qrels[q.ID])}
		return nil
	})
	rep.SearchTime = time.Since(start)
	if err != nil {
		return nil, err
	}
	for _, r := range rep.Results {
		rep.add(r.Scores)
	}
	rep.Queries = len(rep.Results)
	rep.scale(1 / float64(rep.Queries))
	return rep, nil
}

// WriteRun writes results as a TREC run file: one "qid Q0 docid rank score
// tag" line per retrieved document, ranks from 1. Scores are written in
// full precision, so trec_eval orders ties exactly as Order did. The format
// has no quoting: an ID or tag containing white space is an error.
func WriteRun(w io.Writer, results []Result, tag string) error {
	if tag == "" || strings.ContainsFunc(tag, unicode.IsSpace) {
		return fmt.Errorf("run tag %q must be one word", tag)
	}
	bw := bufio.NewWriter(w)
	for _, r := range results {
		if strings.ContainsFunc(r.QueryID, unicode.IsSpace) {
			return fmt.Errorf("query id %q contains white space, which a run file cannot hold", r.QueryID)
		}
		for i, d := range r.Run {
			if strings.ContainsFunc(d.DocID, unicode.IsSpace) {
				return fmt.Errorf("doc id %q contains white space, which a run file cannot hold", d.DocID)
			}
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", r.QueryID, d.DocID, i+1, strconv.FormatFloat(d.Score, 'f', -1, 64), tag)
		}
	}
	return bw.Flush()
}

// forEach calls fn(i) for every i in [0, n) on up to workers goroutines (0
// means GOMAXPROCS) and returns the first error. After an error, or once
// ctx is done, no further call starts.
func forEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		failed.Store(true)
	}
	for range min(workers, n) {
		wg.Go(func() {
			for !failed.Load() {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
