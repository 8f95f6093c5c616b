package extractor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/transcript"
)

// fixed is an extractor that returns the same candidates or error.
type fixed struct {
	cands []Candidate
	err   error
	max   int // the max it was called with
}

func (*fixed) Name() string    { return "fixed" }
func (*fixed) Version() string { return "0" }
func (f *fixed) Extract(_ context.Context, _ *transcript.Transcript, max int) ([]Candidate, error) {
	f.max = max
	return f.cands, f.err
}

// readTestdata returns the bytes of a testdata transcript.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPipelineRules(t *testing.T) {
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{}), NewRules())
	if err != nil {
		t.Fatal(err)
	}
	tr, id, err := p.Intake().Prepare(readTestdata(t, "pnpm_preference"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Messages {
		if m.Role == transcript.RoleSystem {
			t.Error("Prepare kept the system message")
		}
	}
	res, err := p.Extract(context.Background(), tr, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Requests) != 1 || len(res.Dropped) != 0 {
		t.Fatalf("requests %+v, dropped %v", res.Requests, res.Dropped)
	}
	r := res.Requests[0]
	if r.TranscriptID != id || r.Extractor != "rules@1" {
		t.Errorf("lineage: transcript %q extractor %q", r.TranscriptID, r.Extractor)
	}
	if src := r.Source; src.Category != SourceCategory || src.AgentID != "coder" || src.SubmittedBy != "maria" || src.Name != "" || src.URLs != nil {
		t.Errorf("source: %+v", r.Source)
	}
	if err := kb.ValidateSave(&r); err != nil {
		t.Errorf("request does not validate: %v", err)
	}
	if !strings.Contains(r.Content, "Always use pnpm") {
		t.Errorf("content: %q", r.Content)
	}
}

func TestPipelineDedupeID(t *testing.T) {
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{}), NewRules())
	if err != nil {
		t.Fatal(err)
	}
	data := readTestdata(t, "privacy_strict")
	_, id1, err := p.Intake().Prepare(data)
	if err != nil {
		t.Fatal(err)
	}
	again := strings.Replace(string(data), `"trigger": "before_compaction"`, `"trigger": "session_end"`, 1)
	if again == string(data) {
		t.Fatal("the trigger was not replaced")
	}
	_, id2, err := p.Intake().Prepare([]byte(again))
	if err != nil {
		t.Fatal(err)
	}
	if id1 != id2 {
		t.Errorf("the same transcript sent twice got ids %s and %s", id1, id2)
	}
	// A stored sanitized transcript, prepared again (a replay), keeps its id.
	tr, _, err := p.Intake().Prepare(data)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, id, err := p.Intake().Prepare(stored); err != nil || id != id1 {
		t.Errorf("replayed transcript: id %s, err %v; want %s", id, err, id1)
	}
	_, id3, err := p.Intake().Prepare(readTestdata(t, "chitchat"))
	if err != nil {
		t.Fatal(err)
	}
	if id3 == id1 {
		t.Error("different transcripts share an id")
	}
}

func TestPipelineRejectsMalformed(t *testing.T) {
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{Limits: transcript.Limits{MaxBytes: 1024}}), NewRules())
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{readTestdata(t, "deploy_plan"), []byte(`{"messages":[{"role":"bot"}],"trigger":"agent_end"}`)} {
		tr, id, err := p.Intake().Prepare(data)
		if !errors.Is(err, transcript.ErrInvalid) || tr != nil || id != "" {
			t.Errorf("Prepare = %v, %q, %v; want transcript.ErrInvalid and nothing else", tr, id, err)
		}
	}
}

func TestPipelineChecksCandidates(t *testing.T) {
	ok := func(task, content string) Candidate {
		return Candidate{Task: task, Content: content, Types: []string{"tool"}, Score: 3}
	}
	x := &fixed{cands: []Candidate{
		ok("Sending mail", "Write to alice@example.com about it."),
		{Task: "No types", Content: "x", Score: 3},
		ok("Duplicate", "write to  ALICE@example.com about it"),
		{Task: "Bad score", Content: "y", Types: []string{"plan"}, Score: 9},
		ok("Second", "Run `make` twice."),
		ok("Third", "Over the limit."),
	}}
	p, err := NewPipeline(Config{MaxEntries: 2}, newTestIntake(t, transcript.Config{}), x)
	if err != nil {
		t.Fatal(err)
	}
	tr, id, err := p.Intake().Prepare(readTestdata(t, "chitchat"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Extract(context.Background(), tr, id)
	if err != nil {
		t.Fatal(err)
	}
	if x.max != 2 {
		t.Errorf("extractor called with max %d, want 2", x.max)
	}
	var contents []string
	for _, r := range res.Requests {
		contents = append(contents, r.Content)
		if r.Extractor != "fixed@0" || r.TranscriptID != id {
			t.Errorf("lineage: %+v", r)
		}
	}
	if want := []string{"Write to [email] about it.", "Run `make` twice."}; strings.Join(contents, "|") != strings.Join(want, "|") {
		t.Errorf("contents = %q, want %q", contents, want)
	}
	var reasons []string
	for _, e := range res.Dropped {
		reasons = append(reasons, e.Error())
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"candidate 1: types", "candidate 2: duplicate", "candidate 3: score", "candidate 5: over the limit"} {
		if !strings.Contains(all, want) {
			t.Errorf("dropped reasons lack %q:\n%s", want, all)
		}
	}
}

func TestPipelineExtractorError(t *testing.T) {
	boom := errors.New("model unreachable")
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{}), &fixed{err: boom})
	if err != nil {
		t.Fatal(err)
	}
	tr, id, err := p.Intake().Prepare(readTestdata(t, "chitchat"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Extract(context.Background(), tr, id)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "extract with fixed@0") {
		t.Errorf("err = %v", err)
	}
}

func TestPipelineLLM(t *testing.T) {
	s := newChatServer(t, replyWith(`{"entries":[{"task":"Deploying billing","content":"Ask dana@acme-corp.com before deploying.","types":["plan","usecase"],"score":4}]}`))
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{}), newTestLLM(t, s, ""))
	if err != nil {
		t.Fatal(err)
	}
	tr, id, err := p.Intake().Prepare(readTestdata(t, "deploy_plan"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Extract(context.Background(), tr, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Requests) != 1 {
		t.Fatalf("requests: %+v, dropped %v", res.Requests, res.Dropped)
	}
	r := res.Requests[0]
	if r.Content != "Ask [email] before deploying." || r.Extractor != "llm@1+qwen2.5-coder:7b" || r.TranscriptID != id {
		t.Errorf("request: %+v", r)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"zero is valid", Config{}, nil},
		{"five", Config{MaxEntries: 5}, nil},
		{"too many", Config{MaxEntries: 99}, []string{"maxEntries: 99"}},
		{"negative", Config{MaxEntries: -1}, []string{"maxEntries: -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != (c.want == nil) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := NewPipeline(Config{MaxEntries: -1}, newTestIntake(t, transcript.Config{}), NewRules()); err == nil {
		t.Error("NewPipeline accepted an invalid config")
	}
	if _, err := NewPipeline(Config{}, nil, NewRules()); err == nil {
		t.Error("NewPipeline accepted a nil intake")
	}
}

func TestRulesCap(t *testing.T) {
	san := newTestSanitizer(t)
	tr := loadTranscript(t, san, "busy_session")
	for _, c := range []struct{ max, want int }{{1, 1}, {2, 2}, {0, DefaultMaxEntries}, {10, 4}} {
		got, err := NewRules().Extract(context.Background(), tr, c.max)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.want {
			t.Errorf("max %d: %d candidates, want %d", c.max, len(got), c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRules().Extract(ctx, tr, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: err = %v", err)
	}
}
