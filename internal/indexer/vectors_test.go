package indexer

import (
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A chunk set delivered again writes its version again, and keeps the
// vectors already folded into it; a newer version drops them.
func TestSameVersionKeepsItsEmbeddings(t *testing.T) {
	srv := natstest.Start(t, "")
	kv, err := srv.JS.KeyValue(t.Context(), contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(seq uint64) *contract.IndexDoc {
		return &contract.IndexDoc{Schema: contract.SchemaVersion, Collection: contract.CollectionDocs, Repo: "r", Path: "a.md", SourceSeq: seq,
			Chunks: []contract.IndexChunk{{ID: "c1", Text: "one"}, {ID: "c2", Text: "two"}}}
	}
	enc := func(d *contract.IndexDoc) []byte {
		b, err := contract.EncodeIndexDoc(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(d *contract.IndexDoc) {
		val := enc(d)
		if _, err := writeDoc(t.Context(), kv, "docs.r.k", d.SourceSeq, val, nil, func(cur []byte) []byte { return keepEmbeddings(d, cur, val) }); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() *contract.IndexDoc {
		e, err := kv.Get(t.Context(), "docs.r.k")
		if err != nil {
			t.Fatal(err)
		}
		d, err := contract.DecodeIndexDoc(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	write(doc(5))
	embedded := doc(5)
	if !AddEmbeddings(embedded, &contract.VectorSet{Model: "m", Vectors: []contract.SectionVector{{ChunkID: "c1", Vec: []byte{1, 2}}, {ChunkID: "c2", Vec: []byte{3, 4}}}}) {
		t.Fatal("AddEmbeddings changed nothing")
	}
	if _, err := Write(t.Context(), kv, "docs.r.k", 5, enc(embedded)); err != nil {
		t.Fatal(err)
	}
	write(doc(5))
	if d := stored(); d.EmbeddingModel != "m" || string(d.Chunks[1].Embedding) != "\x03\x04" {
		t.Fatalf("the same version written again lost its vectors: %+v", d)
	}
	write(doc(6))
	if d := stored(); d.EmbeddingModel != "" || d.Chunks[0].Embedding != nil {
		t.Fatalf("a newer version kept the older one's vectors: %+v", d)
	}
}
