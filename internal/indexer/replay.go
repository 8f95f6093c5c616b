package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
)

// replayStream hands every message of stream, from its first to the last
// one it held when called, to fn with its stream sequence.
func replayStream(ctx context.Context, js jetstream.JetStream, name string, fn func(msg jetstream.Msg, seq uint64)) error {
	stream, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return err
	}
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return err
	}
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return err
		}
		fn(msg, md.Sequence.Stream)
		if md.Sequence.Stream >= info.State.LastSeq || md.NumPending == 0 {
			return nil
		}
	}
}

// ReplayKB recomputes every knowledge record from KH_KNOWLEDGE: it folds
// all events from the start with f (so a changed quality formula applies
// to every entry), then rewrites KH_KB and the entries' KH_INDEX
// documents. Records and documents are written as the indexer writes them,
// by compare-and-set: a record the live indexer has meanwhile folded a
// newer event into keeps that newer state. It returns the number of
// entries written.
func ReplayKB(ctx context.Context, js jetstream.JetStream, f kb.Folder) (int, error) {
	entries := map[string]*kb.Entry{}
	err := replayStream(ctx, js, contract.StreamKnowledge, func(msg jetstream.Msg, seq uint64) {
		var ev kb.Event
		if json.Unmarshal(msg.Data(), &ev) == nil && kb.ValidateEvent(&ev) == nil {
			if next, err := f.Fold(entries[ev.ID], &ev, seq); err == nil && next != nil {
				entries[ev.ID] = next
			}
		}
	})
	if err != nil {
		return 0, err
	}
	records, err := js.KeyValue(ctx, contract.BucketKB)
	if err != nil {
		return 0, err
	}
	index, err := js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return 0, err
	}
	an := analysis.New()
	for id, e := range entries {
		e, err := writeRecord(ctx, records, id, func(cur *kb.Entry) (*kb.Entry, error) {
			if cur != nil && cur.Seq > e.Seq {
				return cur, nil
			}
			return e, nil
		})
		if err != nil {
			return 0, fmt.Errorf("write record %s: %w", id, err)
		}
		val, err := contract.EncodeIndexDoc(kb.BuildDoc(e, an))
		if err != nil {
			return 0, err
		}
		if _, err := Write(ctx, index, contract.KBIndexKey(id), e.Seq, val); err != nil {
			return 0, fmt.Errorf("write index %s: %w", id, err)
		}
	}
	return len(entries), nil
}

// ReplayTools rewrites the KH_INDEX document of every tool from KH_TOOLS
// (the last event of each tool), as the indexer writes it, by
// compare-and-set on the event's sequence. Events that can never be
// indexed are skipped, as the live indexer dead-letters them. It returns
// the number of documents written. Their text is redacted with red and
// screened, as the indexer does.
func ReplayTools(ctx context.Context, js jetstream.JetStream, an *analysis.Analyzer, red Redactor) (int, error) {
	stream, err := js.Stream(ctx, contract.StreamTools)
	if err != nil {
		return 0, err
	}
	info, err := stream.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return 0, err
	}
	kv, err := js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return 0, err
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return 0, err
	}
	screen := kb.NewScreen()
	n := 0
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return n, fmt.Errorf("read %s: %w", contract.StreamTools, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return n, err
		}
		var ev contract.ToolEvent
		if json.Unmarshal(msg.Data(), &ev) == nil && ev.Schema <= contract.SchemaVersion && ev.Name != "" &&
			contract.ToolSubject(ev.Name) == msg.Subject() {
			if val, err := toolDoc(&ev, md.Sequence.Stream, an, red, screen); err == nil {
				if _, err := Write(ctx, kv, contract.ToolIndexKey(ev.Name), md.Sequence.Stream, val); err != nil {
					return n, fmt.Errorf("write tool %q: %w", ev.Name, err)
				}
				n++
			}
		}
		if md.Sequence.Stream >= info.State.LastSeq || md.NumPending == 0 {
			return n, nil
		}
	}
}
