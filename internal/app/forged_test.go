package app

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A chunk set whose file_seq is past anything KH_FILES has stored is
// forged: it never replaces a real file's entry, and later edits of the
// file are indexed. An entry forged before this check (its sequence past
// KH_FILES) is overwritten by the file's next version.
func TestForgedFileSeqDoesNotFreezeAFile(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "# Alpha\n\nThe original alpha page.\n")
	writeFile(t, filepath.Join(dir, "b.md"), "# Beta\n\nThe original beta page.\n")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: dir}))
	ctx := context.Background()
	forged := mustJSON(t, contract.ChunkSet{Schema: 1, Repo: "docs", Path: "a.md", FileSeq: math.MaxUint64,
		Chunks: []contract.Chunk{{ID: "x", Text: "forged zebra content"}}})
	if _, err := srv.JS.Publish(ctx, contract.ChunkSubject("docs", "a.md"), forged); err != nil {
		t.Fatal(err)
	}
	// A forgery already in the index, as one written before the check.
	doc := &contract.IndexDoc{Schema: 1, Collection: contract.CollectionDocs, Repo: "docs", Path: "b.md",
		SourceSeq: math.MaxUint64 - 1, Chunks: []contract.IndexChunk{{ID: "y", Text: "forged giraffe",
			Terms: map[string]map[string]int{contract.FieldBody: {"giraff": 1}}}}}
	val, err := contract.EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := srv.JS.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, contract.DocKey("docs", "b.md"), val); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.md"), "# Alpha\n\nThe edited alpha page mentions walruses.\n")
	writeFile(t, filepath.Join(dir, "b.md"), "# Beta\n\nThe edited beta page mentions penguins.\n")
	waitSearch(t, srv.NC, "walruses", "the edit of a.md after a forged chunk set", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
	waitSearch(t, srv.NC, "penguins", "the edit of b.md after a forged index entry", func(r *contract.SearchResponse) bool { return len(r.Hits) == 1 })
	for _, q := range []string{"zebra", "giraffe"} {
		if r := searchDocs(t, srv.NC, contract.SearchRequest{Query: q}); len(r.Hits) != 0 {
			t.Errorf("forged content %q is served: %v", q, paths(r))
		}
	}
}
