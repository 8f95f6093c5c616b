package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

func sevenTools() []contract.Tool {
	core := func(name, desc string) contract.Tool {
		return contract.Tool{Name: name, Description: desc, Type: contract.ToolCore}
	}
	sourced := func(name, desc, inst string) contract.Tool {
		return contract.Tool{Name: name, Description: desc, Type: contract.ToolSourced, Instance: inst}
	}
	return []contract.Tool{
		core("Bash", "Run a shell command via /bin/bash with timeout-safe execution."),
		core("Grep", "Search file contents for a regular-expression pattern, powered by ripgrep."),
		core("Read", "Read a file with stable line cursors. Format-aware: text, PDF, ipynb."),
		core("ToolSearch", "Find tools by natural-language query. Returns ranked candidates."),
		sourced("github__create_issue", "Create a new issue in a GitHub repository.", "github"),
		sourced("github__list_pulls", "List pull requests for a GitHub repository.", "github"),
		sourced("stub__echo", "Echo input back, prefixed with echo:.", "stub"),
	}
}

// call sends a JSON request to a micro endpoint; a service error comes back
// as err.
func call(t *testing.T, nc *nats.Conn, subject string, req, resp any) error {
	t.Helper()
	data, _ := json.Marshal(req)
	msg, err := nc.Request(subject, data, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		return fmt.Errorf("%s (%s)", e, msg.Header.Get(micro.ErrorCodeHeader))
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		t.Fatal(err)
	}
	return nil
}

func upsertTools(t *testing.T, nc *nats.Conn, tools ...contract.Tool) uint64 {
	t.Helper()
	var resp contract.ToolsWriteResponse
	if err := call(t, nc, contract.SubjectToolsUpsert, contract.ToolsUpsertRequest{Tools: tools}, &resp); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	return resp.Written[len(resp.Written)-1].Seq
}

func searchTools(t *testing.T, nc *nats.Conn, req contract.ToolSearchRequest) *contract.ToolSearchResponse {
	t.Helper()
	var resp contract.ToolSearchResponse
	if err := call(t, nc, contract.SubjectSearchTools, req, &resp); err != nil {
		t.Fatalf("search tools %q: %v", req.Query, err)
	}
	return &resp
}

func names(r *contract.ToolSearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Name)
	}
	return out
}

func TestToolSearchBehaviours(t *testing.T) {
	srv := natstest.Start(t, "")
	runNode(t, srv, testConfig())
	tools := append(sevenTools(),
		contract.Tool{Name: "WebFetch", Description: "Fetch a URL and return its content as Markdown.", Type: contract.ToolCore,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)})
	seq := upsertTools(t, srv.NC, tools...)

	first := func(q string, want string) *contract.ToolSearchResponse {
		t.Helper()
		r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: q, MinSeq: seq})
		if len(r.Hits) == 0 || r.Hits[0].Name != want {
			t.Errorf("%q → %v, want %s first", q, names(r), want)
		}
		return r
	}
	first("bash", "Bash")
	first("search file contents regular expression", "Grep")
	if r := first("create issue github", "github__create_issue"); len(r.Hits) > 0 {
		if h := r.Hits[0]; h.Type != contract.ToolSourced || h.Instance != "github" || h.Description == "" {
			t.Errorf("hit lacks type/instance/description: %+v", h)
		}
	}
	first("ripgrep", "Grep")
	first("tool search", "ToolSearch")
	first("web fetch", "WebFetch")
	first("create_issue", "github__create_issue")
	first("grpe", "Grep") // typo
	first("select:read", "Read")
	first("GREP", "Grep")
	first("issues", "github__create_issue")
	if r := first("echo:", "stub__echo"); r.Hits[0].Match == "" {
		t.Errorf("echo: hit lacks its match tier")
	}
	if r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "github__"}); len(r.Hits) < 2 ||
		!strings.HasPrefix(r.Hits[0].Name, "github__") || !strings.HasPrefix(r.Hits[1].Name, "github__") || r.Hits[0].Match != "prefix" {
		t.Errorf("name prefix github__ → %v, want both github tools first", names(r))
	}

	r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "file content read pdf", Limit: 50})
	for i := 1; i < len(r.Hits); i++ {
		if r.Hits[i].Score > r.Hits[i-1].Score {
			t.Errorf("scores increase at %d: %v", i, r.Hits)
		}
	}
	if len(r.Hits) < 2 {
		t.Errorf("file content read pdf → %v, want several tools", names(r))
	}

	// Detail levels.
	full := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "fetch url", Detail: contract.DetailFull})
	if len(full.Hits) == 0 || !strings.Contains(string(full.Hits[0].InputSchema), `"url"`) {
		t.Errorf("detail=full lacks the input schema: %+v", full.Hits)
	}
	nameOnly := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "fetch url", Detail: contract.DetailName})
	if len(nameOnly.Hits) == 0 || nameOnly.Hits[0].Description != "" || nameOnly.Hits[0].InputSchema != nil {
		t.Errorf("detail=name returned more than name and score: %+v", nameOnly.Hits)
	}
	def := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "fetch url", Detail: "everything"})
	if len(def.Hits) == 0 || def.Hits[0].Description == "" || def.Hits[0].InputSchema != nil {
		t.Errorf("unknown detail should fall back to name_desc: %+v", def.Hits)
	}

	// Type filters apply before the limit.
	for _, typ := range []string{contract.ToolCore, contract.ToolSourced} {
		r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "github repository file", Type: typ, Limit: 3})
		if len(r.Hits) == 0 {
			t.Errorf("type=%s returned nothing", typ)
		}
		for _, h := range r.Hits {
			if h.Type != typ {
				t.Errorf("type=%s returned %s (%s)", typ, h.Name, h.Type)
			}
		}
	}
	if r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "repository", Instance: "stub"}); len(r.Hits) != 0 {
		t.Errorf("instance=stub matched %v", names(r))
	}

	// Blank query is an error; anything else is a query.
	var resp contract.ToolSearchResponse
	if err := call(t, srv.NC, contract.SubjectSearchTools, contract.ToolSearchRequest{Query: "   "}, &resp); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("blank query: err %v, want a 400", err)
	}
	for _, q := range []string{`"unbalanced`, "ripgrep~1", "a", strings.Repeat("tool ", 500), "((("} {
		if err := call(t, srv.NC, contract.SubjectSearchTools, contract.ToolSearchRequest{Query: q}, &resp); err != nil {
			t.Errorf("query %.20q: %v", q, err)
		}
	}

	// A tool added while the service runs is found; a removed one is gone.
	seq = upsertTools(t, srv.NC, contract.Tool{Name: "MysteryTool", Description: "Does something useful.", Type: contract.ToolCore,
		Keywords: []string{"frob", "frobnicate"}})
	first("frobnicate", "MysteryTool")
	var rm contract.ToolsWriteResponse
	if err := call(t, srv.NC, contract.SubjectToolsRemove, contract.ToolsRemoveRequest{Names: []string{"MysteryTool"}}, &rm); err != nil {
		t.Fatal(err)
	}
	r = searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "frobnicate", MinSeq: rm.Written[0].Seq})
	if len(r.Hits) != 0 {
		t.Errorf("removed tool still found: %v", names(r))
	}
}

func TestToolSearchLimitCap(t *testing.T) {
	srv := natstest.Start(t, "")
	runNode(t, srv, testConfig())
	var many []contract.Tool
	for i := range 60 {
		many = append(many, contract.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "A generic tool number " + fmt.Sprint(i), Type: contract.ToolCore})
	}
	seq := upsertTools(t, srv.NC, many...)
	r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "generic tool", Limit: 100, MinSeq: seq})
	if len(r.Hits) != 50 || r.Total != 60 {
		t.Errorf("limit 100 returned %d hits of %d, want 50 of 60", len(r.Hits), r.Total)
	}
	if r := searchTools(t, srv.NC, contract.ToolSearchRequest{Query: "a", Limit: 100}); len(r.Hits) > 50 {
		t.Errorf("query a returned %d hits", len(r.Hits))
	}
}

func TestToolUpsertValidation(t *testing.T) {
	srv := natstest.Start(t, "")
	runNode(t, srv, testConfig())
	good := contract.Tool{Name: "Ok", Description: "Fine.", Type: contract.ToolCore}
	tests := []struct {
		name  string
		tools []contract.Tool
		want  []string
	}{
		{"empty name", []contract.Tool{good, {Description: "x", Type: "core"}}, []string{"tools[1]", "name: required"}},
		{"duplicate names", []contract.Tool{good, {Name: "OK", Description: "x", Type: "core"}}, []string{"duplicate of tools[0]"}},
		{"invalid type", []contract.Tool{{Name: "T", Description: "x", Type: "plugin"}}, []string{`"plugin" is not core or sourced`}},
		{"oversize description", []contract.Tool{{Name: "T", Description: strings.Repeat("x", 9000), Type: "core"}}, []string{"description: 9000 bytes"}},
		{"sourced without instance", []contract.Tool{{Name: "T", Description: "x", Type: "sourced"}}, []string{"instance: required"}},
		{"bad schema", []contract.Tool{{Name: "T", Description: "x", Type: "core", InputSchema: json.RawMessage(`[1, 2]`)}}, []string{"input_schema: must be a JSON object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var resp contract.ToolsWriteResponse
			err := call(t, srv.NC, contract.SubjectToolsUpsert, contract.ToolsUpsertRequest{Tools: tc.tools}, &resp)
			if err == nil {
				t.Fatal("upsert accepted an invalid batch")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// Nothing was half-written: the valid tool of a rejected batch is absent.
	p, err := ReadProgress(t.Context(), srv.JS)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := srv.JS.Stream(t.Context(), contract.StreamTools)
	info, _ := s.Info(t.Context())
	if info.State.Msgs != 0 || p.ToolsPending != 0 {
		t.Errorf("rejected batches wrote %d tool events", info.State.Msgs)
	}
}
