package transcript

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/redact"
)

// doc wraps messages in an intake payload with the agent_end trigger.
func doc(messages string) string {
	return `{"messages":` + messages + `,"agent_id":"coder","submitted_by":"sam","session_key":"s1","trigger":"agent_end"}`
}

func TestParseShapes(t *testing.T) {
	cases := []struct {
		name     string
		messages string
		want     []Message
	}{
		{
			name:     "content string",
			messages: `[{"role":"user","content":"hello","timestamp":1}]`,
			want:     []Message{{Role: RoleUser, Content: []Part{{Type: PartText, Text: "hello"}}}},
		},
		{
			name: "openclaw tool call and toolResult message",
			messages: `[{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Running."},
				{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"npm test"}}],"usage":{"input":1},"stopReason":"toolUse"},
				{"role":"toolResult","toolCallId":"c1","toolName":"exec","content":[{"type":"text","text":"ok"},{"type":"image","data":"AAA","mimeType":"image/png"}],"isError":true}]`,
			want: []Message{
				{Role: RoleAssistant, Content: []Part{
					{Type: PartText, Text: "Running."},
					{Type: PartToolCall, ID: "c1", Name: "exec", Input: json.RawMessage(`{"command":"npm test"}`)},
				}},
				{Role: RoleTool, Content: []Part{{Type: PartToolResult, ID: "c1", Name: "exec", Output: "ok", IsError: true}}},
			},
		},
		{
			name: "anthropic tool_use and tool_result in a user message",
			messages: `[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a\nb"}],"is_error":false}]}]`,
			want: []Message{
				{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}},
				{Role: RoleUser, Content: []Part{{Type: PartToolResult, ID: "t1", Output: "a\nb"}}},
			},
		},
		{
			name: "openai tool_calls with string arguments and a tool message",
			messages: `[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\": \"make\"}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"done"}]`,
			want: []Message{
				{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, ID: "call_1", Name: "bash", Input: json.RawMessage(`{"command":"make"}`)}}},
				{Role: RoleTool, Content: []Part{{Type: PartToolResult, ID: "call_1", Output: "done"}}},
			},
		},
		{
			name: "responses-style function_call and output",
			messages: `[{"role":"assistant","content":[{"type":"function_call","call_id":"f1","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"]}"}]},
				{"role":"tool","content":[{"type":"function_call_output","call_id":"f1","output":"Exit code: 0"}]},
				{"role":"user","content":[{"type":"input_text","text":"thanks"}]}]`,
			want: []Message{
				{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, ID: "f1", Name: "shell", Input: json.RawMessage(`{"command":["bash","-lc","go test ./..."]}`)}}},
				{Role: RoleTool, Content: []Part{{Type: PartToolResult, ID: "f1", Output: "Exit code: 0"}}},
				{Role: RoleUser, Content: []Part{{Type: PartText, Text: "thanks"}}},
			},
		},
		{
			name: "role aliases and arguments that are not JSON",
			messages: `[{"role":"Developer","content":"rules"},{"role":"tool_result","content":"x"},{"role":"function","name":"f","content":"y"},
				{"role":"assistant","content":[{"type":"tool_call","name":"t","arguments":"not json"}]}]`,
			want: []Message{
				{Role: RoleDeveloper, Content: []Part{{Type: PartText, Text: "rules"}}},
				{Role: RoleTool, Content: []Part{{Type: PartToolResult, Output: "x"}}},
				{Role: RoleTool, Content: []Part{{Type: PartToolResult, Name: "f", Output: "y"}}},
				{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, Name: "t", Input: json.RawMessage(`"not json"`)}}},
			},
		},
		{
			name:     "object tool output and empty content",
			messages: `[{"role":"user","content":""},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":{"rows":2}}]}]`,
			want: []Message{
				{Role: RoleUser},
				{Role: RoleUser, Content: []Part{{Type: PartToolResult, ID: "x", Output: `{"rows":2}`}}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Parse([]byte(doc(c.messages)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(tr.Messages)
			want, _ := json.Marshal(c.want)
			if string(got) != string(want) {
				t.Errorf("messages:\n got %s\nwant %s", got, want)
			}
			if tr.AgentID != "coder" || tr.SubmittedBy != "sam" || tr.SessionKey != "s1" || tr.Trigger != TriggerAgentEnd {
				t.Errorf("metadata: %+v", tr)
			}
		})
	}
}

func TestParseRoundTrip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "roundtrip.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Parse(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(enc, Limits{})
	if err != nil {
		t.Fatalf("parse own encoding: %v\n%s", err, enc)
	}
	if ID(again) != ID(tr) {
		t.Error("a parsed transcript does not round-trip")
	}
}

func TestParseErrors(t *testing.T) {
	msg := `[{"role":"user","content":"hi"}]`
	cases := []struct {
		name    string
		data    string
		limits  Limits
		want    string
		tooLong bool
	}{
		{"too large", doc(msg), Limits{MaxBytes: 40}, "bytes, the limit is 40", true},
		{"too many messages", doc(`[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}]`), Limits{MaxMessages: 2}, "3 messages, the limit is 2", true},
		{"invalid utf-8", doc(`[{"role":"user","content":"caf` + "\xe9" + `"}]`), Limits{}, "not valid UTF-8 at byte", false},
		{"not json", `{"messages":[`, Limits{}, "decode", false},
		{"trailing data", doc(msg) + `{}`, Limits{}, "decode", false},
		{"array at the top", `[` + doc(msg) + `]`, Limits{}, "decode", false},
		{"missing messages", `{"trigger":"agent_end"}`, Limits{}, "no messages", false},
		{"null messages", `{"messages":null,"trigger":"agent_end"}`, Limits{}, "no messages", false},
		{"empty messages", doc(`[]`), Limits{}, "no messages", false},
		{"messages not an array", doc(`"hi"`), Limits{}, "messages must be an array", false},
		{"unknown trigger", `{"messages":` + msg + `,"trigger":"on_idle"}`, Limits{}, `unknown trigger "on_idle"`, false},
		{"long agent_id", `{"messages":` + msg + `,"trigger":"agent_end","agent_id":"` + strings.Repeat("a", 300) + `"}`, Limits{}, "agent_id: 300 bytes", false},
		{"unknown role", doc(`[{"role":"user","content":"a"},{"role":"bot","content":"b"}]`), Limits{}, `messages[1]: unknown role "bot"`, false},
		{"missing role", doc(`[{"content":"b"}]`), Limits{}, "messages[0]: role is missing", false},
		{"content object", doc(`[{"role":"user","content":{"text":"b"}}]`), Limits{}, "messages[0]: content must be", false},
		{"part without type", doc(`[{"role":"user","content":[{"data":"b"}]}]`), Limits{}, "messages[0]: content[0]: part has no type", false},
		{"tool call without name", doc(`[{"role":"assistant","content":[{"type":"toolCall","id":"c"}]}]`), Limits{}, "content[0]: tool call has no name", false},
		{"message not an object", doc(`["hi"]`), Limits{}, "messages[0]", false},
		{"text not a string", doc(`[{"role":"user","content":[{"type":"text","text":5}]}]`), Limits{}, "messages[0]: content[0]", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Parse([]byte(c.data), c.limits)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", tr)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if errors.Is(err, ErrTooLarge) != c.tooLong {
				t.Errorf("errors.Is(err, ErrTooLarge) = %v for %v", !c.tooLong, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if tr != nil {
				t.Error("a transcript came back with the error")
			}
		})
	}
}

// A transcript without a trigger (the KnowHub plugin sends none) is taken
// as sent when the agent's run ended.
func TestParseMissingTriggerIsAgentEnd(t *testing.T) {
	tr, err := Parse([]byte(`{"messages":[{"role":"user","content":"hi"}],"agent_id":"coder"}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Trigger != TriggerAgentEnd {
		t.Errorf("trigger %q, want %q", tr.Trigger, TriggerAgentEnd)
	}
}

func TestParseDefaultLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range DefaultMaxMessages + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"role":"user","content":"x"}`)
	}
	b.WriteString("]")
	if _, err := Parse([]byte(doc(b.String())), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d messages: err = %v, want ErrTooLarge", DefaultMaxMessages+1, err)
	}
	big := doc(`[{"role":"user","content":"` + strings.Repeat("a", DefaultMaxBytes) + `"}]`)
	if _, err := Parse([]byte(big), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d bytes: err = %v, want ErrTooLarge", len(big), err)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(doc(`[{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"x"}]}]`)))
	san := newTestSanitizer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(data, Limits{MaxBytes: 1 << 16})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		st := san.Transcript(tr, Strict)
		if ID(st) != ID(san.Transcript(tr, Strict)) {
			t.Fatal("ID is not deterministic")
		}
	})
}

// newTestSanitizer returns a sanitizer with the default redactor.
func newTestSanitizer(t testing.TB) *Sanitizer {
	t.Helper()
	red, err := redact.New(nil)
	if err != nil {
		t.Fatalf("redact.New: %v", err)
	}
	return NewSanitizer(red)
}
