package watcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// stateReadTimeout bounds the wait for the next message while reading the
// state back, so a lost consumer fails the sync instead of hanging it.
const stateReadTimeout = 30 * time.Second

// loadState reads back what was last published for r: the last message of
// every subject kh.files.<repo>.>, headers only, through an ordered
// consumer. Paths whose last message is a tombstone are absent from the
// result.
func (w *Watcher) loadState(ctx context.Context, r *repo) (map[string]fileState, error) {
	state := make(map[string]fileState)
	filter := contract.SubjectFiles + "." + r.name + ".>"
	cons, err := w.js.OrderedConsumer(ctx, contract.StreamFiles, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:       true,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("read state of %s from %s: %w", r.name, contract.StreamFiles, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("read state of %s from %s: %w", r.name, contract.StreamFiles, err)
	}
	defer func() {
		it.Stop()
		if info := cons.CachedInfo(); info != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			// Best effort: the server drops it after InactiveThreshold anyway.
			if err := w.js.DeleteConsumer(dctx, contract.StreamFiles, info.Name); err != nil &&
				!errors.Is(err, jetstream.ErrConsumerNotFound) {
				w.log.Debug("delete state consumer", "repo", r.name, "err", err)
			}
		}
	}()
	// The consumer's info at creation says how many subjects hold a
	// message; zero means there is nothing to wait for.
	info := cons.CachedInfo()
	if info == nil {
		if info, err = cons.Info(ctx); err != nil {
			return nil, fmt.Errorf("read state of %s: consumer info: %w", r.name, err)
		}
	}
	if info.NumPending == 0 {
		return state, nil
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		msg, err := it.Next(jetstream.NextMaxWait(stateReadTimeout))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("read state of %s from %s: %w", r.name, contract.StreamFiles, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return nil, fmt.Errorf("read state of %s: message metadata: %w", r.name, err)
		}
		w.recordState(r, state, msg)
		if md.NumPending == 0 {
			return state, nil
		}
	}
}

// recordState folds one KH_FILES message (headers only) into state.
func (w *Watcher) recordState(r *repo, state map[string]fileState, msg jetstream.Msg) {
	h := msg.Headers()
	path, err := unescapePath(h.Get(contract.HeaderPath))
	if err != nil || path == "" || contract.FileSubject(r.name, path) != msg.Subject() {
		w.log.Warn("ignore message without a valid path header", "repo", r.name, "subject", msg.Subject())
		return
	}
	if h.Get(contract.HeaderOp) == contract.OpDelete {
		delete(state, path)
		return
	}
	state[path] = fileState{sha: h.Get(contract.HeaderSHA256), meta: h.Get(contract.HeaderRepoMeta)}
}
