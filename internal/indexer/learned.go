package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/learn"
)

// StageLearned names the indexer's learned-vocabulary consumer.
const StageLearned = "indexer-learned"

// writeDoc builds the index document of chunk set cs with the file's
// learned words and writes it. It builds with the record it last saw for
// the file (none, for most files), then reads the record: when it changed
// meanwhile, it builds and writes again. So a learned event folded
// meanwhile is never lost (either this read sees the new record, or the
// learned handler's rewrite, which follows its fold, sees this write), at
// one bucket read per chunk set.
func (w *Worker) writeDoc(ctx context.Context, cs *contract.ChunkSet, forged func(uint64) bool) (bool, error) {
	key := contract.DocKey(cs.Repo, cs.Path)
	var rec *contract.LearnedRecord
	var rev uint64
	if c, ok := w.seen.Load(key); ok {
		rec, rev = c.(*seenRecord).rec, c.(*seenRecord).rev
	}
	for attempt := 0; ; attempt++ {
		val, err := contract.EncodeIndexDoc(BuildLearnedDoc(cs, w.an, rec))
		if err != nil {
			return false, bus.Permanent(err)
		}
		written, err := WriteChecked(ctx, w.kv, key, cs.FileSeq, val, forged)
		if err != nil {
			return false, fmt.Errorf("write %s: %w", key, err)
		}
		if !written || cs.Deleted {
			return written, nil
		}
		again, rev2, err := w.learnedRecord(ctx, cs.Repo, cs.Path)
		if err != nil {
			return false, err
		}
		if rev2 == 0 {
			w.seen.Delete(key)
		} else {
			w.seen.Store(key, &seenRecord{again, rev2})
		}
		if rev2 == rev || attempt == 8 {
			return written, nil
		}
		rec, rev = again, rev2
	}
}

// seenRecord is a file's learned words as the indexer last read them.
type seenRecord struct {
	rec *contract.LearnedRecord
	rev uint64
}

// learnedRecord reads a file's learned words and their revision (0 and a
// nil record when it has none).
func (w *Worker) learnedRecord(ctx context.Context, repo, path string) (*contract.LearnedRecord, uint64, error) {
	if w.learned == nil {
		return nil, 0, nil
	}
	e, err := w.learned.Get(ctx, contract.LearnedKey(repo, path))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read learned words of %s/%s: %w", repo, path, err)
	}
	var rec contract.LearnedRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return nil, e.Revision(), nil // unreadable: index without it
	}
	return &rec, e.Revision(), nil
}

// handleLearned folds a learned event into the file's record in
// KH_LEARNED_WORDS (compare-and-set), then rebuilds the file's index
// document from its last chunk set with the new words.
func (w *Worker) handleLearned(ctx context.Context, m *bus.Message) error {
	var ev contract.LearnedEvent
	if err := bus.DecodeJSON(m, &ev, "learned event"); err != nil {
		return err
	}
	if err := ev.Check(m.Subject); err != nil {
		return bus.Permanent(err)
	}
	// The producer is not trusted to have screened the words: redact and
	// screen them again, as the extractor did.
	if ev.Op == contract.LearnedAdd {
		ev.Words = learn.Words(w.red.String(strings.Join(ev.Words, " ")), w.an)
		if len(ev.Words) == 0 {
			return nil
		}
		// Sections are indexed redacted: a heading that held a secret
		// matches its section only redacted.
		for i, h := range ev.HeadingPath {
			ev.HeadingPath[i] = w.red.String(h)
		}
	}
	changed, err := w.foldLearned(ctx, &ev)
	if err != nil || !changed {
		return err
	}
	return w.reindexFile(ctx, ev.Repo, ev.Path)
}

// foldLearned applies ev to its file's record and reports whether the
// record changed.
func (w *Worker) foldLearned(ctx context.Context, ev *contract.LearnedEvent) (bool, error) {
	key := contract.LearnedKey(ev.Repo, ev.Path)
	for attempt := 0; attempt < 16; attempt++ {
		rec := contract.LearnedRecord{Schema: contract.SchemaVersion, Repo: ev.Repo, Path: ev.Path}
		var rev uint64
		e, err := w.learned.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return false, fmt.Errorf("read learned words %s: %w", key, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &rec); err != nil {
				rec = contract.LearnedRecord{Schema: contract.SchemaVersion, Repo: ev.Repo, Path: ev.Path}
			}
		}
		if !rec.Apply(ev) {
			return false, nil
		}
		val, err := json.Marshal(&rec)
		if err != nil {
			return false, err
		}
		if rev == 0 {
			_, err = w.learned.Create(ctx, key, val)
		} else {
			_, err = w.learned.Update(ctx, key, val, rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("write learned words %s: %w", key, err)
		}
		return true, nil
	}
	return false, errors.New("too many concurrent writers")
}

// reindexFile rebuilds a file's index document from its last chunk set in
// KH_CHUNKS. A file not chunked yet gets its words when it is.
func (w *Worker) reindexFile(ctx context.Context, repo, path string) error {
	stream, err := w.bus.JetStream().Stream(ctx, contract.StreamChunks)
	if err != nil {
		return fmt.Errorf("open stream %s: %w", contract.StreamChunks, err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, contract.ChunkSubject(repo, path))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read chunk set of %s/%s: %w", repo, path, err)
	}
	cs, err := contract.DecodeChunkSetLimit(msg.Data, int(w.cfg.MaxFileBytes))
	if err != nil || cs.Repo != repo || cs.Path != path || cs.Deleted {
		return nil // the chunk handler dead-letters or tombstones it
	}
	_, err = w.writeDoc(ctx, cs, nil)
	return err
}
