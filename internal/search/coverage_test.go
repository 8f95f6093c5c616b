package search

import "testing"

func TestCoverage(t *testing.T) {
	ix, err := New(Params{K1: 1.2, Fields: []Field{{Name: "title", Weight: 1}, {Name: "body", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Put("r/a.md", &Doc{Repo: "r", Path: "a.md", SourceSeq: 1, Vocab: []string{"telegram", "bot", "token"}, Chunks: []Chunk{
		{ID: "a1", Fields: []FieldTerms{{Field: "title", Terms: []uint32{0}, TFs: []uint32{1}}, {Field: "body", Terms: []uint32{1, 2}, TFs: []uint32{1, 1}}}},
		{ID: "a2", Fields: []FieldTerms{{Field: "title", Terms: []uint32{0}, TFs: []uint32{1}}}},
	}}, nil)
	ix.Put("r/b.md", &Doc{Repo: "r", Path: "b.md", SourceSeq: 2, Vocab: []string{"token"}, Chunks: []Chunk{
		{ID: "b1", Fields: []FieldTerms{{Field: "body", Terms: []uint32{0}, TFs: []uint32{3}}}},
	}}, nil)
	terms := []Term{
		{Text: "telegram", Weight: 1, Group: 0},
		{Text: "bot", Weight: 1, Group: 1},
		{Text: "bots", Weight: 0.2, Group: 1}, // not in the index
		{Text: "token", Weight: 1, Group: 2},
		{Text: "absent", Weight: 1, Group: 3},
	}
	hits, _ := ix.Search(Query{Terms: terms, Limit: 10})
	matches, weights := ix.Coverage(hits, terms)
	if len(weights) != 4 || weights[3] != 0 || weights[1] <= weights[0] {
		t.Errorf("weights %v: want 4, the absent word's 0, a rarer word's higher", weights)
	}
	want := map[string]uint64{"a1": 0b111, "a2": 0b001, "b1": 0b100}
	chunks := map[string]int{"a1": 2, "a2": 2, "b1": 1}
	if len(hits) != 3 {
		t.Fatalf("%d hits, want 3", len(hits))
	}
	for i, h := range hits {
		if matches[i] != want[h.Entry.ID] {
			t.Errorf("%s: groups %b, want %b", h.Entry.ID, matches[i], want[h.Entry.ID])
		}
		if h.Entry.Source.Chunks != chunks[h.Entry.ID] {
			t.Errorf("%s: source of %d chunks, want %d", h.Entry.ID, h.Entry.Source.Chunks, chunks[h.Entry.ID])
		}
	}
}

func TestOutlineCoverage(t *testing.T) {
	ix, err := New(Params{K1: 1.2, OutlineField: "heading", Fields: []Field{{Name: "heading", Weight: 1}, {Name: "body", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// a.md has "telegram" in one section's heading and "bot" in another's;
	// "token" only in a body. b.md has no headings.
	ix.Put("r/a.md", &Doc{Repo: "r", Path: "a.md", SourceSeq: 1, Vocab: []string{"telegram", "bot", "token"}, Chunks: []Chunk{
		{ID: "a1", Fields: []FieldTerms{{Field: "heading", Terms: []uint32{0}, TFs: []uint32{1}}, {Field: "body", Terms: []uint32{2}, TFs: []uint32{1}}}},
		{ID: "a2", Fields: []FieldTerms{{Field: "heading", Terms: []uint32{1}, TFs: []uint32{1}}}},
	}}, nil)
	ix.Put("r/b.md", &Doc{Repo: "r", Path: "b.md", SourceSeq: 2, Vocab: []string{"telegram", "token"}, Chunks: []Chunk{
		{ID: "b1", Fields: []FieldTerms{{Field: "body", Terms: []uint32{0, 1}, TFs: []uint32{1, 3}}}},
	}}, nil)
	terms := []Term{{Text: "telegram", Weight: 1, Group: 0}, {Text: "bot", Weight: 1, Group: 1}, {Text: "token", Weight: 1, Group: 2}}
	hits, _ := ix.Search(Query{Terms: terms, Limit: 10})
	var a, b *Source
	for _, h := range hits {
		switch h.Entry.Source.Path {
		case "a.md":
			a = h.Entry.Source
		case "b.md":
			b = h.Entry.Source
		}
	}
	if a == nil || b == nil {
		t.Fatalf("hits %v: want both pages", hits)
	}
	groups, weights := ix.OutlineCoverage([]*Source{a, b}, terms)
	if len(weights) != 3 {
		t.Fatalf("weights %v: want 3", weights)
	}
	if groups[0] != 0b011 || groups[1] != 0 {
		t.Errorf("outline groups %b %b, want 11 (telegram, bot: headings of two sections) and 0", groups[0], groups[1])
	}
}

// RepoShares follows puts and removals.
func TestRepoShares(t *testing.T) {
	ix, err := New(Params{K1: 1.2, Fields: []Field{{Name: "body", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	doc := func(repo, path string, chunks int) *Doc {
		d := &Doc{Repo: repo, Path: path, SourceSeq: 1, Vocab: []string{"word"}}
		for range chunks {
			d.Chunks = append(d.Chunks, Chunk{Fields: []FieldTerms{{Field: "body", Terms: []uint32{0}, TFs: []uint32{1}}}})
		}
		return d
	}
	ix.Put("a/1", doc("a", "1.md", 3), nil)
	if shares, n := ix.RepoShares([]string{"a", "b"}); n != 1 || shares[0] != 1 || shares[1] != 0 {
		t.Errorf("one repository: shares %v of %d", shares, n)
	}
	ix.Put("b/1", doc("b", "1.md", 1), nil)
	ix.Put("a/1", doc("a", "1.md", 1), nil) // replaced: 1 entry, not 4
	if shares, n := ix.RepoShares([]string{"a", "b"}); n != 2 || shares[0] != 0.5 || shares[1] != 0.5 {
		t.Errorf("two repositories: shares %v of %d", shares, n)
	}
	ix.Put("b/1", &Doc{Repo: "b", Path: "1.md", Deleted: true}, nil)
	if shares, n := ix.RepoShares([]string{"a", "b"}); n != 1 || shares[0] != 1 || shares[1] != 0 {
		t.Errorf("after removal: shares %v of %d", shares, n)
	}
}
