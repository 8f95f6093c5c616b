package indexer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/natstest"
)

// TestReplayKBKeepsANewerRecord: a replay folds KH_KNOWLEDGE as it stood
// when it started; a record the live indexer has since moved past keeps
// its newer state, because replay writes KH_KB by compare-and-set as the
// indexer does. An entry the replay finds behind is rewritten.
func TestReplayKBKeepsANewerRecord(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := t.Context()
	save := func(id, task string) uint64 {
		ev := &kb.Event{Schema: contract.SchemaVersion, Type: kb.EventSaved, ID: id, At: time.Now().UTC(),
			Save: &kb.SaveRequest{Task: task, Content: "content of " + task, Types: []string{kb.TypeStrategy}, Score: 3}}
		data, _ := json.Marshal(ev)
		ack, err := srv.JS.Publish(ctx, contract.KnowledgeSubject(id), data)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	save("aaa", "first task")
	save("bbb", "second task")
	records, err := srv.JS.KeyValue(ctx, contract.BucketKB)
	if err != nil {
		t.Fatal(err)
	}
	// The live indexer is ahead on aaa (a later event) and behind on bbb.
	ahead := kb.Entry{ID: "aaa", Task: "newer state", State: kb.StateActive, Seq: 1000}
	data, _ := json.Marshal(ahead)
	if _, err := records.Put(ctx, "aaa", data); err != nil {
		t.Fatal(err)
	}
	n, err := ReplayKB(ctx, srv.JS, kb.Folder{})
	if err != nil || n != 2 {
		t.Fatalf("replay: %d entries, %v", n, err)
	}
	read := func(id string) kb.Entry {
		e, err := records.Get(ctx, id)
		if err != nil {
			t.Fatalf("record %s: %v", id, err)
		}
		var out kb.Entry
		if err := json.Unmarshal(e.Value(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read("aaa"); got.Seq != 1000 || got.Task != "newer state" {
		t.Errorf("replay overwrote a newer record: %+v", got)
	}
	if got := read("bbb"); got.Task != "second task" || got.Seq == 0 {
		t.Errorf("replay did not write the record it rebuilt: %+v", got)
	}
}
