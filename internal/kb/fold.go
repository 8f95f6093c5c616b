package kb

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/knowhub/knowhub/internal/contract"
)

// Event types of KH_KNOWLEDGE.
const (
	EventSaved      = "saved"      // a new entry (Save)
	EventFeedback   = "feedback"   // helpful or harmful, with an optional Case
	EventSuperseded = "superseded" // replaced by the entry By
	EventRevoked    = "revoked"    // withdrawn for good
	EventReleased   = "released"   // a quarantined or retired entry cleared by review
	EventRetired    = "retired"    // taken out of search by the evolution rules (harmful feedback)
	EventMerged     = "merged"     // a near duplicate absorbed, with its feedback
)

// ValidateEvent checks the shape of an event: schema, type, id, time and the
// fields its type needs. It returns every problem found, or nil.
func ValidateEvent(ev *Event) error {
	if ev == nil {
		return errors.New("event: missing")
	}
	var p problems
	if ev.Schema < 1 || ev.Schema > contract.SchemaVersion {
		p.add("schema", "%d is not supported (1–%d)", ev.Schema, contract.SchemaVersion)
	}
	if !ValidID(ev.ID) {
		p.add("id", "%q is not an entry id", ev.ID)
	}
	if ev.At.IsZero() {
		p.add("at", "required")
	}
	switch ev.Type {
	case EventSaved:
		if ev.Save == nil {
			p.add("save", "required for a saved event")
		}
		if ev.NearDuplicateOf != "" && (!ValidID(ev.NearDuplicateOf) || ev.NearDuplicateOf == ev.ID) {
			p.add("near_duplicate_of", "%q is not another entry's id", ev.NearDuplicateOf)
		}
		if ev.Revises != "" && (!ValidID(ev.Revises) || ev.Revises == ev.ID) {
			p.add("revises", "%q is not another entry's id", ev.Revises)
		}
		p.text("quarantine_reason", ev.Quarantine, false, MaxReasonBytes)
	case EventFeedback:
		p.feedbackCase("case", ev.Case)
	case EventSuperseded:
		if !ValidID(ev.By) || ev.By == ev.ID {
			p.add("superseded_by", "%q is not another entry's id", ev.By)
		}
	case EventMerged:
		switch m := ev.Merged; {
		case m == nil:
			p.add("merged", "required for a merged event")
		case !ValidID(m.From) || m.From == ev.ID:
			p.add("merged.from", "%q is not another entry's id", m.From)
		case m.Helpful < 0 || m.Harmful < 0:
			p.add("merged", "negative feedback counts")
		}
	case EventRevoked, EventReleased, EventRetired:
	default:
		p.add("type", "%q is not a knowledge event type", ev.Type)
	}
	if ev.Type != EventSaved && ev.Save != nil {
		p.add("save", "only a saved event carries a save request")
	}
	if ev.Type != EventMerged && ev.Merged != nil {
		p.add("merged", "only a merged event carries a merge")
	}
	p.text("reason", ev.Reason, false, MaxReasonBytes)
	return p.err()
}

// PriorWeight is how many feedback votes the author's own score is worth in
// QualityScore.
const PriorWeight = 3

// QualityScore is the default quality of an entry, in [0,1]: a Bayesian
// average of the helpful ratio in which the author's score counts as
// PriorWeight pseudo-votes.
//
//	prior   = (score − 1) / 4                  author score 1..5 → 0..1 (clamped)
//	n       = helpful + harmful
//	quality = (helpful + k·prior) / (n + k)    k = PriorWeight = 3
//
// Equivalently quality = (1−w)·prior + w·helpful/n with the evidence weight
// w = n/(n+k): with no feedback it is the prior, and feedback takes over as
// it accumulates (w = 0.5 after 3 votes, 0.77 after 10, 0.97 after 100).
// It is monotone: one more helpful vote never lowers it and one more harmful
// vote never raises it (strictly, unless it is already 1 or 0). A Wilson
// lower bound in place of helpful/n is not monotone in this blend: the first
// helpful vote on a score-5 entry would drop it from 1.0 to about 0.80; the
// pseudo-votes already discount thin evidence.
func QualityScore(authorScore, helpful, harmful int) float64 {
	s := min(max(authorScore, MinScore), MaxScore)
	prior := float64(s-MinScore) / float64(MaxScore-MinScore)
	h, f := float64(max(helpful, 0)), float64(max(harmful, 0))
	return (h + PriorWeight*prior) / (h + f + PriorWeight)
}

// Folder folds events into entries. The zero value uses QualityScore;
// replaying KH_KNOWLEDGE through a Folder with another Quality recomputes
// every entry's score.
type Folder struct {
	// Quality maps the author score and feedback counts to a score in
	// [0,1]; results outside are clamped and NaN counts as 0. Nil means
	// QualityScore.
	Quality func(authorScore, helpful, harmful int) float64
}

// Fold applies one event read at stream sequence seq to cur with the default
// Folder; see Folder.Fold.
func Fold(cur *Entry, ev *Event, seq uint64) (*Entry, error) {
	return Folder{}.Fold(cur, ev, seq)
}

// Fold applies one event, read at stream sequence seq, to the current
// record cur (nil before the entry's first event) and returns the new
// record. It is pure: cur and ev are not modified and the result shares no
// slices with them. It returns cur itself, unchanged, when the event changes
// nothing, so the caller can skip the write:
//
//   - seq ≤ cur.Seq: a replay or redelivery (idempotent at-least-once);
//   - a saved event for an entry that exists: an exact duplicate save;
//   - an event that does not apply in the entry's state (below).
//
// Transitions, by state (anything not listed is ignored):
//
//	active:      feedback counts; merged adds the absorbed entry's counts;
//	             superseded → superseded; retired → retired; revoked → revoked
//	quarantined: released → active; revoked → revoked (feedback is ignored:
//	             a quarantined entry is never served, so no one used it)
//	superseded:  feedback counts (late reports of earlier use); revoked → revoked
//	retired:     feedback counts (late reports); released → active (review
//	             reinstates it); superseded → superseded (a revision);
//	             revoked → revoked
//	revoked:     terminal, every event is ignored
//
// It returns an error, for the dead-letter stream, when the event is
// malformed, names another entry, carries an invalid save request, or is not
// a saved event for an entry that does not exist yet. Every applied event
// sets Seq and UpdatedAt and recomputes QualityScore.
func (f Folder) Fold(cur *Entry, ev *Event, seq uint64) (*Entry, error) {
	if seq == 0 {
		return nil, errors.New("fold event: sequence 0")
	}
	if cur != nil && seq <= cur.Seq {
		return cur, nil
	}
	if err := ValidateEvent(ev); err != nil {
		return nil, fmt.Errorf("fold event at seq %d: %w", seq, err)
	}
	if cur == nil {
		if ev.Type != EventSaved {
			return nil, fmt.Errorf("fold %s event for %s at seq %d: entry does not exist", ev.Type, ev.ID, seq)
		}
		return f.saved(ev, seq)
	}
	if cur.ID != ev.ID {
		return nil, fmt.Errorf("fold %s event for %s at seq %d: record is %s", ev.Type, ev.ID, seq, cur.ID)
	}
	var apply func(*Entry)
	switch {
	case cur.State == StateRevoked || ev.Type == EventSaved:
	case ev.Type == EventFeedback && (cur.State == StateActive || cur.State == StateSuperseded || cur.State == StateRetired):
		apply = func(e *Entry) { feedback(e, ev) }
	case ev.Type == EventMerged && cur.State == StateActive && !slices.Contains(cur.MergedFrom, ev.Merged.From):
		apply = func(e *Entry) {
			e.Eval.Helpful += ev.Merged.Helpful
			e.Eval.Harmful += ev.Merged.Harmful
			e.MergedFrom = append(e.MergedFrom, ev.Merged.From)
			if e.DuplicateOf == ev.Merged.From {
				e.DuplicateOf = ""
			}
		}
	case ev.Type == EventSuperseded && (cur.State == StateActive || cur.State == StateRetired):
		apply = func(e *Entry) { e.State, e.SupersededBy, e.StateReason = StateSuperseded, ev.By, ev.Reason }
	case ev.Type == EventRetired && cur.State == StateActive:
		apply = func(e *Entry) { e.State, e.StateReason = StateRetired, ev.Reason }
	case ev.Type == EventRevoked:
		apply = func(e *Entry) { e.State, e.StateReason = StateRevoked, ev.Reason }
	case ev.Type == EventReleased && cur.State == StateQuarantined:
		apply = func(e *Entry) { e.State, e.Quarantine, e.StateReason = StateActive, "", ev.Reason }
	case ev.Type == EventReleased && cur.State == StateRetired:
		apply = func(e *Entry) { e.State, e.StateReason = StateActive, ev.Reason }
	}
	if apply == nil {
		return cur, nil
	}
	e := cloneEntry(cur)
	apply(e)
	e.Seq, e.UpdatedAt = seq, ev.At
	e.QualityScore = f.quality(e.Eval)
	return e, nil
}

// saved builds a new entry from a saved event.
func (f Folder) saved(ev *Event, seq uint64) (*Entry, error) {
	r := cloneSave(ev.Save)
	if err := ValidateSave(r); err != nil {
		return nil, fmt.Errorf("fold saved event for %s at seq %d: %w", ev.ID, seq, err)
	}
	e := &Entry{
		ID:           ev.ID,
		Task:         r.Task,
		Content:      r.Content,
		Types:        r.Types,
		Eval:         Eval{Score: r.Score},
		Scopes:       r.Scopes,
		Owner:        r.Owner,
		Source:       r.Source,
		State:        StateActive,
		DuplicateOf:  ev.NearDuplicateOf,
		Revises:      ev.Revises,
		CreatedAt:    ev.At,
		UpdatedAt:    ev.At,
		Seq:          seq,
		TranscriptID: r.TranscriptID,
		Extractor:    r.Extractor,
	}
	if ev.Quarantine != "" {
		e.State, e.Quarantine = StateQuarantined, ev.Quarantine
	}
	e.QualityScore = f.quality(e.Eval)
	return e, nil
}

// feedback counts one feedback event and keeps its case.
func feedback(e *Entry, ev *Event) {
	if ev.Helpful {
		e.Eval.Helpful++
	} else {
		e.Eval.Harmful++
	}
	if ev.Case == nil {
		return
	}
	c := *ev.Case
	if c.Timestamp.IsZero() {
		c.Timestamp = ev.At
	}
	e.Eval.RecentCases = append(e.Eval.RecentCases, c)
	if n := len(e.Eval.RecentCases); n > MaxRecentCases {
		e.Eval.RecentCases = slices.Clone(e.Eval.RecentCases[n-MaxRecentCases:])
	}
}

func (f Folder) quality(ev Eval) float64 {
	q := f.Quality
	if q == nil {
		q = QualityScore
	}
	v := q(ev.Score, ev.Helpful, ev.Harmful)
	if math.IsNaN(v) {
		return 0
	}
	return min(max(v, 0), 1)
}

// cloneEntry returns a deep copy of e.
func cloneEntry(e *Entry) *Entry {
	c := *e
	c.Types = slices.Clone(e.Types)
	c.Scopes = slices.Clone(e.Scopes)
	c.Source.URLs = slices.Clone(e.Source.URLs)
	c.Eval.RecentCases = slices.Clone(e.Eval.RecentCases)
	c.MergedFrom = slices.Clone(e.MergedFrom)
	return &c
}

// cloneSave returns a deep copy of r.
func cloneSave(r *SaveRequest) *SaveRequest {
	c := *r
	c.Types = slices.Clone(r.Types)
	c.Scopes = slices.Clone(r.Scopes)
	c.Source.URLs = slices.Clone(r.Source.URLs)
	return &c
}
