package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
)

// StageKB names the indexer's knowledge consumer: it folds KH_KNOWLEDGE
// events into KH_KB records and their KH_INDEX documents.
const StageKB = "indexer-kb"

func (w *Worker) handleKB(ctx context.Context, m *bus.Message) error {
	var ev kb.Event
	if err := bus.DecodeJSON(m, &ev, "knowledge event"); err != nil {
		return err
	}
	if err := kb.ValidateEvent(&ev); err != nil {
		return bus.Permanent(err)
	}
	if want := contract.KnowledgeSubject(ev.ID); want != m.Subject {
		return bus.Permanent(fmt.Errorf("knowledge event for %s arrived on %s, want %s", ev.ID, m.Subject, want))
	}
	// kh.kb.save redacts and screens what it publishes; a producer that
	// writes into KH_KNOWLEDGE directly may not, so nothing is folded,
	// indexed or served before it is redacted and screened here too.
	kb.Clean(&ev, w.red, w.screen)
	entry, err := FoldKB(ctx, w.kb, kb.Folder{}, &ev, m.Seq)
	if err != nil {
		return err
	}
	return w.indexKB(ctx, entry)
}

// indexKB writes an entry's KH_INDEX document (a tombstone unless active).
func (w *Worker) indexKB(ctx context.Context, entry *kb.Entry) error {
	val, err := contract.EncodeIndexDoc(kb.BuildDoc(entry, w.an))
	if err != nil {
		return bus.Permanent(err)
	}
	if _, err := Write(ctx, w.kv, contract.KBIndexKey(entry.ID), entry.Seq, val); err != nil {
		return fmt.Errorf("write knowledge %s: %w", entry.ID, err)
	}
	return nil
}

// FoldKB applies one event to the entry's KH_KB record with
// compare-and-set, and returns the entry as it now stands. An event the
// record already reflects (a redelivery) changes nothing.
func FoldKB(ctx context.Context, bucket jetstream.KeyValue, f kb.Folder, ev *kb.Event, seq uint64) (*kb.Entry, error) {
	return writeRecord(ctx, bucket, ev.ID, func(cur *kb.Entry) (*kb.Entry, error) { return f.Fold(cur, ev, seq) })
}

// writeRecord replaces the KH_KB record id with next(current) by
// compare-and-set, retrying when another writer got there first, and
// returns the record as it now stands. next returning its argument writes
// nothing. Every writer of KH_KB goes through it.
func writeRecord(ctx context.Context, bucket jetstream.KeyValue, id string, next func(cur *kb.Entry) (*kb.Entry, error)) (*kb.Entry, error) {
	for attempt := 0; attempt < 16; attempt++ {
		var cur *kb.Entry
		var rev uint64
		e, err := bucket.Get(ctx, id)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return nil, err
		default:
			cur = new(kb.Entry)
			if err := json.Unmarshal(e.Value(), cur); err != nil {
				return nil, bus.Permanent(fmt.Errorf("decode record %s: %w", id, err))
			}
			rev = e.Revision()
		}
		out, err := next(cur)
		if err != nil {
			return nil, bus.Permanent(err)
		}
		if out == cur {
			return cur, nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return nil, bus.Permanent(err)
		}
		if rev == 0 {
			_, err = bucket.Create(ctx, id, data)
		} else {
			_, err = bucket.Update(ctx, id, data, rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, errors.New("too many concurrent writers")
}
