package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/evolve"
	"github.com/knowhub/knowhub/internal/kb"
)

// Errors a knowledge request can end with besides ErrBadRequest.
var (
	ErrNotFound  = errors.New("not found")
	ErrForbidden = errors.New("forbidden")
)

// Redactor removes secrets from text before it is persisted.
type Redactor interface {
	String(s string) string
}

// SaveKB saves a knowledge entry: the request is redacted, validated,
// screened for prompt injection and checked for duplicates, then its
// events are appended to KH_KNOWLEDGE. The reply carries the entry id and
// the sequence to pass as min_seq to read the write back.
func (s *Service) SaveKB(ctx context.Context, req kb.SaveRequest) (*kb.SaveResponse, error) {
	s.redactSave(&req)
	if err := kb.ValidateSave(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var cands []kb.Candidate
	if cur, err := s.kbRecord(ctx, kb.NewID(&req)); err == nil {
		cands = append(cands, kb.Candidate{Entry: cur})
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	cands = append(cands, s.engine.SimilarKB(req.Task+"\n"+req.Content, req.Scopes, 5)...)
	plan, err := kb.PlanSave(&req, cands, s.engine.Analyzer(), s.screen, time.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if plan.Existing {
		resp := plan.Response(0)
		return &resp, nil
	}
	// The reply's seq is the last event's, so min_seq covers all of them.
	var last uint64
	for i, ev := range plan.Events {
		seq, dup, err := s.publishKB(ctx, ev, i == 0)
		if err != nil {
			return nil, err
		}
		if i == 0 && dup {
			// The same save is still on its way through the indexer.
			return &kb.SaveResponse{ID: plan.ID, State: kb.StateActive, Duplicate: kb.DuplicateExact}, nil
		}
		last = seq
	}
	resp := plan.Response(last)
	return &resp, nil
}

func (s *Service) redactSave(r *kb.SaveRequest) { kb.RedactSave(r, s.red) }

// UpdateKB records feedback on an entry or changes its state. Revoke and
// release are moderation: admin must be set.
func (s *Service) UpdateKB(ctx context.Context, req kb.UpdateRequest, scopes []string, admin bool) (*kb.UpdateResponse, error) {
	if req.Case != nil {
		req.Case.Task = s.red.String(req.Case.Task)
		req.Case.Outcome = s.red.String(req.Case.Outcome)
		req.Case.Reason = s.red.String(req.Case.Reason)
	}
	req.Reason = s.red.String(req.Reason)
	req.Task = s.red.String(req.Task)
	req.Content = s.red.String(req.Content)
	if err := kb.ValidateUpdate(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if (req.Action == kb.ActionRevoke || req.Action == kb.ActionRelease) && !admin {
		return nil, fmt.Errorf("%w: %s needs the %s scope", ErrForbidden, req.Action, AdminScope)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cur, err := s.kbRecord(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if !admin && !kb.Visible(cur.Scopes, scopes) {
		return nil, fmt.Errorf("%w: no entry %s", ErrNotFound, req.ID)
	}
	if req.Action == kb.ActionRelease && cur.State != kb.StateQuarantined && cur.State != kb.StateRetired {
		return nil, fmt.Errorf("%w: entry %s is %s, not quarantined or retired: there is nothing to release", ErrBadRequest, req.ID, cur.State)
	}
	now := time.Now().UTC()
	if req.Action == kb.ActionRevise {
		return s.reviseKB(ctx, cur, &req, now)
	}
	ev := kb.UpdateEvent(&req, now)
	seq, _, err := s.publishKB(ctx, ev, false)
	if err != nil {
		return nil, err
	}
	resp := &kb.UpdateResponse{ID: req.ID, Seq: seq}
	if req.Action == kb.ActionFeedback {
		// Evolution bounds its own steps: a model may take longer than
		// this request's budget for reads and writes.
		if err := s.evolveKB(context.WithoutCancel(ctx), ev, seq, resp); err != nil {
			// The feedback is stored; the rules run again at the next one.
			s.log.Warn("knowledge evolution after feedback", "id", req.ID, "err", err)
		}
	}
	return resp, nil
}

// Evolver is knowledge evolution's optional model step (package evolve):
// a revision of an entry agents found partly right, and a verdict on two
// near duplicates before they are merged. Implementations are safe for
// concurrent use and bound each call with their own timeout.
type Evolver interface {
	Model() string
	Revise(ctx context.Context, e *kb.Entry) (evolve.Revision, error)
	Merge(ctx context.Context, a, b *kb.Entry) (evolve.Merged, error)
}

// evolveKB applies knowledge evolution to an entry that just got
// feedback. The rules (kb.DefaultRules) first: it is retired when harmful
// feedback calls for it; or else, when it is an active near duplicate of
// another active entry, the two are merged with their feedback. With a
// model step (s.evolve), an entry with mixed feedback is replaced by the
// model's revision, and two near duplicates are merged only when the
// model says they say the same, the survivor then replaced by the model's
// merged text. The model's text is redacted and screened like a save and
// refused when screening flags it; when the model fails or is refused the
// rules' outcome stands. Each outcome is appended to KH_KNOWLEDGE as
// events and reported in resp.Evolved.
func (s *Service) evolveKB(base context.Context, ev *kb.Event, seq uint64, resp *kb.UpdateResponse) error {
	ctx, cancel := context.WithTimeout(base, 10*time.Second)
	defer cancel()
	// The rules read the record as the indexer folded it with this
	// feedback, so that votes arriving together are all counted.
	next, err := s.kbRecordAt(ctx, ev.ID, seq)
	if err != nil {
		return err
	}
	if retire := kb.DefaultRules.Retire(next, ev.At); retire != nil {
		rseq, _, err := s.publishKB(ctx, retire, false)
		if err != nil {
			return err
		}
		resp.Seq = rseq
		resp.Evolved = append(resp.Evolved, kb.Evolution{Action: kb.EvolvedRetired, ID: next.ID, Reason: retire.Reason})
		return nil
	}
	if s.evolve != nil && kb.DefaultRules.PartlyRight(next) {
		rev, err := s.evolve.Revise(base, next)
		switch {
		case errors.Is(err, evolve.ErrNoChange):
		case err != nil:
			s.log.Warn("knowledge evolution: no revision from the model; the entry stays", "id", next.ID, "err", err)
		default:
			why := fmt.Sprintf("revised by model %s after mixed feedback (%d helpful, %d harmful)", s.evolve.Model(), next.Eval.Helpful, next.Eval.Harmful)
			revised, err := s.modelRevision(base, next, rev.Task, rev.Content, why, ev.At, resp)
			if err != nil || revised {
				return err
			}
		}
		// No revision: the rules go on as without a model.
		cancel()
		ctx, cancel = context.WithTimeout(base, 10*time.Second)
		defer cancel()
	}
	if next.DuplicateOf == "" {
		return nil
	}
	other, err := s.kbRecord(ctx, next.DuplicateOf)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	survivor, absorbed, events, ok := kb.Merge(next, other, ev.At)
	if !ok {
		return nil
	}
	var merged *evolve.Merged
	if s.evolve != nil {
		m, err := s.evolve.Merge(base, survivor, absorbed)
		switch {
		case err != nil:
			s.log.Warn("knowledge evolution: no verdict from the model; merging by the rules", "id", survivor.ID, "other", absorbed.ID, "err", err)
		case !m.Same:
			// The model reads two different pieces of advice: both stay,
			// linked, and the question comes up again at the next vote.
			return nil
		default:
			merged = &m
		}
		// The model may have taken the rest of this step's budget.
		cancel()
		ctx, cancel = context.WithTimeout(base, 10*time.Second)
		defer cancel()
	}
	for _, mev := range events {
		mseq, _, err := s.publishKB(ctx, mev, false)
		if err != nil {
			return err
		}
		resp.Seq = max(resp.Seq, mseq)
	}
	resp.Evolved = append(resp.Evolved, kb.Evolution{Action: kb.EvolvedMerged, ID: absorbed.ID, Into: survivor.ID, Reason: events[0].Reason})
	if merged == nil {
		return nil
	}
	why := fmt.Sprintf("merged text of %s and %s by model %s", survivor.ID, absorbed.ID, s.evolve.Model())
	_, err = s.modelRevision(base, survivor, merged.Task, merged.Content, why, ev.At, resp)
	return err
}

// modelRevision saves a model's text as a revision of cur, through the
// path of a revise request: redacted, validated, screened. Text that
// screening flags is refused (nothing is written, cur stays) rather than
// quarantined: no agent asked for it. revised reports whether the
// revision was written.
func (s *Service) modelRevision(base context.Context, cur *kb.Entry, task, content, why string, at time.Time, resp *kb.UpdateResponse) (revised bool, err error) {
	req := &kb.UpdateRequest{ID: cur.ID, Action: kb.ActionRevise, Task: s.red.String(task), Content: s.red.String(content), Reason: why}
	plan, err := kb.PlanRevision(cur, req, s.screen, at)
	if errors.Is(err, kb.ErrNothingRevised) {
		return false, nil
	}
	if err != nil {
		s.log.Warn("knowledge evolution: the model's text is not a valid entry; refused", "id", cur.ID, "err", err)
		return false, nil
	}
	if plan.Quarantine != "" {
		s.log.Warn("knowledge evolution: the model's text reads as prompt injection; refused", "id", cur.ID, "reason", plan.Quarantine)
		return false, nil
	}
	ctx, cancel := context.WithTimeout(base, 10*time.Second)
	defer cancel()
	for i, ev := range plan.Events {
		seq, _, err := s.publishKB(ctx, ev, i == 0)
		if err != nil {
			return false, err
		}
		resp.Seq = max(resp.Seq, seq)
	}
	resp.Evolved = append(resp.Evolved, kb.Evolution{Action: kb.EvolvedRevised, ID: cur.ID, Into: plan.ID, Reason: why})
	return true, nil
}

// reviseKB saves a revision of cur, which it supersedes unless screening
// holds the revision back.
func (s *Service) reviseKB(ctx context.Context, cur *kb.Entry, req *kb.UpdateRequest, at time.Time) (*kb.UpdateResponse, error) {
	plan, err := kb.PlanRevision(cur, req, s.screen, at)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	resp := &kb.UpdateResponse{ID: req.ID}
	for i, ev := range plan.Events {
		seq, _, err := s.publishKB(ctx, ev, i == 0)
		if err != nil {
			return nil, err
		}
		resp.Seq = seq
	}
	why := "revised"
	if plan.Quarantine != "" {
		why = "revision quarantined for review: " + plan.Quarantine
	}
	resp.Evolved = append(resp.Evolved, kb.Evolution{Action: kb.EvolvedRevised, ID: cur.ID, Into: plan.ID, Reason: why})
	return resp, nil
}

// GetKB reads an entry's current record as a caller holding scopes; an
// entry the caller may not see is reported as not found.
func (s *Service) GetKB(ctx context.Context, req contract.KBGetRequest, admin bool) (*kb.Entry, error) {
	if !kb.ValidID(req.ID) {
		return nil, fmt.Errorf("%w: %q is not an entry id", ErrBadRequest, req.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	e, err := s.kbRecord(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if !admin && !kb.Visible(e.Scopes, req.Scopes) {
		return nil, fmt.Errorf("%w: no entry %s", ErrNotFound, req.ID)
	}
	return e, nil
}

// ReviewKB lists the quarantined entries, oldest first.
func (s *Service) ReviewKB(ctx context.Context) ([]kb.Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	keys, err := s.kbBucket.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var all []kb.Entry
	for k := range keys.Keys() {
		e, err := s.kbRecord(ctx, k)
		if err != nil {
			continue
		}
		all = append(all, *e)
	}
	return kb.Review(all), nil
}

// SearchKB honours MinSeq, then searches knowledge.
func (s *Service) SearchKB(ctx context.Context, req kb.SearchRequest) (*kb.SearchResponse, error) {
	if req.MinSeq > 0 && !s.waitApplied(ctx, contract.CollectionKB, req.MinSeq) {
		return nil, fmt.Errorf("%w: knowledge index has not reached sequence %d within %s", ErrUnavailable, req.MinSeq, s.cfg.MinSeqWait)
	}
	resp, err := s.engine.SearchKB(req)
	if err == nil {
		resp.Indexing = !s.Complete()
	}
	return resp, err
}

// kbRecordAt waits, up to kbFoldWait, until the KH_KB record of id has
// folded the event at seq (or a later one), and returns it.
func (s *Service) kbRecordAt(ctx context.Context, id string, seq uint64) (*kb.Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, kbFoldWait)
	defer cancel()
	w, err := s.kbBucket.Watch(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("entry %s has not folded sequence %d within %s", id, seq, kbFoldWait)
		case v := <-w.Updates():
			if v == nil { // the current value was delivered, or there is none
				continue
			}
			var e kb.Entry
			if err := json.Unmarshal(v.Value(), &e); err != nil {
				return nil, fmt.Errorf("decode entry %s: %w", id, err)
			}
			if e.Seq >= seq {
				return &e, nil
			}
		}
	}
}

// kbFoldWait bounds how long a feedback reply waits for the indexer to
// fold the feedback before the evolution rules read the entry.
const kbFoldWait = 3 * time.Second

func (s *Service) kbRecord(ctx context.Context, id string) (*kb.Entry, error) {
	e, err := s.kbBucket.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: no entry %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var entry kb.Entry
	if err := json.Unmarshal(e.Value(), &entry); err != nil {
		return nil, fmt.Errorf("decode entry %s: %w", id, err)
	}
	return &entry, nil
}

// publishKB appends one event to KH_KNOWLEDGE. A saved event carries a
// message id, so a retried save is stored once; dup reports that.
func (s *Service) publishKB(ctx context.Context, ev *kb.Event, dedupe bool) (seq uint64, dup bool, err error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return 0, false, err
	}
	msg := &nats.Msg{Subject: contract.KnowledgeSubject(ev.ID), Data: data, Header: nats.Header{
		contract.HeaderSchema: {strconv.Itoa(contract.SchemaVersion)},
		contract.HeaderOp:     {ev.Type},
	}}
	if dedupe {
		msg.Header.Set(nats.MsgIdHdr, "kb:"+ev.Type+":"+ev.ID)
	}
	ack, err := s.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, false, fmt.Errorf("%w: publish knowledge event: %v", ErrUnavailable, err)
	}
	return ack.Sequence, ack.Duplicate, nil
}
