package kb

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
)

// Evolution actions, as KBEvolution.Action reports them.
const (
	EvolvedRetired = "retired"
	EvolvedMerged  = "merged"
	EvolvedRevised = "revised"
)

// Rules are knowledge evolution's rule-based defaults: what feedback makes
// an entry leave search, and how linked near duplicates are merged. Each
// rule's outcome is a KH_KNOWLEDGE event, so a replay of the stream gives
// the same records, and every outcome shows in the review queue or the
// entry's history (Revises, MergedFrom, SupersededBy, StateReason).
type Rules struct {
	// RetireHarmful is how many harmful votes an entry needs before it
	// can be retired; RetireRatio how many harmful votes it needs per
	// helpful one. Both must hold: one bad report never retires an entry
	// that helped many times, and three early reports retire one that
	// never helped.
	RetireHarmful int
	RetireRatio   float64
	// ReviseHarmful is how many harmful votes make an entry that also
	// helped, and is not retired, partly right (PartlyRight): the
	// optional model step of evolution asks for a revision of it. Zero
	// turns it off. The rules alone never rewrite an entry.
	ReviseHarmful int
}

// DefaultRules retire an entry at three harmful votes once harmful votes
// are at least twice the helpful ones, and call an entry with two harmful
// votes and at least one helpful one partly right.
var DefaultRules = Rules{RetireHarmful: 3, RetireRatio: 2, ReviseHarmful: 2}

// PartlyRight reports whether agents found e partly right: an active entry
// with mixed feedback, at least ReviseHarmful harmful votes and one
// helpful. Call it for an entry that Retire left active.
func (r Rules) PartlyRight(e *Entry) bool {
	return e != nil && e.State == StateActive && r.ReviseHarmful > 0 &&
		e.Eval.Harmful >= r.ReviseHarmful && e.Eval.Helpful >= 1
}

// Retire returns the retired event for e when its feedback calls for it,
// else nil. Only an active entry is retired.
func (r Rules) Retire(e *Entry, at time.Time) *Event {
	if e == nil || e.State != StateActive || r.RetireHarmful <= 0 {
		return nil
	}
	h, f := e.Eval.Helpful, e.Eval.Harmful
	if f < r.RetireHarmful || float64(f) < r.RetireRatio*float64(h) {
		return nil
	}
	return &Event{Schema: contract.SchemaVersion, Type: EventRetired, ID: e.ID, At: at,
		Reason: fmt.Sprintf("retired by feedback: %d harmful against %d helpful", f, h)}
}

// Merge plans the merge of two active near duplicates: the survivor is the
// one of higher quality (then the older, then the smaller id). It absorbs
// the other's feedback (a merged event: its counts add to the survivor's)
// and the other is superseded by it, so that search serves one entry that
// carries what agents said of both. ok is false when the two may not be
// merged: not both active, or seen by different scopes.
func Merge(a, b *Entry, at time.Time) (survivor, absorbed *Entry, events []*Event, ok bool) {
	if a == nil || b == nil || a.ID == b.ID || a.State != StateActive || b.State != StateActive ||
		!sameScopes(a.Scopes, b.Scopes) {
		return nil, nil, nil, false
	}
	survivor, absorbed = a, b
	if c := cmp.Or(cmp.Compare(b.QualityScore, a.QualityScore), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(b.ID, a.ID)); c > 0 {
		survivor, absorbed = b, a
	}
	events = []*Event{
		{Schema: contract.SchemaVersion, Type: EventMerged, ID: survivor.ID, At: at,
			Merged: &MergeCounts{From: absorbed.ID, Helpful: absorbed.Eval.Helpful, Harmful: absorbed.Eval.Harmful},
			Reason: "near duplicate " + absorbed.ID + " merged in"},
		{Schema: contract.SchemaVersion, Type: EventSuperseded, ID: absorbed.ID, At: at, By: survivor.ID,
			Reason: "merged into its near duplicate " + survivor.ID},
	}
	return survivor, absorbed, events, true
}

func sameScopes(a, b []string) bool {
	sa, sb := scopeSet(a), scopeSet(b)
	if len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}

// ErrNothingRevised is returned for a revision that leaves the entry as it
// is.
var ErrNothingRevised = errors.New("the revision changes nothing")

// PlanRevision plans kb.update revise on cur, an entry that agents found
// partly right: a saved event for the revised entry (cur's task unless
// req gives one, its types, scopes, owner, source, author score and
// lineage, and req's content) that Revises cur, then a superseded event
// for cur. A revision that screening flags is saved quarantined and
// supersedes nothing until review releases it, as a flagged save does. Only
// an active or retired entry is revised.
func PlanRevision(cur *Entry, req *UpdateRequest, screen *Screen, at time.Time) (*Plan, error) {
	if cur.State != StateActive && cur.State != StateRetired {
		return nil, fmt.Errorf("entry %s is %s: only an active or retired entry is revised", cur.ID, cur.State)
	}
	if screen == nil {
		return nil, errors.New("plan revision: no screen")
	}
	r := &SaveRequest{
		Task:         cmp.Or(req.Task, cur.Task),
		Content:      req.Content,
		Types:        cloneStrings(cur.Types),
		Score:        cur.Eval.Score,
		Scopes:       cloneStrings(cur.Scopes),
		Owner:        cur.Owner,
		Source:       cur.Source,
		TranscriptID: cur.TranscriptID,
		Extractor:    cur.Extractor,
	}
	r.Source.URLs = cloneStrings(cur.Source.URLs)
	if err := ValidateSave(r); err != nil {
		return nil, fmt.Errorf("plan revision: %w", err)
	}
	id := NewID(r)
	if id == cur.ID || (r.Task == cur.Task && r.Content == cur.Content) {
		return nil, ErrNothingRevised
	}
	reason, flagged := screen.CheckSave(r)
	p := &Plan{ID: id, Quarantine: reason, Events: []*Event{{
		Schema: contract.SchemaVersion, Type: EventSaved, ID: id, At: at, Save: r, Quarantine: reason, Revises: cur.ID,
	}}}
	if !flagged {
		why := "revised"
		if req.Reason != "" {
			why += ": " + req.Reason
		}
		p.Events = append(p.Events, &Event{Schema: contract.SchemaVersion, Type: EventSuperseded, ID: cur.ID, At: at, By: id, Reason: why})
	}
	return p, nil
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
