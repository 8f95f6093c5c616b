package watcher

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
)

// ReplayResult counts what Replay republished.
type ReplayResult struct {
	Files, Tombstones, Changed int
}

// Replay rebuilds the index from KH_FILES without reading any file: it
// republishes the latest message of every subject, so the chunker and the
// indexer process each file again under a new, higher sequence. Each
// publish expects the subject's last sequence to be the one read, so a file
// the watcher changed meanwhile keeps its newer version.
func Replay(ctx context.Context, js jetstream.JetStream) (ReplayResult, error) {
	var res ReplayResult
	stream, err := js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		return res, fmt.Errorf("stream %s: %w", contract.StreamFiles, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return res, err
	}
	lastSeq := info.State.LastSeq
	if info.State.Msgs == 0 {
		return res, nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return res, fmt.Errorf("read %s: %w", contract.StreamFiles, err)
	}
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return res, fmt.Errorf("read %s: %w", contract.StreamFiles, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return res, err
		}
		if md.Sequence.Stream > lastSeq {
			break // our own republished messages
		}
		out := &nats.Msg{Subject: msg.Subject(), Header: nats.Header{}, Data: msg.Data()}
		for k, v := range msg.Headers() {
			out.Header[k] = v
		}
		out.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(md.Sequence.Stream, 10))
		_, err = js.PublishMsg(ctx, out)
		switch {
		case bus.IsWrongLastSequence(err):
			res.Changed++
		case err != nil:
			return res, fmt.Errorf("republish %s: %w", msg.Subject(), err)
		case msg.Headers().Get(contract.HeaderOp) == contract.OpDelete:
			res.Tombstones++
		default:
			res.Files++
		}
		if md.NumPending == 0 {
			break
		}
	}
	return res, nil
}
