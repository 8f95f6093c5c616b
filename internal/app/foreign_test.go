package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A file event that another producer publishes with a raw secret is
// rewritten in KH_FILES with its redacted content, and the dead letters of
// poisoned messages keep only their metadata: no stream, bucket or dead
// letter holds the secret.
func TestForeignSecretsArePersistedNowhere(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.md"), "# Fine\n\nA perfectly fine page.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	ctx := context.Background()
	content := "# Foreign setup\n\nExport the key first:\n\n    export ANTHROPIC_API_KEY=" + plantedSecret + "\n\nThen run the importer.\n"
	foreign := mustJSON(t, contract.FileEvent{Schema: 1, Repo: "docs", Path: "foreign.md", Content: content})
	if _, err := srv.JS.PublishMsg(ctx, &nats.Msg{Subject: contract.FileSubject("docs", "foreign.md"), Data: foreign}); err != nil {
		t.Fatal(err)
	}
	poison := []*nats.Msg{
		{Subject: contract.FileSubject("docs", "future.md"), Data: mustJSON(t, contract.FileEvent{Schema: 99, Repo: "docs", Path: "future.md", Content: content})},
		{Subject: contract.SubjectChunks + ".docs.0000000000000002", Data: []byte(`{"schema":1,"repo":"bad repo!","path":"x.md","chunks":[{"id":"a","text":"` + plantedSecret + `"}]}`)},
	}
	var poisonSeqs []uint64
	for _, m := range poison {
		ack, err := srv.JS.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		poisonSeqs = append(poisonSeqs, ack.Sequence)
	}
	waitSearch(t, srv.NC, "importer", "the foreign file to be indexed", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
	natstest.WaitFor(t, 15*time.Second, "two dead letters", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		return err == nil && p.DeadLetters == 2
	})
	msg, err := srv.JS.Stream(ctx, contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	last, err := msg.GetLastMsgForSubject(ctx, contract.FileSubject("docs", "foreign.md"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := contract.DecodeFileEvent(last.Data)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ev.Content, plantedSecret) || !strings.Contains(ev.Content, "importer") {
		t.Errorf("KH_FILES holds %q, want the redacted content", ev.Content)
	}
	// The poisoned messages are the foreign producer's own to remove from
	// its streams; what knowhub wrote must hold no secret.
	for i, stream := range []string{contract.StreamFiles, contract.StreamChunks} {
		s, err := srv.JS.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMsg(ctx, poisonSeqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	assertNowhere(t, srv.JS, plantedSecret)
}

// A compressed file event that expands past the file limit is
// dead-lettered with the reason, and the pipeline keeps going.
func TestDecompressionBombIsDeadLettered(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.md"), "# Fine\n\nA perfectly fine page.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	runNode(t, srv, cfg)
	ctx := context.Background()
	bomb := contract.EncodeFileEvent(&contract.FileEvent{Schema: 1, Repo: "docs", Path: "bomb.md",
		Content: strings.Repeat("# heading\n", 6<<20)})
	if len(bomb) > 1024 {
		t.Fatalf("bomb of %d bytes", len(bomb))
	}
	if _, err := srv.JS.Publish(ctx, contract.FileSubject("docs", "bomb.md"), bomb); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 15*time.Second, "the bomb dead-lettered", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		return err == nil && p.DeadLetters == 1
	})
	dlq, _ := srv.JS.Stream(ctx, contract.StreamDLQ)
	m, err := dlq.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Header.Get(contract.HeaderReason); !strings.Contains(r, "over") {
		t.Errorf("reason %q, want it to name the limit", r)
	}
	writeFile(t, filepath.Join(dir, "later.md"), "# Later\n\nWritten after the bomb.\n")
	waitSearch(t, srv.NC, "written after the bomb", "a file written after the bomb", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
}

// A file within the size limit made of a million headings is rejected
// once, with the reason, and never retried.
func TestMillionHeadingsAreRejectedOnce(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.md"), "# Fine\n\nA perfectly fine page.\n")
	writeFile(t, filepath.Join(dir, "headings.md"), strings.Repeat("# a\n", 1<<20))
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	ctx := context.Background()
	p, err := ReadProgress(ctx, srv.JS)
	if err != nil || p.DeadLetters != 1 {
		t.Fatalf("dead letters %d (%v), want 1", p.DeadLetters, err)
	}
	dlq, _ := srv.JS.Stream(ctx, contract.StreamDLQ)
	m, err := dlq.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Header.Get(contract.HeaderReason); !strings.Contains(r, "too many headings") {
		t.Errorf("reason %q", r)
	}
	c, err := srv.JS.Consumer(ctx, contract.StreamFiles, "chunker")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(ctx); err != nil || info.NumRedelivered != 0 {
		t.Errorf("chunker redelivered %d messages (%v), want 0", info.NumRedelivered, err)
	}
}
