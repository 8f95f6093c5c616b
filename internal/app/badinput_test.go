package app

import (
	"bytes"
	"context"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// Events with a path that climbs out of its repository, or chunk sets
// whose chunk ids repeat, are dead-lettered with the reason instead of
// being indexed.
func TestBadPathsAndDuplicateChunkIDsAreDeadLettered(t *testing.T) {
	srv := natstest.Start(t, "")
	runNode(t, srv, testConfig())
	ctx := context.Background()
	climb := "../../../../etc/passwd"
	bad := []*nats.Msg{
		{Subject: contract.FileSubject("docs", climb), Data: mustJSON(t, contract.FileEvent{Schema: 1, Repo: "docs", Path: climb, Content: "root:x:0:0"})},
		{Subject: contract.ChunkSubject("docs", "/etc/hosts"), Data: mustJSON(t, contract.ChunkSet{Schema: 1, Repo: "docs", Path: "/etc/hosts", FileSeq: 1,
			Chunks: []contract.Chunk{{ID: "a", Text: "localhost"}}})},
		{Subject: contract.ChunkSubject("docs", "dup.md"), Data: mustJSON(t, contract.ChunkSet{Schema: 1, Repo: "docs", Path: "dup.md", FileSeq: 1,
			Chunks: []contract.Chunk{{ID: "same", Text: "one"}, {ID: "same", Text: "two"}}})},
	}
	for _, m := range bad {
		if _, err := srv.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	natstest.WaitFor(t, 15*time.Second, "three dead letters", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		return err == nil && p.DeadLetters == 3 && p.ChunkerPending == 0 && p.IndexerPending == 0
	})
	dlq, _ := srv.JS.Stream(ctx, contract.StreamDLQ)
	reasons := map[string]string{}
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := dlq.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		reasons[m.Header.Get(contract.HeaderOrigSubject)] = m.Header.Get(contract.HeaderReason)
	}
	for i, want := range []string{"path", "path", "chunk id"} {
		if r := reasons[bad[i].Subject]; !strings.Contains(r, want) {
			t.Errorf("dead letter of %s: reason %q, want it to mention %q", bad[i].Subject, r, want)
		}
	}
}

// A NUL byte in a query is a bad request on every search endpoint, and a
// NATS request that is not valid UTF-8 is rejected, not decoded with
// replacement characters.
func TestNULAndInvalidUTF8QueriesAreRejected(t *testing.T) {
	a := startKBAPI(t)
	for _, path := range []string{"/api/docs/search", "/api/tools/search", "/api/knowledge/search"} {
		if code := a.do("GET", path+"?q="+url.QueryEscape("install\x00now"), aliceToken, nil, nil); code != 400 {
			t.Errorf("GET %s with a NUL byte: %d, want 400", path, code)
		}
	}
	for _, subj := range []string{contract.SubjectSearchDocs, contract.SubjectSearchTools, contract.SubjectSearchKB} {
		for name, data := range map[string]string{
			"invalid UTF-8": `{"query":"install ` + "\xff\xfe" + `"}`,
			"NUL":           `{"query":"install\u0000now"}`,
		} {
			msg, err := a.srv.NC.Request(subj, []byte(data), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if code := msg.Header.Get(micro.ErrorCodeHeader); code != "400" {
				t.Errorf("%s with %s: code %q, want 400 (%s)", subj, name, code, msg.Data)
			}
		}
	}
}

// The semantic switch of the search endpoints takes a boolean only.
func TestSemanticParameter(t *testing.T) {
	a := startKBAPI(t)
	for _, path := range []string{"/api/docs/search", "/api/tools/search"} {
		for v, want := range map[string]int{"false": 200, "0": 200, "true": 200, "maybe": 400} {
			if code := a.do("GET", path+"?q=install&semantic="+v, aliceToken, nil, nil); code != want {
				t.Errorf("GET %s with semantic=%s: %d, want %d", path, v, code, want)
			}
		}
	}
}

// A malformed file event is dead-lettered once and then removed from
// KH_FILES: it cannot be redacted in place, so left there it would keep
// the raw secret it carries, on disk too, and a reindex would replay it.
func TestMalformedFileEventsLeaveNoSecretBehind(t *testing.T) {
	store := t.TempDir()
	srv := natstest.Start(t, store)
	runNode(t, srv, testConfig())
	ctx := context.Background()
	climb := "../outside.md"
	bad := []*nats.Msg{
		{Subject: contract.FileSubject("docs", climb), Data: mustJSON(t, contract.FileEvent{Schema: 1, Repo: "docs", Path: climb, Content: "key " + plantedSecret})},
		{Subject: contract.FileSubject("docs", "a.md"), Data: mustJSON(t, contract.FileEvent{Schema: 1, Repo: "other", Path: "a.md", Content: "key " + plantedSecret})},
		{Subject: contract.FileSubject("docs", "b.md"), Data: []byte(`{"schema":1,"repo":"docs","path":"b.md","content":"key ` + plantedSecret)},
	}
	for _, m := range bad {
		if _, err := srv.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	files, err := srv.JS.Stream(ctx, contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 15*time.Second, "three dead letters and an empty KH_FILES", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		info, ierr := files.Info(ctx)
		return err == nil && ierr == nil && p.DeadLetters == 3 && p.ChunkerPending == 0 && info.State.Msgs == 0
	})
	assertNowhere(t, srv.JS, plantedSecret)
	if p, _ := ReadProgress(ctx, srv.JS); p.DeadLetters != 3 {
		t.Errorf("%d dead letters, want one per malformed event", p.DeadLetters)
	}
	// Removal overwrites the message on disk, not just its index entry.
	err = filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(plantedSecret)) {
			t.Errorf("%s holds the planted secret", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
