package chunker

import (
	"context"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// Two chunkers, or a redelivery, can finish an older version of a file
// after a newer one. KH_CHUNKS keeps one message per file, so publishing
// the older chunk set would replace the newer one before the indexer read
// it: a deletion would be lost and the deleted file stay searchable.
func TestAnOlderVersionNeverReplacesANewerChunkSet(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	w, err := New(Config{}, Deps{NC: srv.NC, Redactor: noRedaction{}})
	if err != nil {
		t.Fatal(err)
	}
	subject := contract.FileSubject("docs", "guide.md")
	put := contract.EncodeFileEvent(&contract.FileEvent{Schema: contract.SchemaVersion, Repo: "docs", Path: "guide.md", Content: "# Guide\n\nSome text.\n"})
	del := contract.EncodeFileEvent(&contract.FileEvent{Schema: contract.SchemaVersion, Repo: "docs", Path: "guide.md", Deleted: true})
	publish := func(data []byte) uint64 {
		ack, err := srv.JS.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	putSeq, delSeq := publish(put), publish(del)
	// The deletion is chunked first, the edit before it last.
	for _, m := range []*bus.Message{
		{Subject: subject, Seq: delSeq, Data: del, Header: nats.Header{}},
		{Subject: subject, Seq: putSeq, Data: put, Header: nats.Header{}},
	} {
		if err := w.handle(ctx, m); err != nil {
			t.Fatalf("handle seq %d: %v", m.Seq, err)
		}
	}
	chunks, err := srv.JS.Stream(ctx, contract.StreamChunks)
	if err != nil {
		t.Fatal(err)
	}
	last, err := chunks.GetLastMsgForSubject(ctx, contract.ChunkSubject("docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Header.Get(contract.HeaderSourceSeq); got != strconv.FormatUint(delSeq, 10) || last.Header.Get(contract.HeaderOp) != contract.OpDelete {
		t.Errorf("KH_CHUNKS holds the chunk set of seq %s (%s), want the deletion at seq %d", got, last.Header.Get(contract.HeaderOp), delSeq)
	}

	// A chunker that has not seen the file yet (another replica, or
	// this one restarted) publishes a file's first chunk set without a
	// lookup; the stream refuses it here, and the older version still
	// loses.
	fresh, err := New(Config{}, Deps{NC: srv.NC, Redactor: noRedaction{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.handle(ctx, &bus.Message{Subject: subject, Seq: putSeq, Data: put, Header: nats.Header{}}); err != nil {
		t.Fatalf("handle seq %d on a fresh chunker: %v", putSeq, err)
	}
	last, err = chunks.GetLastMsgForSubject(ctx, contract.ChunkSubject("docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Header.Get(contract.HeaderSourceSeq); got != strconv.FormatUint(delSeq, 10) {
		t.Errorf("a fresh chunker replaced the deletion at seq %d with the chunk set of seq %s", delSeq, got)
	}

	// A chunk set claiming a source sequence KH_FILES never reached is
	// forged: it does not stop the real version from being published.
	forged := &nats.Msg{Subject: contract.ChunkSubject("docs", "guide.md"), Data: []byte("x"),
		Header: nats.Header{contract.HeaderSourceSeq: {strconv.FormatUint(1<<62, 10)}}}
	if _, err := srv.JS.PublishMsg(ctx, forged); err != nil {
		t.Fatal(err)
	}
	editSeq := publish(put)
	if err := w.handle(ctx, &bus.Message{Subject: subject, Seq: editSeq, Data: put, Header: nats.Header{}}); err != nil {
		t.Fatal(err)
	}
	last, err = chunks.GetLastMsgForSubject(ctx, contract.ChunkSubject("docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Header.Get(contract.HeaderSourceSeq); got != strconv.FormatUint(editSeq, 10) {
		t.Errorf("after a forged chunk set, KH_CHUNKS holds seq %s, want the edit at seq %d", got, editSeq)
	}
}

// A file's first chunk set is published without a lookup, expecting no
// message on its subject; a redelivery of its file event, to this
// chunker or to a fresh one, still leaves one chunk set.
func TestAFirstChunkSetIsPublishedOnce(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	subject := contract.FileSubject("docs", "new.md")
	put := contract.EncodeFileEvent(&contract.FileEvent{Schema: contract.SchemaVersion, Repo: "docs", Path: "new.md", Content: "# New\n\nFresh text.\n"})
	ack, err := srv.JS.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: put})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		w, err := New(Config{}, Deps{NC: srv.NC, Redactor: noRedaction{}})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := w.handle(ctx, &bus.Message{Subject: subject, Seq: ack.Sequence, Data: put, Header: nats.Header{}}); err != nil {
				t.Fatalf("chunker %d: handle: %v", i, err)
			}
		}
	}
	chunks, err := srv.JS.Stream(ctx, contract.StreamChunks)
	if err != nil {
		t.Fatal(err)
	}
	info, err := chunks.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 || info.State.LastSeq != 1 {
		t.Errorf("KH_CHUNKS holds %d messages, last sequence %d; want the one chunk set at sequence 1", info.State.Msgs, info.State.LastSeq)
	}
	last, err := chunks.GetLastMsgForSubject(ctx, contract.ChunkSubject("docs", "new.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Header.Get(contract.HeaderSourceSeq); got != strconv.FormatUint(ack.Sequence, 10) {
		t.Errorf("the chunk set comes from seq %s, want %d", got, ack.Sequence)
	}
}
