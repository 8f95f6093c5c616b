// Package app wires knowhub's stages into runnable workers: one function
// per stage for the separate binaries, and Up, which runs an embedded NATS
// server with every stage in one process.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/chat"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/embedder"
	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/evolve"
	"github.com/knowhub/knowhub/internal/extractor"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/query"
	"github.com/knowhub/knowhub/internal/redact"
	"github.com/knowhub/knowhub/internal/transcript"
	"github.com/knowhub/knowhub/internal/watcher"
)

// Connect opens the NATS connection described by cfg and makes sure every
// stream and bucket of the contract exists.
func Connect(ctx context.Context, n config.NATS, name string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := broker.Connect(broker.ClientConfig{
		URL: n.URL, Name: name, CredsFile: n.CredsFile, NKeyFile: n.NKeyFile,
		User: n.User, Password: n.Password, Token: n.Token,
		TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
	})
	if err != nil {
		return nil, nil, err
	}
	return withTopology(ctx, nc, n.Replicas)
}

// ConnectEmbedded connects to an embedded server in process and declares
// the topology.
func ConnectEmbedded(ctx context.Context, srv *broker.Embedded, name string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := srv.ConnectInProcess(name)
	if err != nil {
		return nil, nil, err
	}
	return withTopology(ctx, nc, 1) // one server: one replica
}

// withTopology wraps nc in JetStream and declares the contract's streams
// and buckets with the given replicas; it closes nc on failure.
func withTopology(ctx context.Context, nc *nats.Conn, replicas int) (*nats.Conn, jetstream.JetStream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	if err := broker.EnsureReplicated(ctx, js, replicas); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// NewRedactor builds the shared redactor: the built-in rules plus the
// configured patterns and secretPatterns.
func NewRedactor(cfg *config.Config) (*redact.Redactor, error) {
	var custom []redact.Pattern
	for _, p := range cfg.Redaction.AllPatterns() {
		custom = append(custom, redact.Pattern{Name: p.Name, Regex: p.Regex, Keywords: p.Keywords})
	}
	return redact.New(custom)
}

// NewWatcher builds a watcher over cfg's repositories.
func NewWatcher(cfg *config.Config, js jetstream.JetStream, maxPayload int64, red *redact.Redactor, log *slog.Logger) (*watcher.Watcher, error) {
	wc := cfg.Watcher
	for _, r := range cfg.Repositories {
		wc.Repos = append(wc.Repos, watcher.Repo{
			Name:      r.Name,
			Root:      r.Path,
			Meta:      r.Meta(),
			Glob:      r.Glob,
			Exclude:   r.Exclude,
			Languages: r.Langs(),
		})
	}
	return watcher.New(wc, watcher.Deps{JS: js, Redactor: red, Logger: log, MaxPayload: maxPayload})
}

// Stages selects which stages a process runs.
type Stages struct {
	Watcher, Chunker, Indexer, Query, Extractor bool
	// Embedder runs only when semantic.embeddings is configured.
	Embedder bool
}

// All runs every stage.
var All = Stages{Watcher: true, Chunker: true, Indexer: true, Query: true, Extractor: true, Embedder: true}

// NewEmbeddingClient returns a client of the configured embeddings
// endpoint, or nil when there is none. The API key is read from the
// environment variable the configuration names.
func NewEmbeddingClient(cfg *config.Config, timeout time.Duration) (*embedding.Client, error) {
	m := cfg.Semantic.Embeddings
	if !m.Enabled() {
		return nil, nil
	}
	var key string
	if m.APIKeyEnv != "" {
		key = os.Getenv(m.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("semantic.embeddings.apiKeyEnv names %s, which is not set", m.APIKeyEnv)
		}
	}
	if timeout <= 0 {
		timeout = time.Duration(m.TimeoutSeconds) * time.Second
	}
	return embedding.New(embedding.Config{BaseURL: m.URL, Model: m.Model, APIKey: key, Dimensions: m.Dimensions,
		BatchSize: m.BatchSize, Timeout: timeout})
}

// NewIntake builds the transcript intake the configuration describes.
func NewIntake(cfg *config.Config, red *redact.Redactor) (*transcript.Intake, error) {
	if red == nil {
		return nil, errors.New("transcript intake: a redactor is required")
	}
	return transcript.NewIntake(cfg.Extractor.Config.Config, transcript.NewSanitizer(red))
}

// NewPipeline builds the extraction pipeline the configuration describes:
// its transcript intake, and the built-in rules or an OpenAI-compatible
// model when one is set.
func NewPipeline(cfg *config.Config, red *redact.Redactor) (*extractor.Pipeline, error) {
	in, err := NewIntake(cfg, red)
	if err != nil {
		return nil, err
	}
	var x extractor.Extractor = extractor.NewRules()
	if l := cfg.Extractor.LLM; l.BaseURL != "" {
		x = extractor.NewLLM(extractor.LLMConfig{Config: chat.Config{BaseURL: l.BaseURL, Model: l.Model, APIKey: l.APIKey,
			Timeout: time.Duration(l.TimeoutSeconds) * time.Second}, Privacy: in.Privacy()}, transcript.NewSanitizer(red))
	}
	return extractor.NewPipeline(cfg.Extractor.Config, in, x)
}

// Service is one long-running part of a node: a stage, the API, the HTTP
// server. Run blocks until ctx is cancelled and returns nil on a clean stop.
type Service struct {
	Name string
	Run  func(ctx context.Context) error
}

// Node is a set of stages sharing one NATS connection: the list of
// services it starts together and stops together.
type Node struct {
	cfg      *config.Config
	log      *slog.Logger
	nc       *nats.Conn
	js       jetstream.JetStream
	stages   Stages
	services []Service
	an       *analysis.Analyzer
	red      *redact.Redactor

	Watcher *watcher.Watcher
	Query   *query.Replica
	API     *api.Service
	http    *http.Server
	httpLn  net.Listener

	complete chan struct{}
	observe  atomic.Pointer[func(Progress)]
	problem  func() error
}

// NewNode builds the selected stages on nc. HTTP is served when the query
// stage runs and cfg enables it.
func NewNode(ctx context.Context, cfg *config.Config, nc *nats.Conn, js jetstream.JetStream, stages Stages, log *slog.Logger) (*Node, error) {
	n := &Node{cfg: cfg, log: log, nc: nc, js: js, stages: stages, complete: make(chan struct{})}
	// One analyzer, and its cache of stemmed words, for every stage here.
	an := analysis.New()
	n.an = an
	red, err := NewRedactor(cfg)
	if err != nil {
		return nil, fmt.Errorf("redactor: %w", err)
	}
	n.red = red
	var intake *transcript.Intake
	if stages.Query {
		if intake, err = NewIntake(cfg, red); err != nil {
			return nil, err
		}
	}
	if stages.Chunker {
		cc := cfg.Chunker
		cc.MaxFileBytes = cfg.Watcher.MaxFileBytes
		w, err := chunker.New(cc, chunker.Deps{NC: nc, Redactor: red, Logger: log})
		if err != nil {
			return nil, err
		}
		n.add(chunker.Stage, w.Run)
	}
	if stages.Indexer {
		w, err := indexer.New(indexer.Config{MaxFileBytes: cfg.Watcher.MaxFileBytes}, indexer.Deps{NC: nc, Logger: log, Analyzer: an, Redactor: red})
		if err != nil {
			return nil, err
		}
		n.add(indexer.Stage, w.Run)
	}
	if stages.Embedder && cfg.Semantic.Embeddings.Enabled() {
		client, err := NewEmbeddingClient(cfg, 0)
		if err != nil {
			return nil, err
		}
		w, err := embedder.New(embedder.Config{MaxFileBytes: cfg.Watcher.MaxFileBytes}, embedder.Deps{NC: nc, Logger: log, Client: client})
		if err != nil {
			return nil, err
		}
		n.add(embedder.Stage, w.Run)
	}
	if stages.Extractor {
		pipeline, err := NewPipeline(cfg, red)
		if err != nil {
			return nil, err
		}
		w, err := extractor.New(extractor.Deps{NC: nc, Pipeline: pipeline, Logger: log})
		if err != nil {
			return nil, err
		}
		n.add(extractor.StageExtract, w.Run)
	}
	if stages.Watcher {
		w, err := NewWatcher(cfg, js, nc.MaxPayload(), red, log)
		if err != nil {
			return nil, err
		}
		n.Watcher = w
		n.add("watcher", w.Run)
		n.add("rescan", n.serveRescan)
	}
	if stages.Query {
		q, err := query.New(cfg.Query, query.Deps{JS: js, Logger: log, Analyzer: an, SegmentDir: cfg.Query.SegmentDir})
		if err != nil {
			return nil, err
		}
		n.Query = q
		n.add(query.Stage, q.Run)
		ac := api.Config{MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Hosts: cfg.HTTP.Hosts(),
			Concurrency: cfg.Query.Concurrency, Queue: cfg.Query.Queue,
			Shards: cfg.Query.Shards, Shard: cfg.Query.Shard, ShardTimeout: time.Duration(cfg.Query.ShardTimeoutMs) * time.Millisecond}
		for _, t := range cfg.HTTP.Tokens {
			ac.Tokens = append(ac.Tokens, api.Token{Name: t.Name, Token: t.Token, Scopes: t.Scopes})
		}
		deps := api.Deps{NC: nc, JS: js, Logger: log, Index: q, Redactor: red, Intake: intake,
			Complete: n.isComplete, Problem: n.Problem}
		if l := cfg.Knowledge.Evolution.LLM; l.BaseURL != "" {
			deps.Evolver = evolve.New(chat.Config{BaseURL: l.BaseURL, Model: l.Model, APIKey: l.APIKey,
				Timeout: time.Duration(l.TimeoutSeconds) * time.Second, Clean: red.String})
		}
		if m := cfg.Semantic.Embeddings; m.Enabled() {
			ac.EmbedTimeout = time.Duration(m.QueryTimeoutMs) * time.Millisecond
			client, err := NewEmbeddingClient(cfg, ac.EmbedTimeout)
			if err != nil {
				return nil, err
			}
			q.Engine().SetEmbeddings(engine.Embeddings{Model: client.Model(), Weight: m.Weight})
			deps.Embedder = client
		}
		a, err := api.New(ac, deps)
		if err != nil {
			return nil, err
		}
		n.API = a
		n.add("api", a.Run)
		n.add("sync", n.trackSync)
		if cfg.HTTP.Enabled() {
			ln, err := net.Listen("tcp", cfg.HTTP.Listen)
			if err != nil {
				return nil, fmt.Errorf("http cannot listen on %s (%v): choose another address with --http", cfg.HTTP.Listen, err)
			}
			n.httpLn = ln
			n.http = &http.Server{
				Handler:           a.Handler(),
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       30 * time.Second,
				WriteTimeout:      60 * time.Second, // min_seq waits are bounded well below
				IdleTimeout:       2 * time.Minute,
			}
			n.add("http", n.serveHTTP)
		}
		if stages.Chunker && stages.Indexer {
			n.add("reindex", n.reindexIfStale)
		}
	}
	return n, nil
}

func (n *Node) add(name string, run func(context.Context) error) {
	n.services = append(n.services, Service{Name: name, Run: run})
}

// Services lists what Run starts, in order.
func (n *Node) Services() []Service { return n.services }

// HTTPAddr is the HTTP API's address, or "" when it is off.
func (n *Node) HTTPAddr() string {
	if n.httpLn == nil {
		return ""
	}
	return n.httpLn.Addr().String()
}

// Run runs every service until ctx is cancelled or one of them fails; one
// failing service stops the others.
func (n *Node) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(n.services))
	for _, svc := range n.services {
		go func() {
			err := svc.Run(ctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("%s: %w", svc.Name, err)
			} else {
				err = nil
			}
			errc <- err
		}()
	}
	var first error
	for range n.services {
		err := <-errc
		if err != nil && first == nil {
			first = err
			n.log.Error("stage failed; stopping", "err", err)
		}
		cancel()
	}
	return first
}

// Complete is closed once the node's initial sync has been indexed: the
// watcher, when the node runs one, has published it, the pipeline has
// caught up and the query replica has applied the result. Until then
// search replies carry indexing: true. A node without the query stage
// never closes it.
func (n *Node) Complete() <-chan struct{} { return n.complete }

func (n *Node) isComplete() bool {
	select {
	case <-n.complete:
		return true
	default:
		return false
	}
}

// SetProblem makes problem the source of what keeps the node from making
// progress (the embedded server's full disk): /readyz answers 503 and
// stats name it while it returns an error. Call before Run.
func (n *Node) SetProblem(problem func() error) { n.problem = problem }

// Problem is what keeps the node from making progress, or nil.
func (n *Node) Problem() error {
	if n.problem == nil {
		return nil
	}
	return n.problem()
}

// ObserveSync hands every pipeline position read while the initial sync
// is indexed to observe, for a progress display.
func (n *Node) ObserveSync(observe func(Progress)) { n.observe.Store(&observe) }

// trackSync closes n.complete once the initial sync has been indexed.
// Like every service it returns when the node stops.
func (n *Node) trackSync(ctx context.Context) error {
	waits := []<-chan struct{}{n.API.Ready()}
	if n.Watcher != nil {
		waits = append(waits, n.Watcher.Ready())
	}
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
	observe := func(p Progress) {
		if f := n.observe.Load(); f != nil {
			(*f)(p)
		}
	}
	if WatchCaughtUp(ctx, n.js, n.Query.Engine().Revision, observe) == nil {
		close(n.complete)
	}
	<-ctx.Done()
	return nil
}

// Settle gives back the memory a bulk load left behind, once the node has
// caught up: the spare capacity of posting lists, and the garbage, which
// goes back to the OS. A query replica does the same when it has loaded;
// `knowhub up` calls it after the initial sync, so that the node's
// resident size is what it holds rather than its peak, and again once the
// embedded server's store cache has expired (broker.StoreCacheExpiry).
// The first collection moves pooled buffers (the store's block buffers
// among them) to their pool's victim cache; the second frees them.
func (n *Node) Settle() {
	if n.Query != nil {
		n.Query.Engine().Trim()
	}
	runtime.GC()
	debug.FreeOSMemory()
}

// reindexIfStale waits for the query stage to load the index and, when a
// document in it was built by another analyzer version (an upgrade
// changed how text is analysed), rebuilds the index by replaying KH_FILES,
// as `knowhub reindex` does. Only a node that runs the chunker and the
// indexer does so; a replica alone only warns. Like every stage, it
// returns when the node stops.
func (n *Node) reindexIfStale(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-n.Query.Ready():
	}
	n.checkIntegrity(ctx)
	if v := n.Query.StaleDocs(); v != "" {
		n.log.Warn("the index was built by another analyzer or chunker version; rebuilding it from KH_FILES", "index", v, "now", contract.DocsBuild(analysis.Version))
		res, err := watcher.Replay(ctx, n.js)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			n.log.Error("could not rebuild the index; run `knowhub reindex`", "err", err)
		default:
			n.log.Info("replayed KH_FILES", "files", res.Files, "tombstones", res.Tombstones, "changed_meanwhile", res.Changed)
		}
	}
	<-ctx.Done()
	return nil
}

func (n *Node) serveHTTP(ctx context.Context) error {
	return serveUntil(ctx, n.http, func() error {
		if n.cfg.HTTP.TLSCert != "" {
			return n.http.ServeTLS(n.httpLn, n.cfg.HTTP.TLSCert, n.cfg.HTTP.TLSKey)
		}
		return n.http.Serve(n.httpLn)
	})
}

// serveUntil runs serve until it fails, or until ctx ends and srv has
// shut down (given 5 s for the requests in flight).
func serveUntil(ctx context.Context, srv *http.Server, serve func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		return nil
	}
}
