package indexer

import (
	"sync"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

func TestWriteNeverOverwritesANewerSequence(t *testing.T) {
	srv := natstest.Start(t, "")
	kv, err := srv.JS.KeyValue(t.Context(), contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(seq uint64) []byte {
		b, err := contract.EncodeIndexDoc(&contract.IndexDoc{Collection: contract.CollectionDocs, Path: "a.md", SourceSeq: seq})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	current := func() uint64 {
		e, err := kv.Get(t.Context(), "docs.r.k")
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := contract.IndexDocSeq(e.Value())
		return seq
	}
	if ok, err := Write(t.Context(), kv, "docs.r.k", 5, enc(5)); !ok || err != nil {
		t.Fatalf("first write: %v %v", ok, err)
	}
	if ok, err := Write(t.Context(), kv, "docs.r.k", 3, enc(3)); ok || err != nil {
		t.Errorf("stale write: written=%v err=%v, want skipped", ok, err)
	}
	if ok, err := Write(t.Context(), kv, "docs.r.k", 5, enc(5)); !ok || err != nil {
		t.Errorf("same sequence again (replay): written=%v err=%v, want written", ok, err)
	}
	// Racing writers of every sequence from 6 to 45: the newest wins.
	var wg sync.WaitGroup
	for seq := uint64(6); seq <= 45; seq++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Write(t.Context(), kv, "docs.r.k", seq, enc(seq)); err != nil {
				t.Errorf("write %d: %v", seq, err)
			}
		}()
	}
	wg.Wait()
	if got := current(); got != 45 {
		t.Errorf("after racing writers the value is from sequence %d, want 45", got)
	}
}
