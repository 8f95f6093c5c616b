package kb

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func validSave() SaveRequest {
	return SaveRequest{
		Task:    "Run the Go test suite in CI",
		Content: "Use go test -race ./... with GOFLAGS=-mod=readonly so that a stale go.sum fails the build instead of being rewritten.",
		Types:   []string{"strategy"},
		Scopes:  []string{"org:acme"},
		Owner:   "agent:coder",
		Source:  Source{Name: "ci-notes", URLs: []string{"https://go.dev/ref/mod"}},
	}
}

// wantProblems asserts that err lists exactly the fields in want, each
// once, as the prefix of a line.
func wantProblems(t testing.TB, err error, want ...string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want problems with %v", want)
	}
	lines := strings.Split(err.Error(), "\n")
	var got []string
	for _, l := range lines {
		field, _, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("problem %q does not name its field", l)
		}
		if l != strings.ToLower(l[:1])+l[1:] {
			t.Errorf("problem %q does not start lower-case", l)
		}
		got = append(got, field)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems with %v, want %v\n%v", got, want, err)
	}
}

func TestValidateSave(t *testing.T) {
	tests := []struct {
		name   string
		modify func(r *SaveRequest)
		want   []string
	}{
		{"valid", func(r *SaveRequest) {}, nil},
		{"no scopes is valid (public)", func(r *SaveRequest) { r.Scopes = nil }, nil},
		{"task required", func(r *SaveRequest) { r.Task = " \n" }, []string{"task"}},
		{"task too long", func(r *SaveRequest) { r.Task = strings.Repeat("a", MaxTaskBytes+1) }, []string{"task"}},
		{"content required", func(r *SaveRequest) { r.Content = "" }, []string{"content"}},
		{"content too long", func(r *SaveRequest) { r.Content = strings.Repeat("a", MaxContentBytes+1) }, []string{"content"}},
		{"content invalid utf8", func(r *SaveRequest) { r.Content = "ok \xff" }, []string{"content"}},
		{"content with NUL", func(r *SaveRequest) { r.Content = "a\x00b" }, []string{"content"}},
		{"types required", func(r *SaveRequest) { r.Types = nil }, []string{"types"}},
		{"unknown type", func(r *SaveRequest) { r.Types = []string{"strategy", "gossip"} }, []string{"types[1]"}},
		{"too many types", func(r *SaveRequest) { r.Types = append(KnownTypes(), "plan") }, []string{"types"}},
		{"score too high", func(r *SaveRequest) { r.Score = 6 }, []string{"score"}},
		{"score negative", func(r *SaveRequest) { r.Score = -1 }, []string{"score"}},
		{"bad scope", func(r *SaveRequest) { r.Scopes = []string{"org:acme", "acme", "Org:x", "org:a b"} }, []string{"scopes[1]", "scopes[2]", "scopes[3]"}},
		{"too many scopes", func(r *SaveRequest) {
			r.Scopes = nil
			for i := range MaxScopes + 1 {
				r.Scopes = append(r.Scopes, "agent:a"+strings.Repeat("x", i))
			}
		}, []string{"scopes"}},
		{"long scope", func(r *SaveRequest) { r.Scopes = []string{"org:" + strings.Repeat("a", MaxScopeBytes)} }, []string{"scopes[0]"}},
		{"bad urls", func(r *SaveRequest) {
			r.Source.URLs = []string{"https://ok.example/x", "ftp://x.example", "/relative", "javascript:alert(1)"}
		}, []string{"source.urls[1]", "source.urls[2]", "source.urls[3]"}},
		{"too many urls", func(r *SaveRequest) {
			r.Source.URLs = slices.Repeat([]string{"https://x.example"}, MaxURLs+1)
		}, []string{"source.urls"}},
		{"long source fields", func(r *SaveRequest) {
			long := strings.Repeat("x", MaxFieldBytes+1)
			r.Owner, r.Source.Name, r.Source.AgentID, r.TranscriptID = long, long, long, long
		}, []string{"owner", "source.name", "source.agent_id", "transcript_id"}},
		{"every problem at once", func(r *SaveRequest) {
			*r = SaveRequest{Score: 9, Types: []string{"x"}, Scopes: []string{"bad"}, Source: Source{URLs: []string{"nope"}}}
		}, []string{"task", "content", "types[0]", "score", "scopes[0]", "source.urls[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validSave()
			tt.modify(&r)
			wantProblems(t, ValidateSave(&r), tt.want...)
		})
	}
}

func TestValidateSaveNormalizes(t *testing.T) {
	r := validSave()
	r.Score = 0
	r.Types = []string{" Strategy", "TOOL ", "strategy"}
	r.Scopes = []string{"org:acme", " agent:coder", "org:acme"}
	if err := ValidateSave(&r); err != nil {
		t.Fatal(err)
	}
	if r.Score != DefaultScore {
		t.Errorf("score %d, want default %d", r.Score, DefaultScore)
	}
	if want := []string{"strategy", "tool"}; !slices.Equal(r.Types, want) {
		t.Errorf("types %q, want %q", r.Types, want)
	}
	if want := []string{"org:acme", "agent:coder"}; !slices.Equal(r.Scopes, want) {
		t.Errorf("scopes %q, want %q", r.Scopes, want)
	}
	if err := ValidateSave(nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestValidateSaveTypeAliases(t *testing.T) {
	r := validSave()
	r.Types = []string{"best-practice", "Solution", "strategy", "best_practice"}
	if err := ValidateSave(&r); err != nil {
		t.Fatal(err)
	}
	if want := []string{"strategy", "usecase"}; !slices.Equal(r.Types, want) {
		t.Errorf("types %q, want %q", r.Types, want)
	}
	r = validSave()
	r.Types = []string{"lesson"}
	err := ValidateSave(&r)
	if err == nil || !strings.Contains(err.Error(), `"lesson" is not a known type`) {
		t.Errorf("unknown type: %v", err)
	}
	r = validSave()
	r.Score = -1
	if err := ValidateSave(&r); err == nil || !strings.Contains(err.Error(), "score") {
		t.Errorf("score -1: %v", err)
	}
}

func TestValidateUpdate(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		r    UpdateRequest
		want []string
	}{
		{"feedback", UpdateRequest{ID: "abc", Action: ActionFeedback, Helpful: &yes, Case: &Case{Task: "t", Outcome: "ok"}}, nil},
		{"feedback needs helpful", UpdateRequest{ID: "abc", Action: ActionFeedback}, []string{"helpful"}},
		{"supersede", UpdateRequest{ID: "abc", Action: ActionSupersede, By: "def"}, nil},
		{"supersede needs by", UpdateRequest{ID: "abc", Action: ActionSupersede}, []string{"superseded_by"}},
		{"supersede self", UpdateRequest{ID: "abc", Action: ActionSupersede, By: "abc"}, []string{"superseded_by"}},
		{"revoke", UpdateRequest{ID: "abc", Action: ActionRevoke, Reason: "wrong"}, nil},
		{"release", UpdateRequest{ID: "abc", Action: ActionRelease}, nil},
		{"bad id and action", UpdateRequest{ID: "a.b", Action: "delete"}, []string{"id", "action"}},
		{"case only on feedback", UpdateRequest{ID: "abc", Action: ActionRevoke, Case: &Case{}}, []string{"case"}},
		{"long case", UpdateRequest{ID: "abc", Action: ActionFeedback, Helpful: &yes, Case: &Case{Outcome: strings.Repeat("x", MaxFieldBytes+1)}}, []string{"case.outcome"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblems(t, ValidateUpdate(&tt.r), tt.want...)
		})
	}
}

func TestUpdateEvent(t *testing.T) {
	no := false
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		r    UpdateRequest
		want Event
	}{
		{UpdateRequest{ID: "a", Action: ActionFeedback, Helpful: &no, Case: &Case{Task: "t"}},
			Event{Schema: 1, Type: EventFeedback, ID: "a", At: at, Case: &Case{Task: "t"}}},
		{UpdateRequest{ID: "a", Action: ActionSupersede, By: "b", Reason: "r"},
			Event{Schema: 1, Type: EventSuperseded, ID: "a", At: at, By: "b", Reason: "r"}},
		{UpdateRequest{ID: "a", Action: ActionRevoke}, Event{Schema: 1, Type: EventRevoked, ID: "a", At: at}},
		{UpdateRequest{ID: "a", Action: ActionRelease}, Event{Schema: 1, Type: EventReleased, ID: "a", At: at}},
	}
	for _, tt := range tests {
		t.Run(tt.r.Action, func(t *testing.T) {
			got := UpdateEvent(&tt.r, at)
			if err := ValidateEvent(got); err != nil {
				t.Fatalf("event invalid: %v", err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Errorf("event %s\nwant  %s", g, w)
			}
		})
	}
}

func TestValidateSearch(t *testing.T) {
	tests := []struct {
		name string
		r    SearchRequest
		want []string
	}{
		{"minimal", SearchRequest{Query: "go test flags"}, nil},
		{"full", SearchRequest{Query: "q", Limit: 50, Types: []string{"Tool"}, Scopes: []string{"org:acme"}, MinScore: 4, Format: OutputPrompt}, nil},
		{"query required", SearchRequest{}, []string{"query"}},
		{"every problem", SearchRequest{Query: strings.Repeat("q", MaxQueryBytes+1), Limit: 51, Types: []string{"nope"}, Scopes: []string{"x"}, MinScore: 6, Format: "xml"},
			[]string{"query", "limit", "types[0]", "scopes[0]", "min_score", "format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblems(t, ValidateSearch(&tt.r), tt.want...)
		})
	}
	r := SearchRequest{Query: "q", Types: []string{" TOOL"}}
	if err := ValidateSearch(&r); err != nil {
		t.Fatal(err)
	}
	if r.Limit != DefaultLimit || r.Format != OutputJSON || !slices.Equal(r.Types, []string{"tool"}) {
		t.Errorf("not normalized: %+v", r)
	}
}

func TestEntryJSON(t *testing.T) {
	e := Entry{ID: "x", Source: Source{AgentID: "a", SubmittedBy: "s", MessageID: "m"}, Eval: Eval{RecentCases: []Case{{Task: "t"}}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"agent_id":"a"`, `"submitted_by":"s"`, `"message_id":"m"`, `"recent_cases":[`, `"quality_score":0`, `"seq":0`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s missing %s", b, key)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add("task", "content", "strategy", 3, "org:acme", "https://x.example")
	f.Add("", "", "", 0, "", "")
	f.Add("\xff", "a\x00", " TOOL ", -7, "Org:", "javascript:x")
	f.Fuzz(func(t *testing.T, task, content, typ string, score int, scope, u string) {
		r := SaveRequest{Task: task, Content: content, Types: []string{typ, typ}, Score: score, Scopes: []string{scope}, Source: Source{URLs: []string{u}}}
		if ValidateSave(&r) != nil {
			return
		}
		if r.Score < MinScore || r.Score > MaxScore || len(r.Types) != 1 {
			t.Fatalf("accepted request not normalized: %+v", r)
		}
		// A valid request must fold into an entry.
		ev := &Event{Schema: 1, Type: EventSaved, ID: NewID(&r), At: time.Unix(1, 0), Save: &r}
		if _, err := Fold(nil, ev, 1); err != nil {
			t.Fatalf("valid save does not fold: %v", err)
		}
		_ = ValidateSearch(&SearchRequest{Query: task, Types: []string{typ}, Scopes: []string{scope}, MinScore: float64(score)})
	})
}
