package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/extractor"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/redact"
)

// learnedDocs is a small docs repository: the signing-key section says
// nothing of credentials or renewal; the vault section does.
var learnedDocs = map[string]string{
	"keys.md": "# Keys\n\n## Rotate the signing key\n\nRotation replaces the active signing key and keeps the old one valid " +
		"for the grace period, so tokens signed before it still verify.\n\n```sh\nknowhub keys rotate --grace 24h\n```\n",
	"vault.md": "# Vault\n\n## Storage\n\nCredentials are stored in the vault, encrypted at rest. An operator renews " +
		"a credential by writing it again.\n",
	"tls.md": "# TLS\n\n## Certificates\n\nCertificates are read from the tls directory at start and reloaded on change.\n",
}

const (
	learnedSecret = "ghp_R8x2kQ9vLm3nP7wZ4tY6uB1cD5eF0gH2iJ4k"
	learnedEmail  = "alice.doe@example.com"
)

// rankOf is the 1-based rank of path among the hits, or 0.
func rankOf(resp *contract.SearchResponse, path string) int {
	for i, h := range resp.Hits {
		if h.Path == path {
			return i + 1
		}
	}
	return 0
}

// mcpText prints a search reply as the MCP server's search_docs does.
func mcpText(resp *contract.SearchResponse) string {
	var b strings.Builder
	for i, h := range resp.Hits {
		fmt.Fprintf(&b, "[%d] %s:%s", i+1, h.Repo, h.Path)
		if len(h.HeadingPath) > 0 {
			b.WriteString(" § " + strings.Join(h.HeadingPath, " > "))
		}
		fmt.Fprintf(&b, " (score %.2f)\n%s\n", h.Score, h.Content)
	}
	return b.String()
}

// TestLearnedVocabulary: after a transcript in which an agent searched the
// docs for X and ran the command of section S, a paraphrase of X that
// shares none of S's words finds S higher; no secret or address of the
// query reaches KH_LEARNED, KH_LEARNED_WORDS or KH_INDEX; revoking the
// transcript brings the ranking back.
func TestLearnedVocabulary(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	for name, text := range learnedDocs {
		writeFile(t, dir+"/"+name, text)
	}
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir, Priority: 1}))

	paraphrase := contract.SearchRequest{Query: "credential renewal", TopK: 3}
	before := searchDocs(t, srv.NC, paraphrase)
	beforeRank := rankOf(before, "keys.md")
	if beforeRank == 1 {
		t.Fatalf("the paraphrase already finds keys.md first: %v", paths(before))
	}

	// The agent asks X (with a token and an address pasted in), gets the
	// signing-key section among the hits and runs its command.
	query := "renew expired credentials " + learnedSecret + " for " + learnedEmail
	shown := searchDocs(t, srv.NC, contract.SearchRequest{Query: "rotate signing key grace vault certificates", TopK: 3, Content: true})
	if rankOf(shown, "keys.md") == 0 {
		t.Fatalf("the agent's search shows no keys.md: %v", paths(shown))
	}
	input, _ := json.Marshal(map[string]string{"query": query})
	raw, _ := json.Marshal(map[string]any{
		"agent_id": "coder",
		"trigger":  "agent_end",
		"messages": []any{
			map[string]any{"role": "user", "content": "our API credentials expired, renew them please"},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "toolCall", "id": "c1", "name": "search_docs", "arguments": json.RawMessage(input)}}},
			map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "search_docs",
				"content": []any{map[string]any{"type": "text", "text": mcpText(shown)}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "toolCall", "id": "c2", "name": "exec", "arguments": map[string]string{"command": "knowhub keys rotate --grace 24h"}}}},
			map[string]any{"role": "toolResult", "toolCallId": "c2", "toolName": "exec", "content": []any{map[string]any{"type": "text", "text": "rotated"}}},
			map[string]any{"role": "assistant", "content": "Rotated the signing key; the old one stays valid for 24h."},
		},
	})
	msg, err := srv.NC.Request(contract.SubjectExtract, raw, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply contract.ExtractReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || reply.TranscriptID == "" {
		t.Fatalf("extract reply %s: %v", msg.Data, err)
	}

	var after *contract.SearchResponse
	natstest.WaitFor(t, 20*time.Second, "the paraphrase to find keys.md higher", func() bool {
		after = searchDocs(t, srv.NC, paraphrase)
		r := rankOf(after, "keys.md")
		return r > 0 && (beforeRank == 0 || r < beforeRank)
	})
	t.Logf("paraphrase %q: keys.md at rank %d before (%v), %d after (%v)", paraphrase.Query, beforeRank, paths(before), rankOf(after, "keys.md"), paths(after))

	// What was learned: the plain words of the query, nothing else.
	rec := learnedRecord(t, srv, "docs", "keys.md")
	if len(rec.Sections) != 1 || len(rec.Sections[0].Words) != 1 {
		t.Fatalf("learned record %+v", rec)
	}
	if got := rec.Sections[0].Words[0]; got.TranscriptID != reply.TranscriptID || !slices.Equal(got.Words, []string{"renew", "expired", "credentials"}) {
		t.Errorf("learned %+v, want renew expired credentials from %s", got, reply.TranscriptID)
	}
	assertNoPlanted(t, srv)

	// The fold is a projection of KH_LEARNED: lost, it is replayed.
	kv, err := srv.JS.KeyValue(t.Context(), contract.BucketLearned)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(t.Context(), contract.LearnedKey("docs", "keys.md")); err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := indexer.ReplayLearned(t.Context(), srv.JS, analysis.New(), red); err != nil || n != 1 {
		t.Fatalf("replay: %d files, %v", n, err)
	}
	if again := learnedRecord(t, srv, "docs", "keys.md"); !reflect.DeepEqual(again, rec) {
		t.Errorf("replayed record %+v, want %+v", again, rec)
	}
	if r := rankOf(searchDocs(t, srv.NC, paraphrase), "keys.md"); r != rankOf(after, "keys.md") {
		t.Errorf("after the replay keys.md is at rank %d", r)
	}

	// Revoking the transcript takes its words back out.
	if _, err := RevokeTranscript(t.Context(), srv.JS, srv.NC, reply.TranscriptID, "test"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 20*time.Second, "the ranking to come back", func() bool {
		return slices.Equal(paths(searchDocs(t, srv.NC, paraphrase)), paths(before))
	})
	if rec := learnedRecord(t, srv, "docs", "keys.md"); len(rec.Sections) != 0 || !slices.Contains(rec.Revoked, reply.TranscriptID) {
		t.Errorf("after revocation the record is %+v", rec)
	}
	// Extracting the same transcript again teaches nothing: it stays revoked.
	if _, err := ReplayExtraction(t.Context(), srv.JS, srv.NC, mustPipeline(t), time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	if rec := learnedRecord(t, srv, "docs", "keys.md"); len(rec.Sections) != 0 {
		t.Errorf("a revoked transcript taught again: %+v", rec)
	}
	// Replayed from the start, the revocation still wins.
	if _, err := indexer.ReplayLearned(t.Context(), srv.JS, analysis.New(), red); err != nil {
		t.Fatal(err)
	}
	if rec := learnedRecord(t, srv, "docs", "keys.md"); len(rec.Sections) != 0 {
		t.Errorf("a replay brought revoked words back: %+v", rec)
	}
	if got := paths(searchDocs(t, srv.NC, paraphrase)); !slices.Equal(got, paths(before)) {
		t.Errorf("after the replay the paraphrase finds %v, want %v", got, paths(before))
	}
}

// TestLearnedEventsAreScreenedByTheIndexer: an event written straight
// into KH_LEARNED, past the extractor, has its words screened again.
func TestLearnedEventsAreScreenedByTheIndexer(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	for name, text := range learnedDocs {
		writeFile(t, dir+"/"+name, text)
	}
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir, Priority: 1}))
	ev := contract.LearnedEvent{Schema: contract.SchemaVersion, Op: contract.LearnedAdd, TranscriptID: "forged", Repo: "docs", Path: "keys.md",
		HeadingPath: []string{"Keys", "Rotate the signing key"}, Words: []string{learnedEmail, "sk_live_x9Qz", "xqzvbnmkl", "Bob", "renewal"}}
	data, _ := json.Marshal(ev)
	if _, err := srv.JS.Publish(t.Context(), contract.LearnedSubject("docs", "keys.md"), data); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 20*time.Second, "the forged event folded", func() bool {
		return len(learnedRecord(t, srv, "docs", "keys.md").Sections) == 1
	})
	if got := learnedRecord(t, srv, "docs", "keys.md").Sections[0].Words[0].Words; !slices.Equal(got, []string{"renewal"}) {
		t.Errorf("the indexer kept %q, want only renewal", got)
	}
	natstest.WaitFor(t, 20*time.Second, "keys.md found by the learned word", func() bool {
		return rankOf(searchDocs(t, srv.NC, contract.SearchRequest{Query: "renewal", TopK: 3, Semantic: new(bool)}), "keys.md") > 0
	})
}

func mustPipeline(t *testing.T) *extractor.Pipeline {
	t.Helper()
	red, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(testConfig(), red)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// learnedRecord reads a file's KH_LEARNED_WORDS record (empty when none).
func learnedRecord(t *testing.T, srv *natstest.Server, repo, path string) contract.LearnedRecord {
	t.Helper()
	var rec contract.LearnedRecord
	kv, err := srv.JS.KeyValue(t.Context(), contract.BucketLearned)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), contract.LearnedKey(repo, path))
	if err == nil {
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

// assertNoPlanted reads every message of KH_LEARNED and every value of
// KH_LEARNED_WORDS and KH_INDEX (decoded) for the planted secret and
// address, or any piece of them.
func assertNoPlanted(t *testing.T, srv *natstest.Server) {
	t.Helper()
	pieces := []string{learnedSecret, strings.ToLower(learnedSecret[4:14]), "alice", "example.com", learnedEmail}
	check := func(where string, data []byte) {
		low := strings.ToLower(string(data))
		for _, p := range pieces {
			if strings.Contains(low, strings.ToLower(p)) {
				t.Errorf("%s holds %q", where, p)
			}
		}
	}
	stream, err := srv.JS.Stream(t.Context(), contract.StreamLearned)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := stream.Info(t.Context())
	if info.State.Msgs == 0 {
		t.Errorf("%s is empty", contract.StreamLearned)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		if m, err := stream.GetMsg(t.Context(), seq); err == nil {
			check(contract.StreamLearned, m.Data)
		}
	}
	for _, bucket := range []string{contract.BucketLearned, contract.BucketIndex} {
		kv, err := srv.JS.KeyValue(t.Context(), bucket)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := kv.ListKeys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for k := range keys.Keys() {
			e, err := kv.Get(t.Context(), k)
			if err != nil {
				continue
			}
			data := e.Value()
			if bucket == contract.BucketIndex {
				doc, err := contract.DecodeIndexDoc(data)
				if err != nil {
					t.Fatalf("decode %s: %v", k, err)
				}
				data, _ = json.Marshal(doc)
			}
			check(bucket+" "+k, data)
		}
	}
}
