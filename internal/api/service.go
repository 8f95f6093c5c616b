// Package api is knowhub's API edge: every endpoint, NATS micro and HTTP,
// read and write, with bearer-token authentication and scopes. Searches go
// to the engine the query replica feeds; writes become events on the
// contract's streams. Each handler passes its caller's context to the work
// it starts.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/redact"
	"github.com/knowhub/knowhub/internal/transcript"
	"github.com/knowhub/knowhub/internal/version"
)

// ErrBadRequest marks a request that can never succeed as sent.
var ErrBadRequest = engine.ErrBadRequest

// Config configures the API.
type Config struct {
	// MinSeqWait bounds how long a search with min_seq waits.
	MinSeqWait time.Duration
	// Tokens are the HTTP API's bearer tokens; none means an open API.
	Tokens []Token
	// MaxBodyBytes bounds HTTP request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Hosts are the host names the HTTP API answers to besides localhost
	// and IP addresses (see browserGuard).
	Hosts []string
	// EmbedTimeout bounds the embedding of one docs query (default
	// DefaultEmbedTimeout).
	EmbedTimeout time.Duration
	// Concurrency is how many NATS requests that only read (searches,
	// reads, listings, stats) run at once; 0 means GOMAXPROCS.
	Concurrency int
	// Queue is how many NATS requests may wait for a worker, per lane,
	// before new ones are answered with a 503 overload error; 0 means
	// DefaultQueue, a negative value no queue at all.
	Queue int
	// Shards, when above 1, is the number of shards of the docs
	// collection, and Shard the one this replica holds (see
	// contract.ShardOf): the replica answers its shard's endpoints and
	// coordinates the docs requests it receives across every shard,
	// waiting at most ShardTimeout (default DefaultShardTimeout) for each.
	Shards, Shard int
	ShardTimeout  time.Duration
}

// Index is what the endpoints read: the replica's engine and whether it
// has loaded (query.Replica).
type Index interface {
	Engine() *engine.Engine
	Ready() <-chan struct{}
	IsReady() bool
	// Integrity is what is known to be wrong with the index, or "".
	Integrity() string
}

// Deps are the API's collaborators.
type Deps struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Logger   *slog.Logger
	Index    Index
	Redactor Redactor // applied to knowledge before it is persisted
	// Intake sanitizes transcripts sent to kh.extract and POST
	// /api/extract before they are stored; without it those answer 503.
	Intake *transcript.Intake
	// Complete reports whether the node's initial sync has been indexed;
	// until then search replies carry indexing: true. Nil means always.
	Complete func() bool
	// Problem names what keeps the node from making progress (a full
	// disk), or returns nil: /readyz answers 503 and stats show it.
	Problem func() error
	// Evolver, when set, is knowledge evolution's model step (package
	// evolve); without it the rules of package kb run alone.
	Evolver Evolver
	// Embedder, when set, embeds docs queries for fusion with the
	// sections' endpoint vectors (engine.Embeddings).
	Embedder QueryEmbedder
}

// Service serves an Index over NATS micro (Run) and HTTP (Handler).
type Service struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	log    *slog.Logger
	index  Index
	engine *engine.Engine
	auth   *authenticator
	guard  *browserGuard
	red    Redactor
	screen *kb.Screen
	intake *transcript.Intake
	evolve Evolver

	kbBucket jetstream.KeyValue
	ready    chan struct{}
	metrics  *Metrics
	reads    atomic.Pointer[lane] // the NATS read endpoints' lane, once Run has made it
	complete func() bool
	problem  func() error
	embedder *queryEmbedder
	// replies receives shard replies (sharded replicas only).
	replies *shardReplies
}

// New returns the API; Run serves its NATS endpoints, Handler its HTTP ones.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Index == nil || deps.NC == nil || deps.JS == nil {
		return nil, errors.New("api: an index, a NATS connection and JetStream are required")
	}
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
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = runtime.GOMAXPROCS(0)
	}
	if cfg.Queue == 0 {
		cfg.Queue = DefaultQueue
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Shards > contract.MaxShards || cfg.Shards > 1 && (cfg.Shard < 0 || cfg.Shard >= cfg.Shards) {
		return nil, fmt.Errorf("api: shard %d of %d: want 0 to shards-1, at most %d shards", cfg.Shard, cfg.Shards, contract.MaxShards)
	}
	s := &Service{
		cfg:    cfg,
		nc:     deps.NC,
		js:     deps.JS,
		log:    deps.Logger.With("component", "api"),
		index:  deps.Index,
		engine: deps.Index.Engine(),
		auth:   newAuthenticator(cfg.Tokens),
		guard:  newBrowserGuard(cfg.Hosts),
		red:    deps.Redactor,
		screen: kb.NewScreen(),
		intake: deps.Intake,
		evolve: deps.Evolver,
		ready:  make(chan struct{}),

		complete: deps.Complete,
		problem:  deps.Problem,
	}
	if deps.Embedder != nil {
		if cfg.EmbedTimeout <= 0 {
			cfg.EmbedTimeout = DefaultEmbedTimeout
		}
		s.embedder = &queryEmbedder{e: deps.Embedder, timeout: cfg.EmbedTimeout}
	}
	s.metrics = NewMetrics(deps.JS)
	s.metrics.instrumentAPI(s)
	if s.sharded() {
		s.replies = newShardReplies(s.nc)
		s.engine.SetShards(shardClient{s})
	}
	return s, nil
}

// Metrics is the registry GET /metrics serves.
func (s *Service) Metrics() *Metrics { return s.metrics }

// Ready is closed once the index has loaded and every NATS endpoint is
// registered: requests sent from then on find a responder.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// open reports whether the node has no tokens: a local API whose callers
// are trusted.
func (s *Service) open() bool { return len(s.cfg.Tokens) == 0 }

// Integrity is what is known to be wrong with the index served, or "".
func (s *Service) Integrity() string { return s.index.Integrity() }

// Complete reports whether the initial sync has been indexed.
func (s *Service) Complete() bool { return s.complete == nil || s.complete() }

// Problem is what keeps the node from making progress, or "".
func (s *Service) Problem() string {
	if s.problem == nil {
		return ""
	}
	if err := s.problem(); err != nil {
		return err.Error()
	}
	return ""
}

// Running is how many NATS reads are being answered now.
func (s *Service) Running() int {
	if l := s.reads.Load(); l != nil {
		return int(l.running.Load())
	}
	return 0
}

// Queued is how many NATS reads wait for a free worker.
func (s *Service) Queued() int {
	if l := s.reads.Load(); l != nil {
		return l.queued()
	}
	return 0
}

// IsReady reports whether the index has loaded.
func (s *Service) IsReady() bool { return s.index.IsReady() }

// Run registers the NATS micro endpoints once the index has loaded and
// serves them until ctx is cancelled. Each request's work is bounded by
// ctx as well as by its own timeout.
func (s *Service) Run(ctx context.Context) error {
	var err error
	if s.kbBucket, err = s.js.KeyValue(ctx, contract.BucketKB); err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketKB, err)
	}
	select {
	case <-s.index.Ready():
	case <-ctx.Done():
		return nil
	}
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:        contract.ServiceName,
		Version:     version.Get().Version,
		Description: "knowhub retrieval: docs, tools and knowledge search",
		QueueGroup:  contract.ServiceQueueGroup,
	})
	if err != nil {
		return fmt.Errorf("add micro service: %w", err)
	}
	defer func() { _ = svc.Stop() }()
	// Reads share one lane of Concurrency workers, so a replica answers
	// them in parallel up to its processors. Each write keeps a lane of
	// one worker: it reads the current record before it publishes, and
	// requests pipelined on one subject are applied in the order they
	// arrived, as they were when every endpoint ran on its subscription's
	// goroutine.
	reads := newLane(s.nc, s.cfg.Concurrency, s.cfg.Queue)
	s.reads.Store(reads)
	lanes := []*lane{reads}
	defer func() {
		for _, l := range lanes {
			l.stop()
		}
	}()
	if s.sharded() {
		stop, err := s.serveShard(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	const read, write = false, true
	endpoints := []struct {
		name, subject string
		h             micro.HandlerFunc
		meta          map[string]string
		write         bool
	}{
		{"search-docs", contract.SubjectSearchDocs, jsonEndpoint(ctx, s.SearchDocs), schemas[contract.SearchRequest, contract.SearchResponse](), read},
		{"stats", contract.SubjectStats, s.handleStats, schemas[struct{}, contract.StatsResponse](), read},
		{"read-docs", contract.SubjectReadDocs, jsonEndpoint(ctx, s.ReadDocs), schemas[contract.DocsReadRequest, contract.DocsReadResponse](), read},
		{"docs-repos", contract.SubjectDocsRepos, jsonEndpoint(ctx, s.ListRepos), schemas[struct{}, contract.DocsReposResponse](), read},
		{"docs-pages", contract.SubjectDocsPages, jsonEndpoint(ctx, s.ListPages), schemas[contract.DocsPagesRequest, contract.DocsPagesResponse](), read},
		{"search-tools", contract.SubjectSearchTools, jsonEndpoint(ctx, s.SearchTools), schemas[contract.ToolSearchRequest, contract.ToolSearchResponse](), read},
		{"tools-upsert", contract.SubjectToolsUpsert, jsonEndpoint(ctx, s.UpsertTools), schemas[contract.ToolsUpsertRequest, contract.ToolsWriteResponse](), write},
		{"tools-remove", contract.SubjectToolsRemove, jsonEndpoint(ctx, s.RemoveTools), schemas[contract.ToolsRemoveRequest, contract.ToolsWriteResponse](), write},
		// On an open node (no tokens) a NATS search or read naming no
		// scopes sees every scope, as an HTTP one does; with tokens it
		// sees the public entries and those of the scopes it names.
		{"search-kb", contract.SubjectSearchKB, jsonEndpoint(ctx, func(ctx context.Context, r kb.SearchRequest) (*kb.SearchResponse, error) {
			r.AllScopes = s.open() && len(r.Scopes) == 0
			return s.SearchKB(ctx, r)
		}), schemas[kb.SearchRequest, kb.SearchResponse](), read},
		{"kb-save", contract.SubjectKBSave, jsonEndpoint(ctx, s.SaveKB), schemas[kb.SaveRequest, kb.SaveResponse](), write},
		// NATS callers are trusted: NATS authorisation decides who may
		// send on these subjects.
		{"kb-update", contract.SubjectKBUpdate, jsonEndpoint(ctx, func(ctx context.Context, r kb.UpdateRequest) (*kb.UpdateResponse, error) {
			return s.UpdateKB(ctx, r, nil, true)
		}), schemas[kb.UpdateRequest, kb.UpdateResponse](), write},
		{"kb-get", contract.SubjectKBGet, jsonEndpoint(ctx, func(ctx context.Context, r contract.KBGetRequest) (*kb.Entry, error) {
			return s.GetKB(ctx, r, s.open() && len(r.Scopes) == 0)
		}), schemas[contract.KBGetRequest, kb.Entry](), read},
		{"extract", contract.SubjectExtract, s.handleExtract(ctx), extractSchemas(), write},
		{"kb-review", contract.SubjectKBReview, jsonEndpoint(ctx, func(ctx context.Context, _ struct{}) ([]kb.Entry, error) {
			return s.ReviewKB(ctx)
		}), schemas[struct{}, []kb.Entry](), read},
	}
	for _, ep := range endpoints {
		l := reads
		if ep.write {
			l = newLane(s.nc, 1, s.cfg.Queue)
			lanes = append(lanes, l)
		}
		h := l.handler(s.metrics.microHandler(ep.name, ep.h), func() { s.metrics.microRejected(ep.name) })
		if err := svc.AddEndpoint(ep.name, h, micro.WithEndpointSubject(ep.subject), micro.WithEndpointMetadata(ep.meta)); err != nil {
			return fmt.Errorf("add endpoint %s: %w", ep.subject, err)
		}
	}
	close(s.ready)
	<-ctx.Done()
	// Stop taking requests before the lanes answer what is still queued.
	_ = svc.Stop()
	return nil
}

// jsonEndpoint adapts fn to a micro handler: JSON request in, JSON reply
// or a service error with an HTTP-like code out.
// Each call's context is ctx, the service's lifetime.
func jsonEndpoint[Req, Resp any](ctx context.Context, fn func(context.Context, Req) (Resp, error)) micro.HandlerFunc {
	return func(req micro.Request) {
		var in Req
		if err := decodeBody(req.Data(), &in, true); err != nil {
			_ = req.Error("400", err.Error(), nil)
			return
		}
		out, err := fn(ctx, in)
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

// SearchDocs honours MinSeq, then searches.
// ReadDocs reads a section, its neighbours or its page back from the
// index; one the index does not hold (a removed file) is ErrNotFound.
func (s *Service) ReadDocs(ctx context.Context, r contract.DocsReadRequest) (*contract.DocsReadResponse, error) {
	if s.sharded() {
		return s.readSharded(ctx, r)
	}
	return notFound(s.engine.ReadDocs(r))
}

// ListRepos lists the repositories of the docs index.
func (s *Service) ListRepos(ctx context.Context, _ struct{}) (*contract.DocsReposResponse, error) {
	if s.sharded() {
		return s.reposSharded(ctx)
	}
	return s.engine.ListRepos(), nil
}

// ListPages lists a repository's pages, a window at a time.
func (s *Service) ListPages(ctx context.Context, r contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
	if s.sharded() {
		return s.pagesSharded(ctx, r)
	}
	return notFound(s.engine.ListPages(r))
}

func (s *Service) SearchDocs(ctx context.Context, sr contract.SearchRequest) (*contract.SearchResponse, error) {
	if sr.MinSeq > 0 && !s.waitApplied(ctx, contract.CollectionDocs, sr.MinSeq) {
		return nil, fmt.Errorf("%w: index has not reached sequence %d within %s", ErrUnavailable, sr.MinSeq, s.cfg.MinSeqWait)
	}
	s.embed(ctx, &sr)
	resp, err := s.engine.SearchDocs(sr)
	if err == nil {
		resp.Indexing = !s.Complete()
	}
	if err != nil || len(sr.Repos) == 0 || resp.Total > 0 {
		return resp, err
	}
	// No hit in the repositories asked for: a name the index does not
	// hold is a mistake to report, not an empty answer.
	known := make([]string, 0)
	if s.sharded() {
		repos, err := s.reposSharded(ctx)
		if err != nil {
			return resp, nil
		}
		for _, r := range repos.Repos {
			known = append(known, r.Repo)
		}
	} else {
		for _, r := range s.engine.Stats(true).Repos {
			known = append(known, r.Repo)
		}
	}
	for _, r := range sr.Repos {
		if !slices.Contains(known, r) {
			return nil, fmt.Errorf("%w: no repository %q in the index (it holds: %s)", ErrBadRequest, r, strings.Join(known, ", "))
		}
	}
	return resp, nil
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

// stats is the engine's statistics with the replica's state; a shard
// counts the docs of every shard.
func (s *Service) stats() *contract.StatsResponse {
	st := s.engine.Stats(s.IsReady())
	if s.sharded() {
		s.statsSharded(context.Background(), st)
	}
	st.Integrity = s.Integrity()
	st.Problem = s.Problem()
	st.Indexing = !s.Complete()
	return st
}

// waitApplied waits, at most MinSeqWait and while ctx lives, for the
// collection to apply source sequence seq.
func (s *Service) waitApplied(ctx context.Context, collection string, seq uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MinSeqWait)
	defer cancel()
	return s.engine.WaitApplied(ctx, collection, seq)
}
