package app

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

// startOpenAPI is a running node with the HTTP API and no tokens: the
// default, local configuration.
func startOpenAPI(t *testing.T) *kbAPI {
	srv := natstest.Start(t, "")
	cfg := testConfig()
	cfg.HTTP.Listen = "127.0.0.1:0"
	node := runNode(t, srv, cfg)
	return &kbAPI{t: t, base: "http://" + node.HTTPAddr(), srv: srv}
}

// natsSearchKB asks kh.search.kb with a raw JSON body.
func natsSearchKB(t *testing.T, srv *natstest.Server, body string) []string {
	t.Helper()
	msg, err := srv.NC.Request(contract.SubjectSearchKB, []byte(body), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		t.Fatalf("kh.search.kb %s: %s", body, e)
	}
	var resp kb.SearchResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range resp.Hits {
		out = append(out, h.ID)
	}
	return out
}

// On a node without tokens, what an agent saves with the KnowHub plugin's
// scopes, and what is extracted from its transcripts (agent:<id>), is found
// by plain searches over HTTP and NATS that name no scopes; naming scopes
// narrows the search to them.
func TestOpenNodeFindsSavedAndExtractedKnowledge(t *testing.T) {
	a := startOpenAPI(t)
	// The KnowHub plugin's kb_save body.
	s := a.save("", map[string]any{
		"task": "running the test suite in CI", "content": "Use `vitest --run` in CI: watch mode blocks the job forever.",
		"types": []string{"tool"}, "score": 4, "scopes": []string{"org:openclaw"},
	})
	if r := a.search("", "vitest watch mode", s.Seq, ""); !slices.Contains(ids(r), s.ID) {
		t.Errorf("plain HTTP search does not find the saved entry: %v", ids(r))
	}
	if got := natsSearchKB(t, a.srv, `{"query":"vitest watch mode"}`); !slices.Contains(got, s.ID) {
		t.Errorf("NATS search without scopes does not find the saved entry: %v", got)
	}
	if r := a.search("", "vitest watch mode", 0, "&scopes=agent:other"); len(ids(r)) != 0 {
		t.Errorf("scopes=agent:other still sees org:openclaw's entry: %v", ids(r))
	}
	if got := natsSearchKB(t, a.srv, `{"query":"vitest watch mode","scopes":["agent:other"]}`); len(got) != 0 {
		t.Errorf("NATS scopes agent:other still sees org:openclaw's entry: %v", got)
	}
	var e kb.Entry
	if code := a.do("GET", "/api/knowledge/"+s.ID, "", nil, &e); code != 200 || e.ID != s.ID {
		t.Errorf("plain read of the saved entry: %d %+v", code, e)
	}
	var up kb.UpdateResponse
	if code := a.do("PUT", "/api/knowledge/"+s.ID, "", map[string]any{"add_helpful_case": map[string]any{"task": "ci"}}, &up); code != 200 {
		t.Errorf("plain feedback on the saved entry: %d", code)
	}

	var reply contract.ExtractReply
	if code := a.do("POST", "/api/extract", "", readTranscript(t, "pnpm_preference"), &reply); code != 200 && code != 202 {
		t.Fatalf("extract: %d %+v", code, reply)
	}
	var entries []kb.Entry
	natstest.WaitFor(t, 15*time.Second, "an entry extracted from the transcript", func() bool {
		entries = kbEntries(t, a.srv, reply.TranscriptID)
		return len(entries) > 0
	})
	x := entries[0]
	if !slices.Equal(x.Scopes, []string{"agent:coder"}) {
		t.Fatalf("extracted entry scopes %v, want agent:coder", x.Scopes)
	}
	if r := a.search("", x.Task+" "+x.Content, x.Seq, ""); !slices.Contains(ids(r), x.ID) {
		t.Errorf("plain HTTP search does not find the extracted entry %s: %v", x.ID, ids(r))
	}
	q, _ := json.Marshal(kb.SearchRequest{Query: x.Task + " " + x.Content})
	if got := natsSearchKB(t, a.srv, string(q)); !slices.Contains(got, x.ID) {
		t.Errorf("NATS search does not find the extracted entry %s: %v", x.ID, got)
	}
}

// With tokens, a search sees exactly the token's scopes: the scopes
// parameter narrows them and never widens them, and a NATS search naming
// no scopes sees only public entries.
func TestTokenScopesCannotBeWidened(t *testing.T) {
	a := startKBAPI(t)
	s := a.save(bobToken, map[string]any{
		"task": "deploy previews", "content": "Preview deploys need the PREVIEW flag set on the branch.",
		"types": []string{"strategy"}, "scopes": []string{"org:beta"},
	})
	if r := a.search(bobToken, "preview deploys flag", s.Seq, ""); !slices.Contains(ids(r), s.ID) {
		t.Fatalf("bob does not find his entry: %v", ids(r))
	}
	for _, extra := range []string{"", "&scopes=org:beta", "&scopes=org:acme,org:beta"} {
		if r := a.search(aliceToken, "preview deploys flag", 0, extra); len(ids(r)) != 0 {
			t.Errorf("alice with %q sees org:beta's entry: %v", extra, ids(r))
		}
	}
	if r := a.search(bobToken, "preview deploys flag", 0, "&scopes=org:acme"); len(ids(r)) != 0 {
		t.Errorf("bob narrowed to org:acme still sees org:beta's entry: %v", ids(r))
	}
	if code := a.do("GET", "/api/knowledge/"+s.ID+"?scopes=org:beta", aliceToken, nil, nil); code != 404 {
		t.Errorf("alice reading org:beta's entry with scopes=org:beta: %d, want 404", code)
	}
	if got := natsSearchKB(t, a.srv, `{"query":"preview deploys flag"}`); len(got) != 0 {
		t.Errorf("NATS search without scopes on a node with tokens sees a scoped entry: %v", got)
	}
	if got := natsSearchKB(t, a.srv, `{"query":"preview deploys flag","AllScopes":true,"all_scopes":true}`); len(got) != 0 {
		t.Errorf("a body field widened the NATS search: %v", got)
	}
}
