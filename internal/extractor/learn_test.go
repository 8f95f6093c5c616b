package extractor

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/transcript"
)

// TestPipelineLearn: a search whose section the agent ran yields one
// learned event with the query's plain words, the address and token in the
// query sanitized away; with vocabulary off it yields none.
func TestPipelineLearn(t *testing.T) {
	input, _ := json.Marshal(map[string]string{"query": "renew expired credentials ghp_R8x2kQ9vLm3nP7wZ4tY6uB1cD5eF0gH2iJ4k bob@example.org"})
	cmd, _ := json.Marshal(map[string]string{"command": "knowhub keys rotate --grace 24h"})
	tr := &transcript.Transcript{Trigger: transcript.TriggerAgentEnd, Messages: []transcript.Message{
		{Role: transcript.RoleAssistant, Content: []transcript.Part{{Type: transcript.PartToolCall, ID: "c1", Name: "search_docs", Input: input}}},
		{Role: transcript.RoleTool, Content: []transcript.Part{{Type: transcript.PartToolResult, ID: "c1",
			Output: "[1] ops:keys.md § Keys > Rotate (score 3.00)\n```sh\nknowhub keys rotate --grace 24h\n```"}}},
		{Role: transcript.RoleAssistant, Content: []transcript.Part{{Type: transcript.PartToolCall, ID: "c2", Name: "exec", Input: cmd}}},
	}}
	p, err := NewPipeline(Config{}, newTestIntake(t, transcript.Config{}), NewRules())
	if err != nil {
		t.Fatal(err)
	}
	evs := p.Learn(tr, "t1")
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	ev := evs[0]
	if ev.Op != contract.LearnedAdd || ev.Repo != "ops" || ev.Path != "keys.md" || !slices.Equal(ev.HeadingPath, []string{"Keys", "Rotate"}) ||
		!slices.Equal(ev.Words, []string{"renew", "expired", "credentials"}) || ev.How != "ran" || ev.TranscriptID != "t1" {
		t.Errorf("event %+v", ev)
	}
	if err := ev.Check(contract.LearnedSubject("ops", "keys.md")); err != nil {
		t.Error(err)
	}
	off := false
	p, err = NewPipeline(Config{Vocabulary: &off}, newTestIntake(t, transcript.Config{}), NewRules())
	if err != nil {
		t.Fatal(err)
	}
	if evs := p.Learn(tr, "t1"); evs != nil {
		t.Errorf("vocabulary off, events %+v", evs)
	}
}
