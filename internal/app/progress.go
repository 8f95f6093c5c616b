package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// Progress is the pipeline's position: how far each stage has come.
type Progress struct {
	FilesLastSeq   uint64 `json:"files_last_seq"`
	ChunkerPending uint64 `json:"chunker_pending"`
	IndexerPending uint64 `json:"indexer_pending"`
	ToolsPending   uint64 `json:"tools_pending"`
	KBPending      uint64 `json:"kb_pending"`
	IndexLastRev   uint64 `json:"index_last_revision"`
	DeadLetters    uint64 `json:"dead_letters"`
}

// ReadProgress reads stream and consumer state. A consumer that does not
// exist yet counts every message of its stream as pending.
func ReadProgress(ctx context.Context, js jetstream.JetStream) (Progress, error) {
	var p Progress
	files, err := streamLast(ctx, js, contract.StreamFiles)
	if err != nil {
		return p, err
	}
	p.FilesLastSeq = files.LastSeq
	chunks, err := streamLast(ctx, js, contract.StreamChunks)
	if err != nil {
		return p, err
	}
	if p.ChunkerPending, err = pending(ctx, js, contract.StreamFiles, chunker.Stage, files.Msgs); err != nil {
		return p, err
	}
	if p.IndexerPending, err = pending(ctx, js, contract.StreamChunks, indexer.Stage, chunks.Msgs); err != nil {
		return p, err
	}
	tools, err := streamLast(ctx, js, contract.StreamTools)
	if err != nil {
		return p, err
	}
	if p.ToolsPending, err = pending(ctx, js, contract.StreamTools, indexer.StageTools, tools.Msgs); err != nil {
		return p, err
	}
	know, err := streamLast(ctx, js, contract.StreamKnowledge)
	if err != nil {
		return p, err
	}
	if p.KBPending, err = pending(ctx, js, contract.StreamKnowledge, indexer.StageKB, know.Msgs); err != nil {
		return p, err
	}
	idx, err := streamLast(ctx, js, contract.BucketStream(contract.BucketIndex))
	if err != nil {
		return p, err
	}
	p.IndexLastRev = idx.LastSeq
	dlq, err := streamLast(ctx, js, contract.StreamDLQ)
	if err != nil {
		return p, err
	}
	p.DeadLetters = dlq.Msgs
	return p, nil
}

// CaughtUp reports whether every file has gone through the pipeline and a
// replica at revision applied has loaded the result.
func (p Progress) CaughtUp(applied uint64) bool {
	return p.ChunkerPending == 0 && p.IndexerPending == 0 && p.ToolsPending == 0 && p.KBPending == 0 && applied >= p.IndexLastRev
}

// streamLast reads a stream's state. Looking a stream up reads its info:
// that one request is the state, with no second Info request.
func streamLast(ctx context.Context, js jetstream.JetStream, name string) (jetstream.StreamState, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return jetstream.StreamState{}, fmt.Errorf("stream %s: %w", name, err)
	}
	return s.CachedInfo().State, nil
}

// pending reads a consumer's pending and unacknowledged messages, from
// the info its lookup read, as streamLast does.
func pending(ctx context.Context, js jetstream.JetStream, stream, durable string, all uint64) (uint64, error) {
	c, err := js.Consumer(ctx, stream, durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return all, nil
	}
	if err != nil {
		return 0, fmt.Errorf("consumer %s: %w", durable, err)
	}
	info := c.CachedInfo()
	return info.NumPending + uint64(info.NumAckPending), nil
}

// WaitCaughtUp polls until the pipeline has caught up and applied (a
// replica's applied revision) has reached the index, or ctx ends.
func WaitCaughtUp(ctx context.Context, js jetstream.JetStream, applied func() uint64) error {
	return WatchCaughtUp(ctx, js, applied, nil)
}

// WatchCaughtUp is WaitCaughtUp that hands every position it reads to
// observe (when not nil), for a progress display.
func WatchCaughtUp(ctx context.Context, js jetstream.JetStream, applied func() uint64, observe func(Progress)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		p, err := ReadProgress(ctx, js)
		if err == nil && p.CaughtUp(applied()) {
			return nil
		}
		if err == nil && observe != nil {
			observe(p)
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return err
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// WaitPipeline polls until the chunker and the indexer have no pending
// messages.
func WaitPipeline(ctx context.Context, js jetstream.JetStream) error {
	return WatchPipeline(ctx, js, nil)
}

// WatchPipeline is WaitPipeline handing every position it reads to
// observe (when not nil).
func WatchPipeline(ctx context.Context, js jetstream.JetStream, observe func(Progress)) error {
	return WatchCaughtUp(ctx, js, func() uint64 { return ^uint64(0) }, observe)
}

// InFlight is how many files are between the watcher and the index.
func (p Progress) InFlight() int { return int(p.ChunkerPending + p.IndexerPending) }
