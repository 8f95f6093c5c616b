package contract

import (
	"slices"
	"testing"
)

func TestLearnedRecordFold(t *testing.T) {
	add := func(tid string, heading []string, words ...string) *LearnedEvent {
		return &LearnedEvent{Schema: SchemaVersion, Op: LearnedAdd, TranscriptID: tid, Repo: "r", Path: "a.md", HeadingPath: heading, Words: words}
	}
	rotate, other := []string{"Keys", "Rotate"}, []string{"Keys"}
	var r LearnedRecord
	if !r.Apply(add("t1", rotate, "renew", "credentials")) || !r.Apply(add("t2", rotate, "renew")) || !r.Apply(add("t1", other, "keys")) {
		t.Fatal("new words changed nothing")
	}
	if r.Apply(add("t1", rotate, "renew", "credentials")) {
		t.Error("a repeated event changed the record")
	}
	if got := r.Words(rotate); !slices.Equal(got, []string{"renew", "credentials", "renew"}) {
		t.Errorf("words %q", got)
	}
	if !r.Taught("t1") || r.Taught("t3") {
		t.Error("Taught")
	}
	revoke := &LearnedEvent{Schema: SchemaVersion, Op: LearnedRevoke, TranscriptID: "t1", Repo: "r", Path: "a.md"}
	if !r.Apply(revoke) || r.Taught("t1") || !slices.Equal(r.Words(rotate), []string{"renew"}) || r.Words(other) != nil {
		t.Errorf("after revoking t1: %+v", r)
	}
	if r.Apply(add("t1", rotate, "again")) || r.Apply(revoke) {
		t.Error("a revoked transcript taught again")
	}
	var none *LearnedRecord
	if none.Words(rotate) != nil {
		t.Error("a nil record has words")
	}
}

func TestLearnedEventCheck(t *testing.T) {
	good := LearnedEvent{Schema: SchemaVersion, Op: LearnedAdd, TranscriptID: "t", Repo: "r", Path: "a.md", Words: []string{"renew"}}
	subject := LearnedSubject("r", "a.md")
	if err := good.Check(subject); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*LearnedEvent){
		"newer schema":  func(e *LearnedEvent) { e.Schema = SchemaVersion + 1 },
		"unknown op":    func(e *LearnedEvent) { e.Op = "forget" },
		"no transcript": func(e *LearnedEvent) { e.TranscriptID = "" },
		"bad repo":      func(e *LearnedEvent) { e.Repo = "a.b" },
		"bad path":      func(e *LearnedEvent) { e.Path = "../x.md" },
		"other subject": func(e *LearnedEvent) { e.Path = "b.md" },
		"no words":      func(e *LearnedEvent) { e.Words = nil },
		"long word":     func(e *LearnedEvent) { e.Words = []string{"abcdefghijklmnopqrstuvwxyz"} },
		"many words":    func(e *LearnedEvent) { e.Words = make([]string, MaxLearnedWords+1) },
		"many headings": func(e *LearnedEvent) { e.HeadingPath = make([]string, MaxLearnedHeadings+1) },
		"long heading":  func(e *LearnedEvent) { e.HeadingPath = []string{string(make([]byte, MaxLearnedHeading+1))} },
	} {
		e := good
		mutate(&e)
		if e.Check(subject) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
