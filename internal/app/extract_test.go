package app

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

func readTranscript(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../extractor/testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// kbEntries lists the KH_KB records extracted from a transcript.
func kbEntries(t *testing.T, srv *natstest.Server, transcriptID string) []kb.Entry {
	t.Helper()
	bucket, err := srv.JS.KeyValue(t.Context(), contract.BucketKB)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := bucket.ListKeys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []kb.Entry
	for k := range keys.Keys() {
		e, err := bucket.Get(t.Context(), k)
		if err != nil {
			continue
		}
		var entry kb.Entry
		if json.Unmarshal(e.Value(), &entry) == nil && entry.TranscriptID == transcriptID {
			out = append(out, entry)
		}
	}
	return out
}

func TestExtractionFromTranscripts(t *testing.T) {
	a := startKBAPI(t)
	var reply contract.ExtractReply
	// Without a wait parameter the reply waits briefly: the rules are done
	// in time, so it says what they extracted (the KnowHub plugin reads
	// extracted_count).
	if code := a.do("POST", "/api/extract", aliceToken, readTranscript(t, "pnpm_preference"), &reply); code != 200 || reply.TranscriptID == "" ||
		reply.Status != contract.ExtractDone || reply.ExtractedCount == nil || *reply.ExtractedCount != len(reply.IDs) {
		t.Fatalf("extract: %d %+v", code, reply)
	}
	var entries []kb.Entry
	natstest.WaitFor(t, 15*time.Second, "an entry extracted from the transcript", func() bool {
		entries = kbEntries(t, a.srv, reply.TranscriptID)
		return len(entries) > 0
	})
	e := entries[0]
	// Alice's token (org:acme) sent it: the entries stay within her scopes.
	if !strings.Contains(e.Content, "pnpm") || e.Extractor == "" || e.Source.AgentID != "coder" || strings.Join(e.Scopes, ",") != "org:acme" {
		t.Errorf("extracted entry lacks content, lineage or scope: %+v", e)
	}
	// The same transcript again is extracted once.
	var again contract.ExtractReply
	a.do("POST", "/api/extract", aliceToken, readTranscript(t, "pnpm_preference"), &again)
	if again.TranscriptID != reply.TranscriptID || !again.Duplicate {
		t.Errorf("second intake %+v, want a duplicate of %s", again, reply.TranscriptID)
	}
	// Malformed and oversize transcripts are rejected and nothing is stored.
	s, _ := a.srv.JS.Stream(t.Context(), contract.StreamTranscripts)
	before, _ := s.Info(t.Context())
	var e4 struct {
		Error string `json:"error"`
	}
	for _, bad := range []string{`{"messages": []}`, `{"messages": [{"role": "wizard", "content": "hi"}], "trigger": "agent_end"}`, `not json`,
		`{"messages": [{"role": "user", "content": "x"}], "trigger": "whenever"}`} {
		if code := a.do("POST", "/api/extract", aliceToken, []byte(bad), &e4); code != 400 || e4.Error == "" {
			t.Errorf("malformed %.40q: %d %q", bad, code, e4.Error)
		}
	}
	if code := a.do("POST", "/api/extract", aliceToken, []byte(`{"messages": "`+strings.Repeat("x", 100<<10)+`"}`), &e4); code != 413 {
		t.Errorf("oversize transcript: %d, want 413", code)
	}
	after, _ := s.Info(t.Context())
	if after.State.Msgs != before.State.Msgs {
		t.Errorf("rejected transcripts were stored: %d → %d", before.State.Msgs, after.State.Msgs)
	}

	// Re-extraction: dry run reports, a real run finds only duplicates.
	pipe, err := NewPipeline(testConfig(), nil)
	if err == nil {
		t.Fatal("a pipeline needs a redactor")
	}
	red, _ := NewRedactor(testConfig())
	pipe, err = NewPipeline(testConfig(), red)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := ReplayExtraction(t.Context(), a.srv.JS, a.srv.NC, pipe, time.Time{}, true)
	if err != nil || dry.Transcripts != 1 || len(dry.Entries) != len(entries) {
		t.Errorf("dry run: %+v, %v", dry, err)
	}
	real, err := ReplayExtraction(t.Context(), a.srv.JS, a.srv.NC, pipe, time.Time{}, false)
	if err != nil || real.Duplicates != len(entries) || real.Added != 0 {
		t.Errorf("replay: %+v, %v; want only duplicates", real, err)
	}
	if since, _ := ReplayExtraction(t.Context(), a.srv.JS, a.srv.NC, pipe, time.Now().Add(time.Hour), true); since.Transcripts != 0 {
		t.Errorf("replay since the future found %d transcripts", since.Transcripts)
	}

	// Revoke everything derived from the transcript.
	n, err := RevokeTranscript(t.Context(), a.srv.JS, a.srv.NC, reply.TranscriptID, "bad session")
	if err != nil || n != len(entries) {
		t.Fatalf("revoke by transcript: %d, %v", n, err)
	}
	natstest.WaitFor(t, 10*time.Second, "revoked entries", func() bool {
		for _, e := range kbEntries(t, a.srv, reply.TranscriptID) {
			if e.State != kb.StateRevoked {
				return false
			}
		}
		return true
	})
}

func TestRawTranscriptsAreSanitizedBeforeStorage(t *testing.T) {
	a := startKBAPI(t)
	raw := `{"agent_id": "ops", "session_key": "s1", "trigger": "session_end", "messages": [
		{"role": "system", "content": "secret system prompt text"},
		{"role": "user", "content": "Remember that the deploy host is 10.20.30.40 and mail goes to ops.lead@example.org; my key is ` + plantedSecret + ` and files live in /home/ops/deploy."},
		{"role": "assistant", "content": "Noted."}]}`
	// A gateway publishes to the intake subject with JetStream.
	if _, err := a.srv.JS.PublishMsg(t.Context(), &nats.Msg{Subject: contract.SubjectTranscriptsIn + ".ops", Data: []byte(raw)}); err != nil {
		t.Fatal(err)
	}
	s, _ := a.srv.JS.Stream(t.Context(), contract.StreamTranscripts)
	natstest.WaitFor(t, 10*time.Second, "the sanitized transcript", func() bool {
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 1
	})
	m, err := s.GetMsg(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	stored := string(m.Data)
	for _, leak := range []string{"10.20.30.40", "ops.lead@example.org", plantedSecret, "/home/ops", "secret system prompt"} {
		if strings.Contains(stored, leak) {
			t.Errorf("stored transcript holds %q", leak)
		}
	}
	// The raw intake message is gone once taken.
	in, _ := a.srv.JS.Stream(t.Context(), contract.StreamTranscriptsIn)
	natstest.WaitFor(t, 5*time.Second, "the intake queue to empty", func() bool {
		info, err := in.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
	// A malformed raw transcript is dead-lettered without its content.
	if _, err := a.srv.JS.PublishMsg(t.Context(), &nats.Msg{Subject: contract.SubjectTranscriptsIn + ".ops", Data: []byte(`{"messages": "` + plantedSecret + `"}`)}); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, "a dead letter", func() bool {
		p, err := ReadProgress(context.Background(), a.srv.JS)
		return err == nil && p.DeadLetters == 1
	})
	assertNowhere(t, a.srv.JS, plantedSecret)
}

// The KnowHub plugin's body has no trigger; with ?wait= the reply carries
// what extraction saved, once the extractor has recorded it.
func TestExtractWaitReportsEntries(t *testing.T) {
	a := startOpenAPI(t)
	var doc map[string]any
	if err := json.Unmarshal(readTranscript(t, "pnpm_preference"), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "trigger")
	body, _ := json.Marshal(doc)

	var er struct{ Error string }
	if code := a.do("POST", "/api/extract?wait=soon", "", body, &er); code != 400 || !strings.Contains(er.Error, "wait must be") {
		t.Errorf("wait=soon: %d %q", code, er.Error)
	}
	var reply contract.ExtractReply
	if code := a.do("POST", "/api/extract?wait=20s", "", body, &reply); code != 200 {
		t.Fatalf("extract with wait: %d %+v", code, reply)
	}
	if reply.Status != contract.ExtractDone || reply.ExtractedCount == nil || *reply.ExtractedCount != len(reply.IDs) || len(reply.IDs) == 0 {
		t.Fatalf("reply %+v, want status extracted with the ids", reply)
	}
	// The entries are searchable when the reply comes.
	for _, id := range reply.IDs {
		var e kb.Entry
		if code := a.do("GET", "/api/knowledge/"+id, "", nil, &e); code != 200 || e.TranscriptID != reply.TranscriptID {
			t.Errorf("reply id %s: %d, transcript %q, want %s", id, code, e.TranscriptID, reply.TranscriptID)
		}
		if r := a.search("", e.Task+" "+e.Content, 0, ""); !slices.Contains(ids(r), id) {
			t.Errorf("extracted entry %s not found by search: %v", id, ids(r))
		}
	}
	// The same transcript again: a duplicate, answered from the record.
	var again contract.ExtractReply
	if code := a.do("POST", "/api/extract?wait=20s", "", body, &again); code != 200 || !again.Duplicate ||
		again.Status != contract.ExtractDone || !slices.Equal(again.IDs, reply.IDs) {
		t.Errorf("duplicate with wait: %d %+v", code, again)
	}
	// With wait=0 the reply comes at once.
	var queued contract.ExtractReply
	if code := a.do("POST", "/api/extract?wait=0", "", []byte(`{"messages":[{"role":"user","content":"hello there"}],"agent_id":"coder"}`), &queued); code != 202 ||
		queued.Status != contract.ExtractQueued || queued.ExtractedCount != nil {
		t.Errorf("extract without wait: %d %+v", code, queued)
	}
	// A transcript that yields nothing reports zero.
	var none contract.ExtractReply
	if code := a.do("POST", "/api/extract?wait=20", "", []byte(`{"messages":[{"role":"user","content":"hello there"}],"agent_id":"coder"}`), &none); code != 200 ||
		none.Status != contract.ExtractDone || none.ExtractedCount == nil || *none.ExtractedCount != 0 {
		t.Errorf("empty extraction: %d %+v", code, none)
	}
}
