// Package embedder is the stage that asks an OpenAI-compatible embeddings
// endpoint for the vector of every section: it consumes KH_CHUNKS on a
// durable consumer of its own and publishes one vector set per chunk set
// to KH_VECTORS, which the indexer folds into the file's KH_INDEX value.
// Copies share the consumer, so they split the work.
//
// An endpoint that is down, overloaded or refuses the key leaves the chunk
// set waiting for redelivery (bus.Later): nothing is lost, and the stage
// catches up once the endpoint answers. An input the endpoint refuses (a
// 4xx), a chunk set that does not decode and a vector set too large to
// publish go to KH_DLQ with the reason.
package embedder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/embedding"
)

// Stage is the embedder's name in logs, its consumer's name and its DLQ
// subject.
const Stage = "embedder"

// Config configures the stage.
type Config struct {
	// AckWait is how long a chunk set may be in flight without a sign of
	// progress before another copy gets it.
	AckWait time.Duration
	// Concurrency is the number of chunk sets embedded at once (default 2):
	// the endpoint, not this process, is the bottleneck.
	Concurrency int
	// MaxFileBytes bounds the content a chunk set may declare (default 4 MB).
	MaxFileBytes int64
	// NakDelay and MaxNakDelay space the attempts while the endpoint is
	// down (defaults 1s, doubling up to 30s).
	NakDelay, MaxNakDelay time.Duration
}

// Deps are the stage's collaborators.
type Deps struct {
	NC     *nats.Conn
	Logger *slog.Logger
	// Client calls the endpoint.
	Client *embedding.Client
}

// Worker is the embedder stage.
type Worker struct {
	cfg    Config
	bus    *bus.Bus
	client *embedding.Client
	log    *slog.Logger
}

// New returns the stage; Run drives it.
func New(cfg Config, deps Deps) (*Worker, error) {
	if deps.NC == nil || deps.Client == nil {
		return nil, errors.New("embedder needs a NATS connection and an embeddings client")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 4 << 20
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	b, err := bus.New(deps.NC, deps.Logger)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, bus: b, client: deps.Client, log: deps.Logger.With("component", Stage)}
	err = b.Handle(bus.Consumer{
		Stage:       Stage,
		Stream:      contract.StreamChunks,
		Durable:     Stage,
		Filter:      contract.SubjectChunks + ".>",
		AckWait:     cfg.AckWait,
		Concurrency: cfg.Concurrency,
		NakDelay:    cfg.NakDelay,
		MaxNakDelay: cfg.MaxNakDelay,
	}, w.handle)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Run consumes until ctx is cancelled; it returns nil on a clean stop.
func (w *Worker) Run(ctx context.Context) error { return w.bus.Run(ctx) }

// Input returns the text embedded for a chunk: its title and heading path,
// then its text, all already redacted by the chunker.
func Input(c *contract.Chunk) string {
	var b strings.Builder
	b.WriteString(c.Title)
	for _, h := range c.HeadingPath {
		if h != c.Title {
			b.WriteString(" > ")
			b.WriteString(h)
		}
	}
	b.WriteString("\n")
	b.WriteString(c.Text)
	return b.String()
}

func (w *Worker) handle(ctx context.Context, m *bus.Message) error {
	cs, err := contract.DecodeChunkSetLimit(m.Data, int(w.cfg.MaxFileBytes))
	if err != nil {
		return bus.Permanent(fmt.Errorf("chunk set on %s: %w", m.Subject, err))
	}
	if cs.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("chunk set schema %d is newer than %d", cs.Schema, contract.SchemaVersion))
	}
	if !contract.ValidRepoName(cs.Repo) || cs.Path == "" || !contract.ValidPath(cs.Path) {
		return bus.Permanent(fmt.Errorf("chunk set has invalid repo %q or path %q", cs.Repo, cs.Path))
	}
	if want := contract.ChunkSubject(cs.Repo, cs.Path); want != m.Subject {
		return bus.Permanent(fmt.Errorf("chunk set for %s/%s arrived on %s, want %s", cs.Repo, cs.Path, m.Subject, want))
	}
	if cs.Deleted || len(cs.Chunks) == 0 {
		return nil // the index drops the file; there is nothing to embed
	}
	inputs := make([]string, len(cs.Chunks))
	for i := range cs.Chunks {
		inputs[i] = Input(&cs.Chunks[i])
	}
	vecs, err := w.client.Embed(ctx, inputs)
	switch {
	case embedding.Rejected(err):
		return bus.Permanent(fmt.Errorf("embed %s/%s: %w", cs.Repo, cs.Path, err))
	case err != nil && ctx.Err() == nil:
		return bus.Later(fmt.Errorf("embed %s/%s: %w", cs.Repo, cs.Path, err))
	case err != nil:
		return err
	}
	vs := contract.VectorSet{Schema: contract.SchemaVersion, Repo: cs.Repo, Path: cs.Path, FileSeq: cs.FileSeq, Model: w.client.Model()}
	for i, v := range vecs {
		if e := embedding.Encode(v); e != nil {
			vs.Vectors = append(vs.Vectors, contract.SectionVector{ChunkID: cs.Chunks[i].ID, Vec: e})
		}
	}
	data, err := contract.EncodeVectorSet(&vs)
	if err != nil {
		return bus.Permanent(err)
	}
	if max := w.bus.JetStream().Conn().MaxPayload(); max > 0 && int64(len(data))+1024 > max {
		return bus.Permanent(fmt.Errorf("vector set of %s/%s is %d bytes, over the server's max_payload of %d", cs.Repo, cs.Path, len(data), max))
	}
	msg := &nats.Msg{Subject: contract.VectorSubject(cs.Repo, cs.Path), Data: data, Header: nats.Header{
		contract.HeaderCorrelation: {m.CorrelationID},
		contract.HeaderSourceSeq:   {strconv.FormatUint(cs.FileSeq, 10)},
		contract.HeaderSchema:      {strconv.Itoa(contract.SchemaVersion)},
		nats.MsgIdHdr:              {m.Subject + ":" + strconv.FormatUint(m.Seq, 10)},
	}}
	if err := w.publish(ctx, msg, cs.FileSeq); err != nil {
		return fmt.Errorf("publish vectors of %s/%s: %w", cs.Repo, cs.Path, err)
	}
	w.log.Debug("embedded", "repo", cs.Repo, "path", cs.Path, "chunks", len(cs.Chunks), "seq", cs.FileSeq, "correlation", m.CorrelationID)
	return nil
}

// publish stores msg, the vector set of file_seq seq, unless KH_VECTORS
// already holds one of a newer version of the file: copies embedding two
// versions at once must not leave the older one as the file's last.
func (w *Worker) publish(ctx context.Context, msg *nats.Msg, seq uint64) error {
	js := w.bus.JetStream()
	stream, err := js.Stream(ctx, contract.StreamVectors)
	if err != nil {
		return err
	}
	for range 8 {
		lastSeq := uint64(0)
		last, err := stream.GetLastMsgForSubject(ctx, msg.Subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return err
		default:
			lastSeq = last.Sequence
			if src, err := strconv.ParseUint(last.Header.Get(contract.HeaderSourceSeq), 10, 64); err == nil && src > seq {
				return nil
			}
		}
		msg.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(lastSeq, 10))
		_, err = js.PublishMsg(ctx, msg)
		if bus.IsWrongLastSequence(err) {
			continue // another vector set of the file came first: look again
		}
		return err
	}
	return errors.New("the vector sets of the file kept changing")
}
