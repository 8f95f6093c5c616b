package chunker

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
)

// Stage is the chunker's name in logs, consumer names and the DLQ subject.
const Stage = "chunker"

// Config configures the chunker worker; the configuration file's
// "chunker" object is this struct.
type Config struct {
	// ChunkMaxTokens bounds a chunk's size; a longer section is split.
	ChunkMaxTokens int `json:"chunkMaxTokens"`
	// AckWait is how long a file event may be in flight before another
	// replica gets it (default 15 s).
	AckWait time.Duration `json:"-"`
}

// Bounds of Config.ChunkMaxTokens.
const (
	MinChunkMaxTokens = 50
	MaxChunkMaxTokens = 8000
)

// Validate reports every problem of c, each as "key: problem".
func (c Config) Validate() error {
	if n := c.ChunkMaxTokens; n < MinChunkMaxTokens || n > MaxChunkMaxTokens {
		return fmt.Errorf("chunkMaxTokens: must be between %d and %d, not %d", MinChunkMaxTokens, MaxChunkMaxTokens, n)
	}
	return nil
}

// Redactor removes secrets from text. Producers of KH_FILES are not
// trusted, so the chunker redacts again before anything is published.
type Redactor interface {
	String(s string) string
}

// Deps are the worker's collaborators.
type Deps struct {
	NC       *nats.Conn
	Redactor Redactor
	Logger   *slog.Logger
}

// Worker consumes KH_FILES and publishes one chunk set per file version to
// KH_CHUNKS.
type Worker struct {
	cfg Config
	bus *bus.Bus
	js  jetstream.JetStream
	red Redactor
	log *slog.Logger
}

// New returns a chunker consuming KH_FILES on deps.NC; Run drives it.
func New(cfg Config, deps Deps) (*Worker, error) {
	if deps.Redactor == nil || deps.NC == nil {
		return nil, fmt.Errorf("chunker needs a NATS connection and a redactor")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := bus.New(deps.NC, deps.Logger)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, bus: b, js: b.JetStream(), red: deps.Redactor, log: deps.Logger.With("component", Stage)}
	err = b.Handle(bus.Consumer{
		Stage:   Stage,
		Stream:  contract.StreamFiles,
		Durable: Stage,
		Filter:  contract.SubjectFiles + ".>",
		AckWait: cfg.AckWait,
	}, w.handle)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Run consumes until ctx is cancelled and returns nil on a clean stop.
func (w *Worker) Run(ctx context.Context) error { return w.bus.Run(ctx) }

// ChunkFile turns one file event into its chunk set: the pure part of the
// handler. Content that is not valid UTF-8 is an error.
func ChunkFile(ev *contract.FileEvent, seq uint64, red Redactor, opts Options) (*contract.ChunkSet, error) {
	if !ev.Deleted && !utf8.ValidString(ev.Content) {
		return nil, fmt.Errorf("chunk %s/%s: content is not valid UTF-8", ev.Repo, ev.Path)
	}
	return chunkValid(ev, seq, red, opts)
}

// chunkValid is ChunkFile of an event whose content is known to be valid
// UTF-8, as contract.DecodeFileEvent guarantees: the handler does not
// check the content a second time.
func chunkValid(ev *contract.FileEvent, seq uint64, red Redactor, opts Options) (*contract.ChunkSet, error) {
	cs := &contract.ChunkSet{
		Schema:  contract.SchemaVersion,
		Repo:    ev.Repo,
		Path:    ev.Path,
		SHA256:  ev.SHA256,
		FileSeq: seq,
		Meta:    ev.Meta,
		Deleted: ev.Deleted,
	}
	if ev.Deleted {
		return cs, nil
	}
	// Redaction keeps valid text valid (redact.FuzzRedact checks it), so
	// the content is not validated twice. split only reads its input, as
	// goldmark does (FuzzSplit and TestSplitCorpus check it): the text is
	// parsed where it is, not copied.
	text := red.String(ev.Content)
	chunks, err := split(ev.Path, unsafe.Slice(unsafe.StringData(text), len(text)), opts)
	if err != nil {
		return nil, err
	}
	cs.Chunks = chunks
	return cs, nil
}

func (w *Worker) handle(ctx context.Context, m *bus.Message) error {
	ev, err := contract.DecodeFileEvent(m.Data)
	if err != nil {
		return bus.Permanent(fmt.Errorf("file event on %s: %w", m.Subject, err))
	}
	if ev.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("file event schema %d is newer than %d", ev.Schema, contract.SchemaVersion))
	}
	if !contract.ValidRepoName(ev.Repo) || ev.Path == "" {
		return bus.Permanent(fmt.Errorf("file event has invalid repo %q or empty path", ev.Repo))
	}
	if want := contract.FileSubject(ev.Repo, ev.Path); want != m.Subject {
		return bus.Permanent(fmt.Errorf("file event for %s/%s arrived on %s, want %s", ev.Repo, ev.Path, m.Subject, want))
	}
	cs, err := chunkValid(ev, m.Seq, w.red, Options{MaxTokens: w.cfg.ChunkMaxTokens})
	if err != nil {
		return bus.Permanent(err)
	}
	msg := &nats.Msg{
		Subject: contract.ChunkSubject(ev.Repo, ev.Path),
		Data:    contract.EncodeChunkSet(cs),
		Header: nats.Header{
			contract.HeaderCorrelation: {m.CorrelationID},
			contract.HeaderSourceSeq:   {strconv.FormatUint(m.Seq, 10)},
			contract.HeaderSchema:      {strconv.Itoa(contract.SchemaVersion)},
			contract.HeaderOp:          {op(ev.Deleted)},
			// A redelivered file event yields the same message id, so
			// JetStream drops the duplicate within its window.
			nats.MsgIdHdr: {m.Subject + ":" + strconv.FormatUint(m.Seq, 10)},
		},
	}
	if _, err := w.js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("publish chunk set %s: %w", msg.Subject, err)
	}
	w.log.Debug("chunked", "repo", ev.Repo, "path", ev.Path, "chunks", len(cs.Chunks), "seq", m.Seq, "correlation", m.CorrelationID)
	return nil
}

func op(deleted bool) string {
	if deleted {
		return contract.OpDelete
	}
	return contract.OpPut
}
