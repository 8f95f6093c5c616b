// Package query is knowhub's query stage: a read replica that bootstraps
// an engine from KH_INDEX and follows its updates. The endpoints that serve
// the engine live in package api.
package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
)

// Stage is the query stage's name in logs.
const Stage = "query"

// Config configures a replica; the configuration file's "query" object is
// this struct. Zero values take the engine's defaults.
type Config struct {
	// DefaultTopK is the number of hits when a request names none.
	DefaultTopK int `json:"defaultTopK"`
	// MaxTopK caps the number of hits a request may ask for.
	MaxTopK int `json:"maxTopK"`
	// Semantic matches by meaning as well as by words (engine.Semantic:
	// word-vector neighbours and similarity); a request may still switch
	// it off with "semantic": false.
	Semantic bool `json:"semantic"`
	// Concurrency is how many NATS searches and reads the replica's API
	// answers at once; 0 means one per processor (GOMAXPROCS).
	Concurrency int `json:"concurrency"`
	// Queue is how many NATS requests may wait for a free worker before
	// new ones get a 503 overload error; 0 means api.DefaultQueue (1024).
	Queue int `json:"queue"`
	// SegmentDir is where the replica keeps its segment file (see
	// Deps.SegmentDir). knowhub up keeps it in <dataDir>/segments when
	// this is empty; a replica process keeps none unless it is set.
	SegmentDir string `json:"segmentDir,omitempty"`
	// Shards, when above 1, splits the docs collection into that many
	// shards, and Shard (0 to Shards-1) is the one this replica searches;
	// it holds every other page's statistics only, and coordinates the
	// docs requests it receives across one replica of every shard, each
	// within ShardTimeoutMs (default 2000). The environment's
	// KNOWHUB_SHARD ("<shard>/<shards>") sets both.
	Shards         int `json:"shards,omitempty"`
	Shard          int `json:"shard,omitempty"`
	ShardTimeoutMs int `json:"shardTimeoutMs,omitempty"`
}

// Limits are the engine limits of c.
func (c Config) Limits() engine.Limits {
	return engine.Limits{DefaultTopK: c.DefaultTopK, MaxTopK: c.MaxTopK, Tokens: chunker.EstimateTokens}
}

// Validate reports every problem of c, each as "key: problem".
func (c Config) Validate() error {
	var errs []error
	if c.DefaultTopK < 1 {
		errs = append(errs, errors.New("defaultTopK: must be at least 1"))
	}
	if c.MaxTopK < 1 {
		errs = append(errs, errors.New("maxTopK: must be at least 1"))
	} else if c.DefaultTopK > c.MaxTopK {
		errs = append(errs, fmt.Errorf("defaultTopK: must not exceed query.maxTopK (%d)", c.MaxTopK))
	}
	if c.Concurrency < 0 {
		errs = append(errs, errors.New("concurrency: must be at least 0 (0 means one per processor)"))
	}
	if c.Queue < 0 {
		errs = append(errs, errors.New("queue: must be at least 0 (0 means the default, 1024)"))
	}
	if c.Shards < 0 || c.Shards > contract.MaxShards {
		errs = append(errs, fmt.Errorf("shards: must be 0 to %d (0 or 1: not sharded)", contract.MaxShards))
	} else if c.Shard < 0 || c.Shard >= max(c.Shards, 1) {
		errs = append(errs, fmt.Errorf("shard: must be 0 to shards-1 (%d)", max(c.Shards, 1)-1))
	}
	if c.ShardTimeoutMs < 0 {
		errs = append(errs, errors.New("shardTimeoutMs: must be at least 0 (0 means the default, 2000)"))
	}
	return errors.Join(errs...)
}

// Deps are the replica's collaborators.
type Deps struct {
	JS     jetstream.JetStream
	Logger *slog.Logger
	// Analyzer, when set, is shared with the process's other stages: under
	// knowhub up, the words the indexer stemmed are then cache hits when
	// snippets and phrases are analysed.
	Analyzer *analysis.Analyzer
	// SegmentDir, when set, is where the replica keeps a segment file of
	// its indexes (see package segment): it starts from it and follows
	// KH_INDEX from the revision it reflects, instead of replaying the
	// bucket. Empty keeps none.
	SegmentDir string
	// SegmentQuiet is how long updates must pause before the replica
	// writes its segment again (default DefaultSegmentQuiet).
	SegmentQuiet time.Duration
}

// DefaultSegmentQuiet is how long updates pause before a replica writes
// its segment again.
const DefaultSegmentQuiet = 5 * time.Second

// Replica follows KH_INDEX into an engine. It is safe for concurrent use.
type Replica struct {
	integrity integrity
	js        jetstream.JetStream
	log       *slog.Logger
	engine    *engine.Engine
	seg       segState

	readyOnce sync.Once
	ready     chan struct{}
	// staleDocs is the analyzer version of a docs document built by
	// another than this build's, if the index holds one: see StaleDocs.
	staleDocs atomic.Pointer[string]
}

// New returns a replica; Run starts it.
func New(cfg Config, deps Deps) (*Replica, error) {
	if cfg.DefaultTopK == 0 && cfg.MaxTopK == 0 {
		cfg = Config{DefaultTopK: 10, MaxTopK: 100}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if deps.JS == nil {
		return nil, errors.New("query: a JetStream context is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Analyzer == nil {
		deps.Analyzer = analysis.New()
	}
	if deps.SegmentQuiet <= 0 {
		deps.SegmentQuiet = DefaultSegmentQuiet
	}
	e := engine.NewWithAnalyzer(cfg.Limits(), engine.DefaultScoring(), deps.Analyzer)
	e.SetSemantic(cfg.Semantic)
	e.SetShard(cfg.Shard, cfg.Shards)
	return &Replica{
		js:     deps.JS,
		log:    deps.Logger.With("component", Stage),
		engine: e,
		seg:    segState{dir: deps.SegmentDir, quiet: deps.SegmentQuiet, wrote: make(chan uint64, 1)},
		ready:  make(chan struct{}),
	}, nil
}

// Engine returns the engine the replica feeds.
func (s *Replica) Engine() *engine.Engine { return s.engine }

// Ready is closed once the replica has loaded every KH_INDEX value that
// existed when it started.
func (s *Replica) Ready() <-chan struct{} { return s.ready }

// IsReady reports whether Ready is closed.
func (s *Replica) IsReady() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// built returns what this build stamps on a document of collection c:
// the analyzer version, and for docs the chunker's too
// (contract.DocsBuild).
func built(c string) string {
	if c == contract.CollectionDocs {
		return contract.DocsBuild(analysis.Version)
	}
	return analysis.Version
}

// StaleDocs returns the analyzer version of a docs document in the index
// that another analyzer built, or "" when every one seen so far matches
// this build's. Documents are built again by replaying KH_FILES
// (`knowhub reindex`, which `knowhub up` runs itself).
func (s *Replica) StaleDocs() string {
	if v := s.staleDocs.Load(); v != nil {
		return *v
	}
	return ""
}

// Run bootstraps from KH_INDEX and follows its updates until ctx is
// cancelled.
func (s *Replica) Run(ctx context.Context) error {
	kv, err := s.js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketIndex, err)
	}
	start := time.Now()
	var opts []jetstream.WatchOpt
	if s.seg.dir != "" {
		if s.seg.bucket, s.seg.last, err = s.bucketID(ctx); err != nil {
			s.log.Warn("no index segment this run: the bucket's stream is unreadable", "err", err)
			s.seg.dir = ""
		} else if rev, ok := s.openSegment(ctx, kv); ok {
			opts = append(opts, jetstream.ResumeFromRevision(rev+1))
		}
	}
	w, err := kv.WatchAll(ctx, opts...)
	if err != nil {
		return fmt.Errorf("watch %s: %w", contract.BucketIndex, err)
	}
	defer w.Stop()
	err = s.follow(ctx, w.Updates(), start)
	if s.IsReady() {
		// A clean stop writes what changed since the last segment, so
		// that the next start has nothing to replay.
		s.seg.wait()
		s.saveSegment(nil)
	}
	s.seg.wait()
	return err
}

// follow applies KV updates in order. Values are decoded by a small pool
// of workers while the applier keeps the bucket's order.
func (s *Replica) follow(ctx context.Context, updates <-chan jetstream.KeyValueEntry, start time.Time) error {
	type result struct {
		key string
		rev uint64
		doc *contract.IndexDoc
		err error
	}
	type job struct {
		entry jetstream.KeyValueEntry
		out   chan result
	}
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan job, 256)
	order := make(chan chan result, 256)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := result{key: j.entry.Key(), rev: j.entry.Revision()}
				if j.entry.Operation() == jetstream.KeyValuePut {
					r.doc, r.err = contract.DecodeIndexDoc(j.entry.Value())
				}
				j.out <- r
			}
		}()
	}
	feedErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		for {
			select {
			case <-ctx.Done():
				feedErr <- nil
				return
			case e, ok := <-updates:
				if !ok {
					feedErr <- errors.New("kv watcher closed")
					return
				}
				if e == nil { // initial values delivered
					out := make(chan result, 1)
					out <- result{}
					order <- out
					continue
				}
				out := make(chan result, 1)
				jobs <- job{entry: e, out: out}
				order <- out
			}
		}
	}()
	warned := false
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	for {
		var out chan result
		select {
		case o, ok := <-order:
			if !ok {
				wg.Wait()
				return <-feedErr
			}
			out = o
		case <-quiet.C:
			s.saveSegment(quiet)
			continue
		case rev := <-s.seg.wrote:
			s.swapToSegment(rev)
			continue
		}
		r := <-out
		if r.key == "" {
			s.readyOnce.Do(func() {
				// Loading leaves spare capacity in posting lists and
				// decoded values behind as garbage: trim the one and
				// hand the other back to the OS before serving, so a
				// replica's resident size is what it holds.
				s.engine.Trim()
				debug.FreeOSMemory()
				close(s.ready)
				st := s.engine.Stats(true)
				loaded := 0
				for _, c := range st.Collections {
					loaded += c.Sources
				}
				if loaded == 0 {
					// A first start: the index fills as the pipeline
					// indexes, which up reports by itself.
					s.log.Info("query replica ready on an empty index", "took", time.Since(start).Round(time.Millisecond))
					return
				}
				s.log.Info("query replica ready", "docs_files", st.Collections[contract.CollectionDocs].Sources,
					"docs_sections", st.Collections[contract.CollectionDocs].Chunks, "tools", st.Collections[contract.CollectionTools].Sources,
					"knowledge", st.Collections[contract.CollectionKB].Sources, "from_segment", s.seg.loaded,
					"took", time.Since(start).Round(time.Millisecond))
			})
			s.saveSegment(quiet)
			continue
		}
		if r.err != nil {
			s.log.Error("skip undecodable index value", "key", r.key, "err", r.err)
			continue
		}
		if r.doc != nil && r.doc.Analyzer != built(r.doc.Collection) && !r.doc.Deleted {
			if r.doc.Collection == contract.CollectionDocs && s.staleDocs.Load() == nil {
				v := r.doc.Analyzer
				s.staleDocs.Store(&v)
			}
			if !warned {
				warned = true
				s.log.Warn("index built by another analyzer or chunker version; run `knowhub reindex`", "index", r.doc.Analyzer, "query", built(r.doc.Collection))
			}
		}
		s.engine.Apply(r.key, r.doc, r.rev)
		if s.IsReady() && s.seg.dir != "" {
			quiet.Reset(s.seg.quiet)
		}
	}
}
