package api

import (
	"context"
	"errors"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// pipelineStage is one durable consumer of the pipeline and the stream it reads.
type pipelineStage struct{ stage, stream string }

// pipelineStages are the pipeline's consumers, in the order a file or an
// entry goes through them.
var pipelineStages = []pipelineStage{
	{"chunker", contract.StreamFiles},
	{"indexer", contract.StreamChunks},
	{"indexer-tools", contract.StreamTools},
	{"indexer-kb", contract.StreamKnowledge},
	{"extractor-intake", contract.StreamTranscriptsIn},
	{"extractor", contract.StreamTranscripts},
}

// StageStatus is how far one stage has come through its stream.
type StageStatus struct {
	Stage  string `json:"stage"`
	Stream string `json:"stream"`
	// StreamLastSeq is the last sequence of the stream the stage reads.
	StreamLastSeq uint64 `json:"stream_last_seq"`
	// AckFloor is the stream sequence below which every message is done.
	AckFloor uint64 `json:"ack_floor"`
	// Pending counts messages not yet delivered; AckPending those
	// delivered and not yet acknowledged.
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
	DeadLetters uint64 `json:"dead_letters"`
	// Running is false while the stage's consumer does not exist (its
	// worker never started); Pending then counts the whole stream.
	Running bool `json:"running"`
}

// PipelineStatus is the pipeline's position and its dead letters.
type PipelineStatus struct {
	Stages []StageStatus `json:"stages"`
	// DeadLetters counts every message of the dead-letter stream.
	DeadLetters uint64 `json:"dead_letters"`
	// IndexRevision is the last revision of the index bucket.
	IndexRevision uint64 `json:"index_revision"`
}

// StatusResponse is the reply of GET /api/status: the replica's
// statistics and the pipeline's position.
type StatusResponse struct {
	*contract.StatsResponse
	Pipeline *PipelineStatus `json:"pipeline,omitempty"`
	// PipelineError says why the pipeline could not be read.
	PipelineError string `json:"pipeline_error,omitempty"`
}

// ReadPipeline reads stream and consumer state from JetStream. A stream
// that does not exist yet reads as empty.
func ReadPipeline(ctx context.Context, js jetstream.JetStream) (*PipelineStatus, error) {
	p := &PipelineStatus{}
	dead := map[string]uint64{}
	if s, err := js.Stream(ctx, contract.StreamDLQ); err == nil {
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(contract.SubjectDLQ+".>"))
		if err != nil {
			return nil, err
		}
		p.DeadLetters = info.State.Msgs
		for subj, n := range info.State.Subjects {
			dead[strings.TrimPrefix(subj, contract.SubjectDLQ+".")] += n
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, err
	}
	if s, err := js.Stream(ctx, contract.BucketStream(contract.BucketIndex)); err == nil {
		info, err := s.Info(ctx)
		if err != nil {
			return nil, err
		}
		p.IndexRevision = info.State.LastSeq
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, err
	}
	for _, ps := range pipelineStages {
		st := StageStatus{Stage: ps.stage, Stream: ps.stream, DeadLetters: dead[ps.stage]}
		s, err := js.Stream(ctx, ps.stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			p.Stages = append(p.Stages, st)
			continue
		}
		if err != nil {
			return nil, err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return nil, err
		}
		st.StreamLastSeq = info.State.LastSeq
		c, err := s.Consumer(ctx, ps.stage)
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
			st.Pending = info.State.Msgs
		case err != nil:
			return nil, err
		default:
			ci, err := c.Info(ctx)
			if err != nil {
				return nil, err
			}
			st.Running = true
			st.AckFloor = ci.AckFloor.Stream
			st.Pending = ci.NumPending
			st.AckPending = ci.NumAckPending
			st.Redelivered = ci.NumRedelivered
		}
		p.Stages = append(p.Stages, st)
	}
	return p, nil
}
