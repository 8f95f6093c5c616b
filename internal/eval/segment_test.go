package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/segment"
)

// restored returns a view of c whose engine was written to a segment
// file and restored from it.
func restored(t *testing.T, c *Collection) *Collection {
	t.Helper()
	snaps, rev := c.engine.Snapshot()
	var cols []segment.Collection
	for _, name := range engine.Collections {
		cols = append(cols, segment.Collection{Name: name, Snapshot: snaps[name]})
	}
	path := filepath.Join(t.TempDir(), "index.seg")
	if err := segment.Write(path, segment.Meta{Revision: rev}, cols, engine.EncodeExtra); err != nil {
		t.Fatal(err)
	}
	seg, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]*search.Snapshot{}
	for _, name := range engine.Collections {
		if loaded[name], err = seg.Collection(name, engine.DecodeExtra); err != nil {
			t.Fatal(err)
		}
	}
	v := *c
	v.engine = newCollection(c.files).engine
	if err := v.engine.Restore(loaded, rev); err != nil {
		t.Fatal(err)
	}
	return &v
}

// sameRankings checks that two collections rank the queries alike, to
// the last score bit, Depth documents deep.
func sameRankings(t *testing.T, name string, a, b *Collection, queries []Query) {
	t.Helper()
	differ := 0
	for _, q := range queries {
		ra, err := a.Search(q.Text, Depth)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Search(q.Text, Depth)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ra, rb) {
			if differ++; differ <= 3 {
				t.Errorf("%s: query %s ranks otherwise", name, q.ID)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%s: %d of %d queries rank otherwise", name, differ, len(queries))
	} else {
		t.Logf("%s: %d queries rank alike", name, len(queries))
	}
}

// Every judged set ranks every query of both halves, with the same
// scores, from an index restored from its segment file as from the heap
// index it was written from: the judged docs sets on their corpora,
// SciFact and MetaTool.
func TestSegmentRanksEveryJudgedSetAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every judged corpus")
	}
	ctx := context.Background()
	corpora := filepath.Join("..", "..", "..", "shared", "corpora")
	sets, err := LoadSets(filepath.Join("testdata", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ corpus, strip string }
	cols := map[key]*Collection{}
	for _, s := range sets {
		dir := filepath.Join(corpora, s.Corpus)
		if !exists(dir) {
			t.Logf("%s: corpus %s not available", s.Name, dir)
			continue
		}
		k := key{s.Corpus, filepath.Join(s.StripFrontMatter...)}
		if cols[k] == nil {
			c, err := IndexMarkdownWith(ctx, dir, MarkdownOptions{StripFrontMatter: s.StripFrontMatter})
			if err != nil {
				t.Fatal(err)
			}
			cols[k] = c
		}
		c := cols[k]
		r := restored(t, c)
		for _, half := range []string{Dev, Test} {
			queries, _, err := s.Load(half)
			if err != nil {
				t.Fatal(err)
			}
			sameRankings(t, s.Name+"/"+half, c, r, queries)
		}
	}
	for _, tc := range []struct {
		name  string
		tools bool
	}{{"scifact", false}, {"metatool", true}} {
		dir := filepath.Join("..", "..", "..", "shared", "eval", tc.name)
		if !exists(dir) {
			t.Logf("%s not available", dir)
			continue
		}
		docs, err := LoadCorpus(filepath.Join(dir, "corpus.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		queries, err := LoadQueries(filepath.Join(dir, "queries.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		index := IndexDocs
		if tc.tools {
			index = IndexTools
		}
		c, err := index(ctx, docs, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameRankings(t, tc.name, c, restored(t, c), queries)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
