package kb

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func savedEvent(t testing.TB, r SaveRequest) *Event {
	t.Helper()
	if err := ValidateSave(&r); err != nil {
		t.Fatal(err)
	}
	return &Event{Schema: 1, Type: EventSaved, ID: NewID(&r), At: t0, Save: &r}
}

func feedbackEvent(id string, helpful bool, minute int) *Event {
	return &Event{Schema: 1, Type: EventFeedback, ID: id, At: t0.Add(time.Duration(minute) * time.Minute), Helpful: helpful,
		Case: &Case{Task: "case " + string(rune('a'+minute%26)), Outcome: "done"}}
}

// foldAll folds events at sequences 1, 2, ... and fails on any error.
func foldAll(t testing.TB, f Folder, evs ...*Event) *Entry {
	t.Helper()
	var cur *Entry
	for i, ev := range evs {
		next, err := f.Fold(cur, ev, uint64(i+1))
		if err != nil {
			t.Fatalf("event %d (%s): %v", i+1, ev.Type, err)
		}
		cur = next
	}
	return cur
}

func TestFoldLifecycle(t *testing.T) {
	save := savedEvent(t, validSave())
	id := save.ID
	steps := []struct {
		ev               *Event
		state            string
		helpful, harmful int
		quality          float64
	}{
		{save, StateActive, 0, 0, 0.5},
		{feedbackEvent(id, true, 1), StateActive, 1, 0, 2.5 / 4},
		{feedbackEvent(id, true, 2), StateActive, 2, 0, 3.5 / 5},
		{feedbackEvent(id, true, 3), StateActive, 3, 0, 4.5 / 6},
		{feedbackEvent(id, false, 4), StateActive, 3, 1, 4.5 / 7},
		{&Event{Schema: 1, Type: EventSuperseded, ID: id, At: t0.Add(5 * time.Minute), By: "newer", Reason: "rewritten"}, StateSuperseded, 3, 1, 4.5 / 7},
		{feedbackEvent(id, true, 6), StateSuperseded, 4, 1, 5.5 / 8},
		{&Event{Schema: 1, Type: EventRevoked, ID: id, At: t0.Add(7 * time.Minute), Reason: "wrong advice"}, StateRevoked, 4, 1, 5.5 / 8},
	}
	var cur *Entry
	for i, s := range steps {
		seq := uint64(10 + i)
		next, err := Fold(cur, s.ev, seq)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if next == cur {
			t.Fatalf("step %d (%s) changed nothing", i, s.ev.Type)
		}
		if next.State != s.state || next.Eval.Helpful != s.helpful || next.Eval.Harmful != s.harmful {
			t.Fatalf("step %d: state %s helpful %d harmful %d, want %s %d %d", i, next.State, next.Eval.Helpful, next.Eval.Harmful, s.state, s.helpful, s.harmful)
		}
		if math.Abs(next.QualityScore-s.quality) > 1e-12 {
			t.Errorf("step %d: quality %v, want %v", i, next.QualityScore, s.quality)
		}
		if next.Seq != seq || !next.UpdatedAt.Equal(s.ev.At) {
			t.Errorf("step %d: seq %d updated %v, want %d %v", i, next.Seq, next.UpdatedAt, seq, s.ev.At)
		}
		cur = next
	}
	if cur.SupersededBy != "newer" || cur.StateReason != "wrong advice" || !cur.CreatedAt.Equal(t0) {
		t.Errorf("final record %+v", cur)
	}
	if len(cur.Eval.RecentCases) != 5 || cur.Eval.RecentCases[0].Timestamp.IsZero() {
		t.Errorf("recent cases %+v", cur.Eval.RecentCases)
	}
	// Revoked is terminal.
	for _, ev := range []*Event{
		feedbackEvent(id, true, 9),
		{Schema: 1, Type: EventReleased, ID: id, At: t0},
		{Schema: 1, Type: EventSuperseded, ID: id, At: t0, By: "x"},
		save,
	} {
		if got, err := Fold(cur, ev, 100); err != nil || got != cur {
			t.Errorf("%s on a revoked entry: %v, changed %v", ev.Type, err, got != cur)
		}
	}
}

func TestFoldIdempotent(t *testing.T) {
	save := savedEvent(t, validSave())
	cur, err := Fold(nil, save, 5)
	if err != nil {
		t.Fatal(err)
	}
	fb := feedbackEvent(save.ID, true, 1)
	next, err := Fold(cur, fb, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{6, 5, 1} {
		again, err := Fold(next, fb, seq)
		if err != nil || again != next || again.Eval.Helpful != 1 {
			t.Errorf("re-fold at seq %d: %v, changed %v, helpful %d", seq, err, again != next, again.Eval.Helpful)
		}
	}
	// A redelivered save with a new sequence is an exact duplicate.
	if again, err := Fold(next, save, 7); err != nil || again != next {
		t.Errorf("duplicate save: %v, changed %v", err, again != next)
	}
}

func TestFoldPure(t *testing.T) {
	r := validSave()
	r.Types = []string{" Strategy "}
	ev := &Event{Schema: 1, Type: EventSaved, ID: "abc", At: t0, Save: &r}
	e, err := Fold(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Types[0] != " Strategy " {
		t.Error("fold modified the event's save request")
	}
	e.Scopes[0] = "changed:x"
	if r.Scopes[0] != "org:acme" {
		t.Error("entry shares the scopes slice with the event")
	}
	for i := range MaxRecentCases + 3 {
		next, err := Fold(e, feedbackEvent("abc", i%2 == 0, i), uint64(2+i))
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Eval.RecentCases) != min(i, MaxRecentCases) {
			t.Fatalf("fold modified cur: %d cases", len(e.Eval.RecentCases))
		}
		e = next
	}
	if n := len(e.Eval.RecentCases); n != MaxRecentCases {
		t.Errorf("%d recent cases kept, want %d", n, MaxRecentCases)
	}
	if first := e.Eval.RecentCases[0].Timestamp; !first.Equal(t0.Add(3 * time.Minute)) {
		t.Errorf("oldest kept case at %v, want the 4th", first)
	}
}

func TestFoldTransitions(t *testing.T) {
	base := func(state string) *Entry {
		return &Entry{ID: "abc", State: state, Eval: Eval{Score: 3}, Seq: 1, Quarantine: "prompt injection: x"}
	}
	ev := func(typ string) *Event {
		return &Event{Schema: 1, Type: typ, ID: "abc", At: t0, By: "def", Helpful: true}
	}
	tests := []struct {
		state, event string
		want         string // resulting state; "" means ignored
	}{
		{StateActive, EventFeedback, StateActive},
		{StateActive, EventSuperseded, StateSuperseded},
		{StateActive, EventRevoked, StateRevoked},
		{StateActive, EventReleased, ""},
		{StateQuarantined, EventFeedback, ""},
		{StateQuarantined, EventSuperseded, ""},
		{StateQuarantined, EventRevoked, StateRevoked},
		{StateQuarantined, EventReleased, StateActive},
		{StateSuperseded, EventFeedback, StateSuperseded},
		{StateSuperseded, EventSuperseded, ""},
		{StateSuperseded, EventRevoked, StateRevoked},
		{StateSuperseded, EventReleased, ""},
		{StateRevoked, EventFeedback, ""},
		{StateRevoked, EventRevoked, ""},
	}
	for _, tt := range tests {
		t.Run(tt.state+"/"+tt.event, func(t *testing.T) {
			cur := base(tt.state)
			got, err := Fold(cur, ev(tt.event), 2)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if got != cur {
					t.Errorf("applied, state %s", got.State)
				}
				return
			}
			if got == cur || got.State != tt.want {
				t.Errorf("state %s, want %s", got.State, tt.want)
			}
			if tt.event == EventReleased && got.Quarantine != "" {
				t.Errorf("release kept quarantine reason %q", got.Quarantine)
			}
		})
	}
}

func TestFoldQuarantinedSave(t *testing.T) {
	ev := savedEvent(t, validSave())
	ev.Quarantine = "prompt injection: role tag"
	ev.NearDuplicateOf = "older"
	e, err := Fold(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	if e.State != StateQuarantined || e.Quarantine != ev.Quarantine || e.DuplicateOf != "older" {
		t.Errorf("entry %+v", e)
	}
}

func TestFoldErrors(t *testing.T) {
	good := savedEvent(t, validSave())
	cur, err := Fold(nil, good, 1)
	if err != nil {
		t.Fatal(err)
	}
	bad := validSave()
	bad.Types = []string{"gossip"}
	tests := []struct {
		name string
		cur  *Entry
		ev   *Event
		seq  uint64
		want string
	}{
		{"nil event", nil, nil, 1, "event: missing"},
		{"seq zero", nil, good, 0, "sequence 0"},
		{"newer schema", nil, &Event{Schema: 2, Type: EventSaved, ID: "a", At: t0, Save: good.Save}, 1, "schema"},
		{"no schema", nil, &Event{Type: EventSaved, ID: "a", At: t0, Save: good.Save}, 1, "schema"},
		{"unknown type", nil, &Event{Schema: 1, Type: "deleted", ID: "a", At: t0}, 1, "type"},
		{"bad id", nil, &Event{Schema: 1, Type: EventSaved, ID: "a.b", At: t0, Save: good.Save}, 1, "id"},
		{"no time", nil, &Event{Schema: 1, Type: EventSaved, ID: "a", Save: good.Save}, 1, "at"},
		{"saved without save", nil, &Event{Schema: 1, Type: EventSaved, ID: "a", At: t0}, 1, "save"},
		{"invalid save", nil, &Event{Schema: 1, Type: EventSaved, ID: "a", At: t0, Save: &bad}, 1, "types[0]"},
		{"feedback before save", nil, feedbackEvent("a", true, 1), 1, "does not exist"},
		{"superseded by itself", cur, &Event{Schema: 1, Type: EventSuperseded, ID: cur.ID, At: t0, By: cur.ID}, 2, "superseded_by"},
		{"other entry", cur, feedbackEvent("other", true, 1), 2, "record is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fold(tt.cur, tt.ev, tt.seq)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
			if got != nil {
				t.Errorf("entry returned with the error")
			}
		})
	}
}

// TestFoldReplayRecomputesQuality replays one event log through a Folder
// with another quality formula: every score changes, nothing else does.
func TestFoldReplayRecomputesQuality(t *testing.T) {
	save := savedEvent(t, validSave())
	log := []*Event{save, feedbackEvent(save.ID, true, 1), feedbackEvent(save.ID, true, 2), feedbackEvent(save.ID, false, 3)}
	old := foldAll(t, Folder{}, log...)
	helpfulShare := func(_, h, f int) float64 { return float64(h) / float64(h+f+1) }
	replayed := foldAll(t, Folder{Quality: helpfulShare}, log...)
	if want := 2.0 / 4; replayed.QualityScore != want {
		t.Errorf("replayed quality %v, want %v", replayed.QualityScore, want)
	}
	if old.QualityScore == replayed.QualityScore {
		t.Error("quality did not change with the formula")
	}
	old.QualityScore, replayed.QualityScore = 0, 0
	if !reflect.DeepEqual(old, replayed) {
		t.Errorf("replay changed more than the score:\n%+v\n%+v", old, replayed)
	}
	// A formula out of range or NaN is clamped.
	wild := foldAll(t, Folder{Quality: func(int, int, int) float64 { return math.NaN() }}, log...)
	huge := foldAll(t, Folder{Quality: func(int, int, int) float64 { return 7 }}, log...)
	if wild.QualityScore != 0 || huge.QualityScore != 1 {
		t.Errorf("clamping: NaN → %v, 7 → %v", wild.QualityScore, huge.QualityScore)
	}
}

func TestQualityScore(t *testing.T) {
	t.Run("no feedback is the prior", func(t *testing.T) {
		for score, want := range map[int]float64{1: 0, 2: 0.25, 3: 0.5, 4: 0.75, 5: 1, 0: 0, 9: 1} {
			if got := QualityScore(score, 0, 0); got != want {
				t.Errorf("score %d: %v, want %v", score, got, want)
			}
		}
	})
	t.Run("range and monotonicity", func(t *testing.T) {
		for score := 1; score <= 5; score++ {
			for h := range 30 {
				for f := range 30 {
					q := QualityScore(score, h, f)
					if q < 0 || q > 1 || math.IsNaN(q) {
						t.Fatalf("q(%d,%d,%d) = %v out of [0,1]", score, h, f, q)
					}
					up, down := QualityScore(score, h+1, f), QualityScore(score, h, f+1)
					if up < q || down > q {
						t.Fatalf("q(%d,%d,%d) = %v: helpful → %v, harmful → %v", score, h, f, q, up, down)
					}
					if (q < 1 && up <= q) || (q > 0 && down >= q) {
						t.Fatalf("q(%d,%d,%d) = %v not strictly monotone: %v, %v", score, h, f, q, up, down)
					}
					if score < 5 && QualityScore(score+1, h, f) <= q {
						t.Fatalf("a higher author score does not raise q(%d,%d,%d)", score, h, f)
					}
				}
			}
		}
	})
	t.Run("evidence outweighs the author", func(t *testing.T) {
		if QualityScore(5, 0, 10) >= 0.25 {
			t.Errorf("ten harmful reports leave a score-5 entry at %v", QualityScore(5, 0, 10))
		}
		if QualityScore(1, 10, 0) <= 0.75 {
			t.Errorf("ten helpful reports leave a score-1 entry at %v", QualityScore(1, 10, 0))
		}
		if QualityScore(3, 1, 0) >= QualityScore(3, 20, 1) {
			t.Error("one helpful vote beats 20 of 21")
		}
	})
}
