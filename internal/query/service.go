package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/extractor"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/redact"
)

// Stage is the query service's name in logs.
const Stage = "query"

// Version is reported by the NATS micro service.
const Version = "0.1.0"

// Config configures the query service.
type Config struct {
	// MinSeqWait bounds how long a search with min_seq waits.
	MinSeqWait time.Duration
	Limits     Limits
	// Tokens are the HTTP API's bearer tokens; none means an open API.
	Tokens []Token
	// MaxBodyBytes bounds HTTP request bodies (default 1 MiB).
	MaxBodyBytes int64
}

// Deps are the service's collaborators.
type Deps struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Logger   *slog.Logger
	Redactor Redactor // applied to knowledge before it is persisted
	// Pipeline sanitizes transcripts sent to kh.extract and POST
	// /api/extract; without it those answer 503.
	Pipeline *extractor.Pipeline
	// Analyzer, when set, is shared with the process's other stages: under
	// knowhub up, the words the indexer stemmed are then cache hits when
	// snippets and phrases are analysed.
	Analyzer *analysis.Analyzer
}

// Service follows KH_INDEX into an Engine and serves it over NATS.
type Service struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	log    *slog.Logger
	engine *Engine
	auth   *authenticator
	red    Redactor
	screen *kb.Screen
	pipe   *extractor.Pipeline

	kbBucket jetstream.KeyValue

	readyOnce sync.Once
	ready     chan struct{}
	// staleDocs is the analyzer version of a docs document built by
	// another than this build's, if the index holds one: see StaleDocs.
	staleDocs atomic.Pointer[string]
}

// StaleDocs returns the analyzer version of a docs document in the index
// that another analyzer built, or "" when every one seen so far matches
// this build's. Documents are built again by replaying KH_FILES
// (`knowhub reindex`, which `knowhub up` runs itself).
func (s *Service) StaleDocs() string {
	if v := s.staleDocs.Load(); v != nil {
		return *v
	}
	return ""
}

// New returns a service; Run starts it.
func New(cfg Config, deps Deps) (*Service, error) {
	if cfg.MinSeqWait == 0 {
		cfg.MinSeqWait = 5 * time.Second
	}
	if deps.Redactor == nil {
		// Never persist knowledge unredacted: default to the built-in rules.
		red, err := redact.New(nil)
		if err != nil {
			return nil, err
		}
		deps.Redactor = red
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if deps.Analyzer == nil {
		deps.Analyzer = analysis.New()
	}
	return &Service{
		cfg:    cfg,
		nc:     deps.NC,
		js:     deps.JS,
		log:    deps.Logger.With("component", Stage),
		engine: newEngine(cfg.Limits, DefaultScoring(), deps.Analyzer),
		auth:   newAuthenticator(cfg.Tokens),
		red:    deps.Redactor,
		screen: kb.NewScreen(),
		pipe:   deps.Pipeline,
		ready:  make(chan struct{}),
	}, nil
}

// Engine returns the engine the service feeds.
func (s *Service) Engine() *Engine { return s.engine }

// Ready is closed once the replica has loaded every KH_INDEX value that
// existed when it started.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// IsReady reports whether Ready is closed.
func (s *Service) IsReady() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// Run bootstraps from KH_INDEX, registers the micro endpoints once ready and
// follows updates until ctx is cancelled.
func (s *Service) Run(ctx context.Context) error {
	kv, err := s.js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketIndex, err)
	}
	if s.kbBucket, err = s.js.KeyValue(ctx, contract.BucketKB); err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketKB, err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", contract.BucketIndex, err)
	}
	defer w.Stop()

	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- s.follow(ctx, w.Updates(), start) }()

	select {
	case <-s.ready:
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:        contract.ServiceName,
		Version:     Version,
		Description: "knowhub retrieval: docs, tools and knowledge search",
		QueueGroup:  contract.ServiceQueueGroup,
	})
	if err != nil {
		return fmt.Errorf("add micro service: %w", err)
	}
	defer svc.Stop()
	if err := svc.AddEndpoint("search-docs", micro.HandlerFunc(s.handleSearchDocs), micro.WithEndpointSubject(contract.SubjectSearchDocs)); err != nil {
		return fmt.Errorf("add endpoint %s: %w", contract.SubjectSearchDocs, err)
	}
	endpoints := []struct {
		name, subject string
		h             micro.HandlerFunc
	}{
		{"stats", contract.SubjectStats, s.handleStats},
		{"search-tools", contract.SubjectSearchTools, jsonEndpoint(s.SearchTools)},
		{"tools-upsert", contract.SubjectToolsUpsert, jsonEndpoint(s.UpsertTools)},
		{"tools-remove", contract.SubjectToolsRemove, jsonEndpoint(s.RemoveTools)},
		{"search-kb", contract.SubjectSearchKB, jsonEndpoint(s.SearchKB)},
		{"kb-save", contract.SubjectKBSave, jsonEndpoint(s.SaveKB)},
		// NATS callers are trusted: NATS authorisation decides who may
		// send on these subjects.
		{"kb-update", contract.SubjectKBUpdate, jsonEndpoint(func(r kb.UpdateRequest) (*kb.UpdateResponse, error) { return s.UpdateKB(r, nil, true) })},
		{"kb-get", contract.SubjectKBGet, jsonEndpoint(func(r contract.KBGetRequest) (*kb.Entry, error) { return s.GetKB(r, false) })},
		{"extract", contract.SubjectExtract, s.handleExtract},
		{"kb-review", contract.SubjectKBReview, jsonEndpoint(func(struct{}) ([]kb.Entry, error) { return s.ReviewKB() })},
	}
	for _, ep := range endpoints {
		if err := svc.AddEndpoint(ep.name, ep.h, micro.WithEndpointSubject(ep.subject)); err != nil {
			return fmt.Errorf("add endpoint %s: %w", ep.subject, err)
		}
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// follow applies KV updates in order. Values are decoded by a small pool
// of workers while the applier keeps the bucket's order.
func (s *Service) follow(ctx context.Context, updates <-chan jetstream.KeyValueEntry, start time.Time) error {
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
	for out := range order {
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
				s.log.Info("query replica ready", "docs_files", st.Collections[contract.CollectionDocs].Sources,
					"docs_chunks", st.Collections[contract.CollectionDocs].Chunks, "took", time.Since(start).Round(time.Millisecond))
			})
			continue
		}
		if r.err != nil {
			s.log.Error("skip undecodable index value", "key", r.key, "err", r.err)
			continue
		}
		if r.doc != nil && r.doc.Analyzer != analysis.Version && !r.doc.Deleted {
			if r.doc.Collection == contract.CollectionDocs && s.staleDocs.Load() == nil {
				v := r.doc.Analyzer
				s.staleDocs.Store(&v)
			}
			if !warned {
				warned = true
				s.log.Warn("index built by another analyzer version; run `knowhub reindex`", "index", r.doc.Analyzer, "query", analysis.Version)
			}
		}
		s.engine.Apply(r.key, r.doc, r.rev)
	}
	wg.Wait()
	return <-feedErr
}

// jsonEndpoint adapts fn to a micro handler: JSON request in, JSON reply
// or a service error with an HTTP-like code out.
func jsonEndpoint[Req, Resp any](fn func(Req) (Resp, error)) micro.HandlerFunc {
	return func(req micro.Request) {
		var in Req
		if err := json.Unmarshal(req.Data(), &in); err != nil {
			_ = req.Error("400", "request is not valid JSON for this endpoint: "+err.Error(), nil)
			return
		}
		out, err := fn(in)
		if err != nil {
			_ = req.Error(strconv.Itoa(StatusOf(err)), err.Error(), nil)
			return
		}
		data, err := encodeReply(out)
		if err != nil {
			_ = req.Error("500", "encode reply: "+err.Error(), nil)
			return
		}
		_ = req.Respond(data)
	}
}

func (s *Service) handleSearchDocs(req micro.Request) { jsonEndpoint(s.SearchDocs)(req) }

// SearchDocs honours MinSeq, then searches.
func (s *Service) SearchDocs(sr contract.SearchRequest) (*contract.SearchResponse, error) {
	if sr.MinSeq > 0 && !s.engine.WaitApplied(contract.CollectionDocs, sr.MinSeq, s.cfg.MinSeqWait) {
		return nil, fmt.Errorf("%w: index has not reached sequence %d within %s", ErrUnavailable, sr.MinSeq, s.cfg.MinSeqWait)
	}
	return s.engine.SearchDocs(sr)
}

// ErrUnavailable marks requests the replica cannot serve yet.
var ErrUnavailable = errors.New("unavailable")

// StatusOf maps an error to the HTTP status that fits it; NATS replies use
// the same number as their error code.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusInternalServerError
	}
}

func (s *Service) handleStats(req micro.Request) {
	_ = req.RespondJSON(s.stats())
}

// stats is the engine's statistics with the replica's state.
func (s *Service) stats() *contract.StatsResponse {
	return s.engine.Stats(s.IsReady())
}
