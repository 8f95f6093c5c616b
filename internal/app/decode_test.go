package app

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A feedback case's timestamp may be epoch milliseconds (JavaScript's
// Date.now()) or RFC 3339; anything else is a field error.
func TestFeedbackTimestampForms(t *testing.T) {
	a := startOpenAPI(t)
	s := a.save("", map[string]any{"task": "release notes", "content": "Write release notes from the merged pull requests, grouped by label.", "types": []string{"strategy"}})
	natstest.WaitFor(t, 5*time.Second, "the saved entry's record", func() bool {
		return a.do("GET", "/api/knowledge/"+s.ID, "", nil, nil) == 200
	})
	ms := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, ts := range []any{ms.UnixMilli(), ms.Add(time.Hour).Format(time.RFC3339)} {
		var up kb.UpdateResponse
		if code := a.do("PUT", "/api/knowledge/"+s.ID, "", map[string]any{"add_helpful_case": map[string]any{"task": "notes", "timestamp": ts}}, &up); code != 200 {
			t.Fatalf("timestamp %v: %d", ts, code)
		}
	}
	var e kb.Entry
	natstest.WaitFor(t, 5*time.Second, "both cases folded", func() bool {
		a.do("GET", "/api/knowledge/"+s.ID, "", nil, &e)
		return len(e.Eval.RecentCases) == 2
	})
	if got := e.Eval.RecentCases; !got[0].Timestamp.Equal(ms) || !got[1].Timestamp.Equal(ms.Add(time.Hour)) {
		t.Errorf("case timestamps %v and %v, want %v and %v", got[0].Timestamp, got[1].Timestamp, ms, ms.Add(time.Hour))
	}
	for _, ts := range []string{`"yesterday"`, `1.5e3`, `-4`, `true`} {
		var er struct{ Error string }
		body := []byte(`{"add_harmful_case": {"task": "x", "timestamp": ` + ts + `}}`)
		if code := a.do("PUT", "/api/knowledge/"+s.ID, "", body, &er); code != 400 || !strings.HasPrefix(er.Error, "add_harmful_case.timestamp: must be ") {
			t.Errorf("timestamp %s: %d %q", ts, code, er.Error)
		}
	}
}

// Every decode error names the request's field in JSON terms, over HTTP
// and NATS alike, and nothing is saved.
func TestDecodeErrorsSpeakOfFields(t *testing.T) {
	a := startOpenAPI(t)
	tests := []struct {
		method, path, body, want string
	}{
		{"POST", "/api/knowledge", `{"task":"t","content":"c","types":"tool"}`, "types: must be an array of strings"},
		{"POST", "/api/knowledge", `{"task":"t","content":"c","types":[1]}`, "types: must be an array of strings"},
		{"POST", "/api/knowledge", `{"task":"t","content":"c","types":["tool"],"score":"high"}`, "score: must be an integer"},
		{"POST", "/api/knowledge", `{"task":"t","content":"c","types":["tool"],"source":{"urls":"http://x"}}`, "source.urls: must be an array of strings"},
		{"POST", "/api/knowledge", `{"task":"t","content":"c","types":["tool"],"scores":3}`, "scores: unknown field"},
		{"POST", "/api/knowledge", `{"task":"t",`, "request body is not valid JSON"},
		{"POST", "/api/knowledge", `["task"]`, "request body must be an object"},
		{"POST", "/api/knowledge", ``, "request body is empty"},
		{"PUT", "/api/knowledge/0123456789abcdef", `{"add_helpful_case":"yes"}`, "add_helpful_case: must be an object"},
		{"POST", "/api/tools", `{"tools":"grep"}`, "tools: must be an array of objects"},
		{"POST", "/api/tools", `{"tools":[{"name":7}]}`, "tools.name: must be a string"},
	}
	for _, tt := range tests {
		var er struct{ Error string }
		code := a.do(tt.method, tt.path, "", []byte(tt.body), &er)
		if code != 400 || !strings.HasPrefix(er.Error, tt.want) {
			t.Errorf("%s %s %s: %d %q, want 400 %q", tt.method, tt.path, tt.body, code, er.Error, tt.want)
		}
		for _, leak := range []string{"Go ", "struct", "kb.", "contract.", "[]string", "json:"} {
			if strings.Contains(er.Error, leak) {
				t.Errorf("%s %s: error %q names Go internals (%q)", tt.method, tt.path, er.Error, leak)
			}
		}
	}
	msg, err := a.srv.NC.Request(contract.SubjectKBSave, []byte(`{"task":"t","content":"c","types":"tool"}`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Header.Get(micro.ErrorHeader); got != "types: must be an array of strings" {
		t.Errorf("NATS kh.kb.save error %q", got)
	}
	if r := a.search("", "t c", 0, ""); len(ids(r)) != 0 {
		t.Errorf("a rejected save was stored: %v", ids(r))
	}
}

// storedMsgs counts the messages of a stream.
func storedMsgs(t *testing.T, srv *natstest.Server, stream string) uint64 {
	t.Helper()
	s, err := srv.JS.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A body that encoding/json would decode into something other than what
// was sent (invalid UTF-8 or an escaped lone surrogate, both turned into
// U+FFFD; a key sent twice, of which the last would win) is a 400 naming
// the field, over HTTP and NATS alike, and nothing is stored.
func TestInvalidUTF8SurrogatesAndDuplicateKeysAreRefused(t *testing.T) {
	a := startOpenAPI(t)
	transcript := func(extra string) string {
		return `{"agent_id":"coder","session_key":"s1","trigger":"agent_end",` + extra +
			`"messages":[{"role":"user","content":"Remember that the staging database is read-only on Fridays."}]}`
	}
	tests := []struct {
		method, path, body, want string
	}{
		{"POST", "/api/knowledge", `{"task":"deploy ` + "\xff" + `","content":"c","types":["tool"]}`, "request body is not valid UTF-8 (at byte 16)"},
		{"POST", "/api/knowledge", `{"task":"deploy \ud800","content":"c","types":["tool"]}`, `task: holds an escaped lone surrogate`},
		{"POST", "/api/knowledge", `{"task":"deploy \udc00\ud800x","content":"c","types":["tool"]}`, `task: holds an escaped lone surrogate`},
		{"POST", "/api/knowledge", `{"task":"deploy","content":"c","types":["tool"],"scopes":["org:a"],"scopes":[]}`, "scopes: appears more than once"},
		{"POST", "/api/knowledge", `{"task":"deploy","content":"c","types":["tool"],"source":{"name":"a","name":"b"}}`, "source.name: appears more than once"},
		{"POST", "/api/tools", `{"tools":[{"name":"grep","description":"Search files","type":"core","name":"rm"}]}`, "tools[0].name: appears more than once"},
		{"POST", "/api/tools", `{"tools":[{"name":"grep","description":"Search \udfff files","type":"core"}]}`, "tools[0].description: holds an escaped lone surrogate"},
		{"PUT", "/api/knowledge/0123456789abcdef", `{"add_helpful_case":{"task":"a"},"add_helpful_case":{"task":"b"}}`, "add_helpful_case: appears more than once"},
		{"POST", "/api/extract", transcript(`"agent_id":"other",`), "agent_id: appears more than once"},
		{"POST", "/api/extract", transcript(`"note":"\ud83d",`), "note: holds an escaped lone surrogate"},
	}
	for _, tt := range tests {
		var er struct{ Error string }
		code := a.do(tt.method, tt.path, "", []byte(tt.body), &er)
		if code != 400 || !strings.Contains(er.Error, tt.want) {
			t.Errorf("%s %s %q: %d %q, want 400 %q", tt.method, tt.path, tt.body, code, er.Error, tt.want)
		}
	}
	for subj, body := range map[string]string{
		contract.SubjectKBSave:      `{"task":"deploy","content":"c","types":["tool"],"task":"other"}`,
		contract.SubjectToolsUpsert: `{"tools":[{"name":"grep\udbff","description":"Search files","type":"core"}]}`,
		contract.SubjectExtract:     transcript(`"trigger":"session_end",`),
	} {
		msg, err := a.srv.NC.Request(subj, []byte(body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if code := msg.Header.Get(micro.ErrorCodeHeader); code != "400" {
			t.Errorf("%s %q: code %q, want 400 (%s)", subj, body, code, msg.Header.Get(micro.ErrorHeader))
		}
	}
	// /mcp's JSON-RPC bodies, which the MCP SDK decodes, are checked first
	// too; a faithful one reaches the SDK as it was sent.
	mcpHeader := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	if code, msg := a.send(browserReq{method: "POST", path: "/mcp", body: initialize + `,"id":2}`, header: mcpHeader}); code != 400 || msg != "id: appears more than once" {
		t.Errorf("MCP initialize with two ids: %d %q, want 400", code, msg)
	}
	if code, msg := a.send(browserReq{method: "POST", path: "/mcp", body: initialize + `}`, header: mcpHeader}); code != 200 {
		t.Errorf("MCP initialize: %d %q, want 200", code, msg)
	}
	for _, stream := range []string{contract.StreamKnowledge, contract.StreamTools, contract.StreamTranscripts} {
		if n := storedMsgs(t, a.srv, stream); n != 0 {
			t.Errorf("%s holds %d messages after refused requests", stream, n)
		}
	}
	// A surrogate pair is one character and welcome.
	var body struct{ Error string }
	if code := a.do("POST", "/api/knowledge", "", []byte(`{"task":"rocket \ud83d\ude80","content":"Launch with care.","types":["strategy"]}`), &body); code != 200 {
		t.Errorf("a surrogate pair: %d %q", code, body.Error)
	}
}
