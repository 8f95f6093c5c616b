package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/redact"
)

// Stage is the indexer's name in logs, consumer names and the DLQ subject.
const Stage = "indexer"

// Config configures the indexer.
type Config struct {
	// AckWait is how long a chunk set may be in flight before another
	// replica gets it.
	AckWait time.Duration
	// MaxFileBytes is the largest file content accepted (default 4 MB): a
	// chunk set that declares more than such a file yields is
	// dead-lettered before it is decompressed.
	MaxFileBytes int64
	// MaxVectorWaits is how many times a vector set waits for the index
	// value of its file version before it is dead-lettered (default 120,
	// about an hour at the bus's longest wait).
	MaxVectorWaits int
}

// Deps are the indexer's collaborators.
type Deps struct {
	NC     *nats.Conn
	Logger *slog.Logger
	// Analyzer, when set, is shared with the process's other stages, so
	// that one cache of stemmed words serves them all (see app.NewNode).
	Analyzer *analysis.Analyzer
	// Redactor removes secrets from what is indexed: producers of
	// KH_TOOLS are not trusted to have redacted. Unset, the built-in
	// rules (redact.New(nil)) are used.
	Redactor Redactor
}

// Redactor replaces secrets in text; *redact.Redactor is one.
type Redactor interface {
	String(s string) string
}

// Worker consumes KH_CHUNKS, KH_TOOLS and KH_KNOWLEDGE and writes KH_INDEX
// (and KH_KB, the current knowledge records).
type Worker struct {
	cfg   Config
	bus   *bus.Bus
	files *broker.FilesBound
	kv    jetstream.KeyValue
	kb    jetstream.KeyValue
	// learned holds each file's learned words (KH_LEARNED_WORDS).
	learned jetstream.KeyValue
	// seen caches, by KH_INDEX key, the learned words last read for a
	// file (*seenRecord), so that indexing a chunk set reads the bucket
	// once.
	seen sync.Map
	an   *analysis.Analyzer
	red  Redactor
	// screen refuses tools whose served text reads as prompt injection.
	screen *kb.Screen
	log    *slog.Logger
}

// New returns an indexer consuming on deps.NC; Run drives it.
func New(cfg Config, deps Deps) (*Worker, error) {
	if deps.NC == nil {
		return nil, errors.New("indexer needs a NATS connection")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := bus.New(deps.NC, deps.Logger)
	if err != nil {
		return nil, err
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 4 << 20
	}
	if cfg.MaxVectorWaits <= 0 {
		cfg.MaxVectorWaits = 120
	}
	an := deps.Analyzer
	if an == nil {
		an = analysis.New()
	}
	red := deps.Redactor
	if red == nil {
		r, err := redact.New(nil)
		if err != nil {
			return nil, err
		}
		red = r
	}
	w := &Worker{cfg: cfg, bus: b, files: broker.NewFilesBound(b.JetStream()), an: an, red: red, screen: kb.NewScreen(), log: deps.Logger.With("component", Stage)}
	consumers := []struct {
		stage, stream, filter string
		// concurrency 1 keeps index writes in stream order, which is what
		// makes a search's min_seq mean "every earlier write is applied"
		// and lets a knowledge entry's events fold in order.
		concurrency int
		handle      bus.Handler
	}{
		{Stage, contract.StreamChunks, contract.SubjectChunks + ".>", 0, w.handle},
		{StageTools, contract.StreamTools, contract.SubjectToolsEvents + ".>", 1, w.handleTool},
		{StageKB, contract.StreamKnowledge, contract.SubjectKnowledge + ".>", 1, w.handleKB},
		{StageLearned, contract.StreamLearned, contract.SubjectLearned + ".>", 1, w.handleLearned},
		// Folding vectors is one read and one write: two at a time is
		// plenty, and keeps a node without an endpoint as light as before.
		{StageVectors, contract.StreamVectors, contract.SubjectVectors + ".>", 2, w.handleVectors},
	}
	for _, c := range consumers {
		err := b.Handle(bus.Consumer{
			Stage:       c.stage,
			Stream:      c.stream,
			Durable:     c.stage,
			Filter:      c.filter,
			AckWait:     cfg.AckWait,
			Concurrency: c.concurrency,
		}, c.handle)
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Run opens the buckets it writes and consumes until ctx is cancelled; it
// returns nil on a clean stop.
func (w *Worker) Run(ctx context.Context) error {
	js := w.bus.JetStream()
	var err error
	if w.kv, err = js.KeyValue(ctx, contract.BucketIndex); err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketIndex, err)
	}
	if w.kb, err = js.KeyValue(ctx, contract.BucketKB); err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketKB, err)
	}
	if w.learned, err = js.KeyValue(ctx, contract.BucketLearned); err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketLearned, err)
	}
	return w.bus.Run(ctx)
}

// StageTools names the indexer's tool-catalog consumer.
const StageTools = "indexer-tools"

func (w *Worker) handleTool(ctx context.Context, m *bus.Message) error {
	var ev contract.ToolEvent
	if err := bus.DecodeJSON(m, &ev, "tool event"); err != nil {
		return err
	}
	if ev.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("tool event schema %d is newer than %d", ev.Schema, contract.SchemaVersion))
	}
	// Errors name the tool redacted: they reach the log and the dead
	// letter's reason.
	if want := contract.ToolSubject(ev.Name); ev.Name == "" || want != m.Subject {
		return bus.Permanent(fmt.Errorf("tool event for %q arrived on %s, want %s", w.red.String(ev.Name), m.Subject, want))
	}
	val, err := toolDoc(&ev, m.Seq, w.an, w.red, w.screen)
	if err != nil {
		return bus.Permanent(err)
	}
	if _, err := Write(ctx, w.kv, contract.ToolIndexKey(ev.Name), m.Seq, val); err != nil {
		return fmt.Errorf("write tool %q: %w", ev.Name, err)
	}
	return nil
}

// toolDoc returns the encoded index document of a tool event at
// KH_TOOLS sequence seq, its text redacted and screened as the API does
// before publishing; an error means the event can never be indexed.
func toolDoc(ev *contract.ToolEvent, seq uint64, an *analysis.Analyzer, red Redactor, sc catalog.Screener) ([]byte, error) {
	if name := red.String(ev.Name); name != ev.Name {
		return nil, fmt.Errorf("tool event for %q: the name holds a secret", name)
	}
	var doc *contract.IndexDoc
	if ev.Deleted {
		doc = &contract.IndexDoc{Schema: contract.SchemaVersion, Analyzer: analysis.Version, Collection: contract.CollectionTools,
			Path: ev.Name, SourceSeq: seq, Deleted: true}
	} else {
		if ev.Tool == nil || ev.Tool.Name != ev.Name {
			return nil, fmt.Errorf("tool event for %q carries no matching descriptor", ev.Name)
		}
		tools := []contract.Tool{*ev.Tool}
		if err := catalog.Redact(tools, red); err != nil {
			return nil, err
		}
		if err := catalog.Validate(tools); err != nil {
			return nil, err
		}
		if err := catalog.Screen(tools, sc); err != nil {
			return nil, err
		}
		doc = catalog.BuildDoc(&tools[0], seq, an)
	}
	return contract.EncodeIndexDoc(doc)
}

func (w *Worker) handle(ctx context.Context, m *bus.Message) error {
	cs, err := contract.DecodeChunkSetLimit(m.Data, int(w.cfg.MaxFileBytes))
	if err != nil {
		return bus.Permanent(fmt.Errorf("chunk set on %s: %w", m.Subject, err))
	}
	if cs.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("chunk set schema %d is newer than %d", cs.Schema, contract.SchemaVersion))
	}
	if !contract.ValidPath(cs.Path) {
		return bus.Permanent(fmt.Errorf("chunk set has invalid path %q: not a clean relative path inside a repository", cs.Path))
	}
	if !contract.ValidRepoName(cs.Repo) || cs.Path == "" {
		return bus.Permanent(fmt.Errorf("chunk set has invalid repo %q or empty path", cs.Repo))
	}
	if want := contract.ChunkSubject(cs.Repo, cs.Path); want != m.Subject {
		return bus.Permanent(fmt.Errorf("chunk set for %s/%s arrived on %s, want %s", cs.Repo, cs.Path, m.Subject, want))
	}
	seen := make(map[string]struct{}, len(cs.Chunks))
	for i := range cs.Chunks {
		id := cs.Chunks[i].ID
		if _, dup := seen[id]; dup {
			return bus.Permanent(fmt.Errorf("chunk set for %s/%s repeats chunk id %q", cs.Repo, cs.Path, id))
		}
		seen[id] = struct{}{}
	}
	// The order of a file's versions rests on file_seq, which a
	// producer writes: one past KH_FILES's last sequence is forged (it
	// would win over every later edit).
	ok, last, err := w.files.Covers(ctx, cs.FileSeq)
	if err != nil {
		return err
	}
	if !ok {
		return bus.Permanent(fmt.Errorf("chunk set for %s/%s claims file_seq %d, past the last sequence %d of %s",
			cs.Repo, cs.Path, cs.FileSeq, last, contract.StreamFiles))
	}
	// An entry whose own sequence is past KH_FILES was forged before
	// this check existed: the real version replaces it.
	forged := func(cur uint64) bool {
		ok, _, err := w.files.Covers(ctx, cur)
		return err == nil && !ok
	}
	written, err := w.writeDoc(ctx, cs, forged)
	if err != nil {
		return err
	}
	w.log.Debug("indexed", "repo", cs.Repo, "path", cs.Path, "chunks", len(cs.Chunks), "seq", cs.FileSeq,
		"deleted", cs.Deleted, "written", written, "correlation", m.CorrelationID)
	return nil
}

// Write stores val under key unless the bucket already holds a value from a
// newer source sequence. Concurrent writers are serialised by the KV's
// compare-and-set, so an older sequence never overwrites a newer one.
// It reports whether val was written.
func Write(ctx context.Context, kv jetstream.KeyValue, key string, seq uint64, val []byte) (bool, error) {
	return WriteChecked(ctx, kv, key, seq, val, nil)
}

// WriteChecked is Write where a stored value whose sequence forged
// reports true (when forged is set) counts as older than any.
func WriteChecked(ctx context.Context, kv jetstream.KeyValue, key string, seq uint64, val []byte, forged func(uint64) bool) (bool, error) {
	return writeDoc(ctx, kv, key, seq, val, forged, nil)
}

// writeDoc is WriteChecked where, when the stored value is of the same
// sequence, same (when set) gives the value to write from the stored one.
func writeDoc(ctx context.Context, kv jetstream.KeyValue, key string, seq uint64, val []byte, forged func(uint64) bool, same func(cur []byte) []byte) (bool, error) {
	// Most writes during a cold index are new keys: try Create first, a
	// single round trip, and fall back to read-compare-update.
	_, err := kv.Create(ctx, key, val)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, err
	}
	for attempt := 0; attempt < 16; attempt++ {
		cur, err := kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err := kv.Create(ctx, key, val); err != nil {
				if errors.Is(err, jetstream.ErrKeyExists) {
					continue
				}
				return false, err
			}
			return true, nil
		case err != nil:
			return false, err
		}
		curSeq, err := contract.IndexDocSeq(cur.Value())
		if err == nil && curSeq > seq && (forged == nil || !forged(curSeq)) {
			return false, nil
		}
		put := val
		if err == nil && curSeq == seq && same != nil {
			put = same(cur.Value())
		}
		if _, err := kv.Update(ctx, key, put, cur.Revision()); err != nil {
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				continue
			}
			return false, err
		}
		return true, nil
	}
	return false, errors.New("too many concurrent writers")
}
