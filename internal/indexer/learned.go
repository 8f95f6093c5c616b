package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/analysis"
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
		doc := BuildLearnedDoc(cs, w.an, rec)
		val, err := contract.EncodeIndexDoc(doc)
		if err != nil {
			return false, bus.Permanent(err)
		}
		// A rewrite of the same file version (new learned words, a chunk
		// set delivered again) keeps the sections' endpoint vectors.
		written, err := writeDoc(ctx, w.kv, key, cs.FileSeq, val, forged, func(cur []byte) []byte { return keepEmbeddings(doc, cur, val) })
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
	if !screenLearned(&ev, w.an, w.red) {
		return nil
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
	cs, err := lastChunkSet(ctx, w.bus.JetStream(), repo, path, int(w.cfg.MaxFileBytes))
	if err != nil || cs == nil {
		return err
	}
	_, err = w.writeDoc(ctx, cs, nil)
	return err
}

// lastChunkSet reads a file's last chunk set from KH_CHUNKS, or nil when
// it has none that could be indexed (none yet, a deletion, or one the
// chunk handler dead-letters).
func lastChunkSet(ctx context.Context, js jetstream.JetStream, repo, path string, maxBytes int) (*contract.ChunkSet, error) {
	stream, err := js.Stream(ctx, contract.StreamChunks)
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", contract.StreamChunks, err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, contract.ChunkSubject(repo, path))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read chunk set of %s/%s: %w", repo, path, err)
	}
	cs, err := contract.DecodeChunkSetLimit(msg.Data, maxBytes)
	if err != nil || cs.Repo != repo || cs.Path != path || cs.Deleted {
		return nil, nil
	}
	return cs, nil
}

// ReplayLearned folds KH_LEARNED again from its first event, with the
// indexer's checks and screens (an and red), into KH_LEARNED_WORDS: each
// file's record is replaced by the fold, and a record that no event
// makes any more is deleted. Then it rebuilds the KH_INDEX document of
// every file whose record it wrote or deleted from the file's last chunk
// set. Run it while the indexer is idle; it returns the number of files.
func ReplayLearned(ctx context.Context, js jetstream.JetStream, an *analysis.Analyzer, red Redactor) (int, error) {
	records := map[string]*contract.LearnedRecord{}
	err := replayStream(ctx, js, contract.StreamLearned, func(msg jetstream.Msg, _ uint64) {
		var ev contract.LearnedEvent
		if json.Unmarshal(msg.Data(), &ev) == nil && ev.Check(msg.Subject()) == nil && screenLearned(&ev, an, red) {
			key := contract.LearnedKey(ev.Repo, ev.Path)
			if records[key] == nil {
				records[key] = &contract.LearnedRecord{Schema: contract.SchemaVersion, Repo: ev.Repo, Path: ev.Path}
			}
			records[key].Apply(&ev)
		}
	})
	if err != nil {
		return 0, err
	}
	bucket, err := js.KeyValue(ctx, contract.BucketLearned)
	if err != nil {
		return 0, err
	}
	index, err := js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return 0, err
	}
	// Records that no event makes any more are deleted.
	keys, err := bucket.ListKeys(ctx)
	if err != nil {
		return 0, err
	}
	gone := map[string]*contract.LearnedRecord{}
	for k := range keys.Keys() {
		if records[k] != nil {
			continue
		}
		e, err := bucket.Get(ctx, k)
		var rec contract.LearnedRecord
		if err == nil && json.Unmarshal(e.Value(), &rec) == nil && contract.ValidRepoName(rec.Repo) && contract.ValidPath(rec.Path) {
			gone[k] = &rec
		}
		if err := bucket.Delete(ctx, k); err != nil {
			return 0, fmt.Errorf("delete learned words %s: %w", k, err)
		}
	}
	n := 0
	rebuild := func(rec *contract.LearnedRecord, with *contract.LearnedRecord) error {
		cs, err := lastChunkSet(ctx, js, rec.Repo, rec.Path, 4<<20)
		if err != nil || cs == nil {
			return err
		}
		val, err := contract.EncodeIndexDoc(BuildLearnedDoc(cs, an, with))
		if err != nil {
			return err
		}
		if _, err := Write(ctx, index, contract.DocKey(rec.Repo, rec.Path), cs.FileSeq, val); err != nil {
			return fmt.Errorf("write %s/%s: %w", rec.Repo, rec.Path, err)
		}
		return nil
	}
	for k, rec := range records {
		val, err := json.Marshal(rec)
		if err != nil {
			return n, err
		}
		if _, err := bucket.Put(ctx, k, val); err != nil {
			return n, fmt.Errorf("write learned words %s: %w", k, err)
		}
		if err := rebuild(rec, rec); err != nil {
			return n, err
		}
		n++
	}
	for _, rec := range gone {
		if err := rebuild(rec, nil); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// screenLearned redacts and screens a learned event's words and headings
// as the indexer does, and reports whether anything is left to learn.
func screenLearned(ev *contract.LearnedEvent, an *analysis.Analyzer, red Redactor) bool {
	if ev.Op != contract.LearnedAdd {
		return true
	}
	ev.Words = learn.Words(red.String(strings.Join(ev.Words, " ")), an)
	// Sections are indexed redacted: a heading that held a secret matches
	// its section only redacted.
	for i, h := range ev.HeadingPath {
		ev.HeadingPath[i] = red.String(h)
	}
	return len(ev.Words) > 0
}
