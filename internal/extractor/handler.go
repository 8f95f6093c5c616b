package extractor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/transcript"
)

// Stage names of the extractor's two consumers.
const (
	StageIntake  = "extractor-intake"
	StageExtract = "extractor"
)

// Deps are the worker's collaborators.
type Deps struct {
	NC       *nats.Conn
	Pipeline *Pipeline
	Logger   *slog.Logger
}

// Worker sanitizes raw transcripts into KH_TRANSCRIPTS and extracts
// knowledge from them, saving each entry through kh.kb.save: the same
// validation, redaction, duplicate checks and screening as any save.
type Worker struct {
	bus *bus.Bus
	nc  *nats.Conn
	js  jetstream.JetStream
	p   *Pipeline
	log *slog.Logger
}

// New returns an extractor consuming on deps.NC; Run drives it.
func New(deps Deps) (*Worker, error) {
	if deps.NC == nil || deps.Pipeline == nil {
		return nil, errors.New("extractor needs a NATS connection and a transcript pipeline")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := bus.New(deps.NC, deps.Logger)
	if err != nil {
		return nil, err
	}
	w := &Worker{bus: b, nc: deps.NC, js: b.JetStream(), p: deps.Pipeline, log: deps.Logger.With("component", StageExtract)}
	err = b.Handle(bus.Consumer{
		Stage:     StageIntake,
		Stream:    contract.StreamTranscriptsIn,
		Durable:   StageIntake,
		Filter:    contract.SubjectTranscriptsIn + ".*",
		Sensitive: true, // raw transcripts never reach the dead-letter stream
	}, w.intake)
	if err != nil {
		return nil, err
	}
	err = b.Handle(bus.Consumer{
		Stage:       StageExtract,
		Stream:      contract.StreamTranscripts,
		Durable:     StageExtract,
		Filter:      contract.SubjectTranscriptsStored + ".>",
		AckWait:     2 * time.Minute, // a model may take a while
		Concurrency: 2,
	}, w.extract)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Run consumes until ctx is cancelled and returns nil on a clean stop.
func (w *Worker) Run(ctx context.Context) error { return w.bus.Run(ctx) }

func (w *Worker) intake(ctx context.Context, m *bus.Message) error {
	_, err := transcript.Store(ctx, w.js, w.p.Intake(), m.Data, nil)
	if errors.Is(err, transcript.ErrInvalid) {
		return bus.Permanent(err)
	}
	return err
}

func (w *Worker) extract(ctx context.Context, m *bus.Message) error {
	st, t, err := transcript.DecodeStored(m.Data)
	if err != nil {
		return bus.Permanent(err)
	}
	// The intake stored it sanitized; a producer that wrote into
	// KH_TRANSCRIPTS directly may not have, so neither a model nor the
	// saved entries see what sanitizing removes.
	t = w.p.Intake().Sanitize(t)
	res, err := w.p.Extract(ctx, t, st.ID)
	if err != nil {
		return err // a model that cannot be reached: retry, then dead-letter
	}
	done := contract.Extraction{Schema: contract.SchemaVersion, TranscriptID: st.ID, IDs: []string{}}
	for _, r := range res.Requests {
		resp, err := SaveEntry(w.nc, ScopeRequest(r, t))
		if bus.IsPermanent(err) {
			w.log.Warn("extracted entry rejected", "transcript", st.ID, "err", err)
			done.Rejected++
			continue
		}
		if err != nil {
			return err // saved entries come back as exact duplicates on retry
		}
		done.IDs = append(done.IDs, resp.ID)
		done.Seq = max(done.Seq, resp.Seq)
		w.log.Info("extracted", "transcript", st.ID, "entry", resp.ID, "state", resp.State, "duplicate", resp.Duplicate)
	}
	for _, d := range res.Dropped {
		w.log.Debug("candidate dropped", "transcript", st.ID, "reason", d)
	}
	if err := PublishLearned(ctx, w.js, w.p.Learn(t, st.ID)); err != nil {
		return err
	}
	return w.recordDone(ctx, &done)
}

// recordDone puts what a transcript yielded in KH_EXTRACTIONS, where
// POST /api/extract?wait= finds it.
func (w *Worker) recordDone(ctx context.Context, done *contract.Extraction) error {
	kv, err := w.js.KeyValue(ctx, contract.BucketExtractions)
	if err != nil {
		return fmt.Errorf("open bucket %s: %w", contract.BucketExtractions, err)
	}
	data, err := json.Marshal(done)
	if err != nil {
		return fmt.Errorf("encode extraction of %s: %w", done.TranscriptID, err)
	}
	if _, err := kv.Put(ctx, done.TranscriptID, data); err != nil {
		return fmt.Errorf("record extraction of %s: %w", done.TranscriptID, err)
	}
	return nil
}

// PublishLearned publishes learned-vocabulary events to KH_LEARNED, each
// with a message id of its transcript, file and section, so that a
// transcript extracted again within the stream's duplicate window teaches
// nothing twice (and folding a repeat changes nothing after it).
func PublishLearned(ctx context.Context, js jetstream.JetStream, evs []contract.LearnedEvent) error {
	for i := range evs {
		ev := &evs[i]
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		subject := contract.LearnedSubject(ev.Repo, ev.Path)
		id := "learned:" + ev.Op + ":" + ev.TranscriptID + ":" + subject + ":" + contract.FileKey(strings.Join(ev.HeadingPath, "\n"))
		msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
		msg.Header.Set(contract.HeaderSchema, strconv.Itoa(contract.SchemaVersion))
		if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
			return fmt.Errorf("publish learned words for %s: %w", subject, err)
		}
	}
	return nil
}

var scopeValue = regexp.MustCompile(`[^A-Za-z0-9_.@/-]+`)

// ScopeRequest gives an extracted entry its audience: the scopes the API
// edge gave the transcript (its sender's), else the agent whose transcript
// it came from (scope agent:<id>), or everyone when the transcript names
// no agent.
func ScopeRequest(r kb.SaveRequest, t *transcript.Transcript) kb.SaveRequest {
	if len(t.Scopes) > 0 {
		r.Scopes = slices.Clone(t.Scopes)
	} else if v := scopeValue.ReplaceAllString(t.AgentID, "-"); v != "" && v != "-" {
		r.Scopes = []string{"agent:" + v}
	}
	r.Owner = "extractor"
	return r
}

// SaveEntry sends one save request to kh.kb.save.
func SaveEntry(nc *nats.Conn, r kb.SaveRequest) (*kb.SaveResponse, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	msg, err := nc.Request(contract.SubjectKBSave, data, 15*time.Second)
	if err != nil {
		return nil, fmt.Errorf("save extracted entry: %w", err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		if msg.Header.Get(micro.ErrorCodeHeader) == "400" {
			return nil, bus.Permanent(fmt.Errorf("save extracted entry: %s", e))
		}
		return nil, fmt.Errorf("save extracted entry: %s", e)
	}
	var resp kb.SaveResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
