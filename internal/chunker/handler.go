package chunker

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/broker"
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
	// AckWait is how long a file event may be in flight without a sign of
	// progress before another replica gets it (default: the bus's).
	AckWait time.Duration `json:"-"`
	// MaxFileBytes is the largest file content accepted, the watcher's
	// limit (default 4 MB): a larger event, or a compressed one that
	// declares more, is dead-lettered before it is decompressed.
	MaxFileBytes int64 `json:"-"`
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

// DefaultMaxFileBytes is the default of Config.MaxFileBytes.
const DefaultMaxFileBytes = 4 << 20

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

	// files bounds the source sequences a chunk set can truly carry;
	// chunks is KH_CHUNKS's handle, looked up on first use.
	files    *broker.FilesBound
	chunksMu sync.Mutex
	chunks   jetstream.Stream
	// known holds hashes of the KH_CHUNKS subjects found to hold a chunk
	// set, 8 bytes a file: a file not among them is published without a
	// lookup first. A collision only sends a new file to the lookup.
	knownMu   sync.Mutex
	known     map[uint64]struct{}
	knownSeed maphash.Seed
}

// New returns a chunker consuming KH_FILES on deps.NC; Run drives it.
func New(cfg Config, deps Deps) (*Worker, error) {
	if deps.Redactor == nil || deps.NC == nil {
		return nil, fmt.Errorf("chunker needs a NATS connection and a redactor")
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := bus.New(deps.NC, deps.Logger)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, bus: b, js: b.JetStream(), files: broker.NewFilesBound(b.JetStream()), known: map[uint64]struct{}{}, knownSeed: maphash.MakeSeed(), red: deps.Redactor, log: deps.Logger.With("component", Stage)}
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
	if ev.Deleted {
		return chunkRedacted(ev, seq, "", opts)
	}
	return chunkRedacted(ev, seq, red.String(ev.Content), opts)
}

// chunkRedacted is chunkValid of an event whose content, redacted, is text.
func chunkRedacted(ev *contract.FileEvent, seq uint64, text string, opts Options) (*contract.ChunkSet, error) {
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
	chunks, err := split(ev.Path, unsafe.Slice(unsafe.StringData(text), len(text)), opts)
	if err != nil {
		return nil, err
	}
	cs.Chunks = chunks
	return cs, nil
}

func (w *Worker) handle(ctx context.Context, m *bus.Message) error {
	// An event that does not decode, or names a path, repository or
	// subject it may not, is no file version at all: it is dead-lettered
	// and removed from KH_FILES, which would otherwise keep whatever raw
	// content it carries and replay it on a reindex. A newer schema is
	// kept for a newer chunker.
	ev, err := contract.DecodeFileEventLimit(m.Data, int(w.cfg.MaxFileBytes))
	if err != nil {
		return bus.Malformed(fmt.Errorf("file event on %s: %w", m.Subject, err))
	}
	if ev.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("file event schema %d is newer than %d", ev.Schema, contract.SchemaVersion))
	}
	if !contract.ValidPath(ev.Path) {
		return bus.Malformed(fmt.Errorf("file event has invalid path %q: not a clean relative path inside a repository", ev.Path))
	}
	if !contract.ValidRepoName(ev.Repo) || ev.Path == "" {
		return bus.Malformed(fmt.Errorf("file event has invalid repo %q or empty path", ev.Repo))
	}
	if want := contract.FileSubject(ev.Repo, ev.Path); want != m.Subject {
		return bus.Malformed(fmt.Errorf("file event for %s/%s arrived on %s, want %s", ev.Repo, ev.Path, m.Subject, want))
	}
	var text string
	if !ev.Deleted {
		// The watcher publishes redacted content; another producer may
		// not. Its event is replaced in KH_FILES by the redacted one,
		// which is chunked in turn, so that no raw secret stays in the
		// stream or is republished by a reindex.
		if text = w.red.String(ev.Content); text != ev.Content {
			return w.rewrite(ctx, m, ev, text)
		}
	}
	cs, err := chunkRedacted(ev, m.Seq, text, Options{MaxTokens: w.cfg.ChunkMaxTokens})
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
	// A message the server refuses for its size fails the same way on
	// every attempt: reject it once, with the reason.
	if max := w.js.Conn().MaxPayload(); max > 0 && int64(len(msg.Data))+headerBytes(msg.Header) > max {
		return bus.Permanent(fmt.Errorf("chunk set of %s/%s is %d bytes, over the server's max payload of %d", ev.Repo, ev.Path, len(msg.Data), max))
	}
	published, err := w.publishNewest(ctx, msg, m.Seq)
	if err != nil {
		return fmt.Errorf("publish chunk set %s: %w", msg.Subject, err)
	}
	if !published {
		w.log.Debug("a newer version is chunked already", "repo", ev.Repo, "path", ev.Path, "seq", m.Seq, "correlation", m.CorrelationID)
		return nil
	}
	w.log.Debug("chunked", "repo", ev.Repo, "path", ev.Path, "chunks", len(cs.Chunks), "seq", m.Seq, "correlation", m.CorrelationID)
	return nil
}

// publishNewest publishes msg, the chunk set of the file version at
// KH_FILES sequence seq, unless KH_CHUNKS holds the chunk set of a version
// as new or newer. KH_CHUNKS keeps one message per file, so a chunk set
// published after a newer one would replace it before the indexer has
// read it, and the newer version (a deletion, say) would be lost: two
// chunkers, or a redelivery, race like that. The publish is a
// compare-and-set on the file's last message; it reports whether msg was
// published.
//
// A file this worker has not seen in KH_CHUNKS is published first as
// its first chunk set, expecting no message on its subject: one round
// trip instead of two for every file of a cold index. When the stream
// holds one after all, the server refuses the publish and the file is
// looked up as any other.
func (w *Worker) publishNewest(ctx context.Context, msg *nats.Msg, seq uint64) (bool, error) {
	if !w.seen(msg.Subject) {
		msg.Header.Set(nats.ExpectedLastSubjSeqHdr, "0")
		_, err := w.js.PublishMsg(ctx, msg)
		switch {
		case err == nil:
			w.see(msg.Subject)
			return true, nil
		case !bus.IsWrongLastSequence(err):
			return false, err
		}
		w.see(msg.Subject)
	}
	for range 16 {
		var lastSeq uint64
		chunks, err := w.chunkStream(ctx)
		if err != nil {
			return false, err
		}
		last, err := chunks.GetLastMsgForSubject(ctx, msg.Subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return false, err
		default:
			lastSeq = last.Sequence
			src, perr := strconv.ParseUint(last.Header.Get(contract.HeaderSourceSeq), 10, 64)
			if perr == nil && src >= seq {
				// A source sequence past KH_FILES's last is forged: it
				// must not stop the real versions.
				if ok, _, err := w.files.Covers(ctx, src); err != nil || ok {
					return false, err
				}
			}
		}
		msg.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(lastSeq, 10))
		_, err = w.js.PublishMsg(ctx, msg)
		if bus.IsWrongLastSequence(err) {
			continue // another chunk set of the file came first: look again
		}
		if err == nil {
			w.see(msg.Subject)
		}
		return err == nil, err
	}
	return false, fmt.Errorf("the chunk sets of %s kept changing", msg.Subject)
}

// seen reports whether KH_CHUNKS was found to hold a chunk set on
// subject, by this worker's publishes and lookups.
func (w *Worker) seen(subject string) bool {
	w.knownMu.Lock()
	defer w.knownMu.Unlock()
	_, ok := w.known[maphash.String(w.knownSeed, subject)]
	return ok
}

// see remembers that KH_CHUNKS holds a chunk set on subject.
func (w *Worker) see(subject string) {
	w.knownMu.Lock()
	defer w.knownMu.Unlock()
	w.known[maphash.String(w.knownSeed, subject)] = struct{}{}
}

// chunkStream returns KH_CHUNKS's handle.
func (w *Worker) chunkStream(ctx context.Context) (jetstream.Stream, error) {
	w.chunksMu.Lock()
	defer w.chunksMu.Unlock()
	if w.chunks == nil {
		s, err := w.js.Stream(ctx, contract.StreamChunks)
		if err != nil {
			return nil, err
		}
		w.chunks = s
	}
	return w.chunks, nil
}

// rewrite replaces the file event m, whose content held secrets, with ev
// carrying the redacted text, unless a newer event of the file has
// arrived meanwhile. Redaction is idempotent, so the rewritten event is
// chunked as it stands.
func (w *Worker) rewrite(ctx context.Context, m *bus.Message, ev *contract.FileEvent, text string) error {
	red := *ev
	red.Content = text
	msg := &nats.Msg{Subject: m.Subject, Header: nats.Header{}, Data: contract.EncodeFileEvent(&red)}
	for k, v := range m.Header {
		if strings.HasPrefix(k, "Kh-") {
			msg.Header[k] = v
		}
	}
	msg.Header.Set(contract.HeaderOp, contract.OpPut)
	msg.Header.Set(contract.HeaderCorrelation, m.CorrelationID)
	msg.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(m.Seq, 10))
	_, err := w.js.PublishMsg(ctx, msg)
	switch {
	case bus.IsWrongLastSequence(err):
		return nil // a newer version of the file replaces this one anyway
	case err != nil:
		return fmt.Errorf("rewrite redacted file event %s: %w", m.Subject, err)
	}
	w.log.Warn("file event held secrets; replaced it with its redacted content", "repo", ev.Repo, "path", ev.Path, "seq", m.Seq)
	return nil
}

// headerBytes is the size of h on the wire.
func headerBytes(h nats.Header) int64 {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return int64(n)
}

func op(deleted bool) string {
	if deleted {
		return contract.OpDelete
	}
	return contract.OpPut
}
