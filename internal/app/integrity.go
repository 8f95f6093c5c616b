package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/watcher"
)

// MissingDocs compares KH_INDEX with KH_FILES once the pipeline has caught
// up: every file subject of KH_FILES must have its document key in the
// index (a tombstone included), except the files the chunker
// dead-lettered. It returns the subjects whose document is missing, which
// only a damaged store explains, and any error reading the store, which is
// itself a sign of damage.
func MissingDocs(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	files, err := js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", contract.StreamFiles, err)
	}
	info, err := files.Info(ctx, jetstream.WithSubjectFilter(contract.SubjectFiles+".*.*"))
	if err != nil {
		return nil, fmt.Errorf("stream %s info: %w", contract.StreamFiles, err)
	}
	if len(info.State.Subjects) == 0 {
		return nil, nil
	}
	kv, err := js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", contract.BucketIndex, err)
	}
	keys := map[string]bool{}
	lister, err := kv.ListKeysFiltered(ctx, contract.CollectionDocs+".>")
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("list %s: %w", contract.BucketIndex, err)
	}
	if lister != nil {
		for k := range lister.Keys() {
			keys[k] = true
		}
	}
	dead, err := deadLettered(ctx, js)
	if err != nil {
		return nil, err
	}
	var missing []string
	for subj := range info.State.Subjects {
		key := contract.CollectionDocs + strings.TrimPrefix(subj, contract.SubjectFiles)
		if keys[key] {
			continue
		}
		m, err := files.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", subj, err)
		}
		if dead[m.Sequence] {
			continue
		}
		missing = append(missing, subj)
	}
	return missing, nil
}

// deadLettered returns the KH_FILES sequences whose file event (by the
// chunker) or chunk set (by the indexer) was dead-lettered.
func deadLettered(ctx context.Context, js jetstream.JetStream) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	dlq, err := js.Stream(ctx, contract.StreamDLQ)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", contract.StreamDLQ, err)
	}
	info, err := dlq.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return out, err
	}
	cons, err := dlq.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{contract.DLQSubject(chunker.Stage), contract.DLQSubject(indexer.Stage)}, HeadersOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", contract.StreamDLQ, err)
	}
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", contract.StreamDLQ, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			// A chunk set the indexer rejected names its file's
			// sequence in Kh-Source-Seq.
			h := contract.HeaderOrigSeq
			if m.Subject() == contract.DLQSubject(indexer.Stage) {
				h = contract.HeaderSourceSeq
			}
			if seq, err := strconv.ParseUint(m.Headers().Get(h), 10, 64); err == nil {
				out[seq] = true
			}
		}
		if batch.Error() != nil || n == 0 {
			return out, nil
		}
	}
}

// checkIntegrity waits for the pipeline to catch up, then checks that the
// index holds a document for every file of KH_FILES. When it does not (a
// damaged store lost entries), it says so in the log, in stats and in
// /readyz, and rebuilds the index from the
// streams it is derived from (KH_FILES, KH_TOOLS, KH_KNOWLEDGE).
func (n *Node) checkIntegrity(ctx context.Context) {
	if err := WaitCaughtUp(ctx, n.js, n.Query.Engine().Revision); err != nil {
		return
	}
	missing, err := MissingDocs(ctx, n.js)
	if ctx.Err() != nil || (err == nil && len(missing) == 0) {
		return
	}
	if err == nil {
		// A file published while the check ran is not damage: it is
		// missing only until the pipeline catches up with it. Count
		// only what is still missing after it has.
		missing, err = stillMissing(ctx, n, missing)
	}
	if ctx.Err() != nil || (err == nil && len(missing) == 0) {
		return
	}
	if err != nil {
		// A read that fails (a cluster electing leaders, a timeout)
		// proves no damage: say so, and never purge on it.
		n.log.Warn("could not check the index against KH_FILES", "err", err)
		return
	}
	problem := fmt.Sprintf("index store damaged: %d files of %s have no document in %s; rebuilding", len(missing), contract.StreamFiles, contract.BucketIndex)
	n.log.Error("the index does not match KH_FILES; rebuilding it", "missing", len(missing), "first", missing[0])
	n.Query.SetIntegrity(problem)
	// A damaged store loses even the writes made after the damage; a
	// purge of the whole bucket starts it afresh, and the replays write
	// every document again from the streams that own them: files, tools
	// and knowledge.
	err = purgeIndex(ctx, n.js)
	var res watcher.ReplayResult
	var tools, entries int
	if err == nil {
		res, err = watcher.Replay(ctx, n.js)
	}
	if err == nil {
		tools, err = indexer.ReplayTools(ctx, n.js, n.an, n.red)
	}
	if err == nil {
		entries, err = indexer.ReplayKB(ctx, n.js, kb.Folder{})
	}
	if err == nil {
		err = WaitCaughtUp(ctx, n.js, n.Query.Engine().Revision)
	}
	if err == nil {
		if missing, err = MissingDocs(ctx, n.js); err == nil && len(missing) > 0 {
			err = fmt.Errorf("%d files still have no document", len(missing))
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			n.log.Error("could not rebuild the index; run `knowhub reindex`", "err", err)
			n.Query.SetIntegrity("index store damaged; rebuilding failed: " + err.Error())
		}
		return
	}
	n.Query.SetIntegrity("")
	n.log.Info("index rebuilt", "files", res.Files, "tombstones", res.Tombstones, "tools", tools, "knowledge", entries)
}

// stillMissing waits for the pipeline to catch up again and returns the
// subjects of before that are still missing.
func stillMissing(ctx context.Context, n *Node, before []string) ([]string, error) {
	if err := WaitCaughtUp(ctx, n.js, n.Query.Engine().Revision); err != nil {
		return nil, err
	}
	now, err := MissingDocs(ctx, n.js)
	if err != nil {
		return nil, err
	}
	was := make(map[string]bool, len(before))
	for _, s := range before {
		was[s] = true
	}
	var out []string
	for _, s := range now {
		if was[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// purgeIndex removes every document from KH_INDEX's stream.
func purgeIndex(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, "KV_"+contract.BucketIndex)
	if err != nil {
		return fmt.Errorf("stream of %s: %w", contract.BucketIndex, err)
	}
	if err := s.Purge(ctx); err != nil {
		return fmt.Errorf("purge %s: %w", contract.BucketIndex, err)
	}
	return nil
}
