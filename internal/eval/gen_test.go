package eval

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestSummaryQueries(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "---\nsummary: \"Set up the  thing\"\ntitle: A\n---\n\n# A\n")
	writeFile(t, dir, "sub/b.mdx", "---\nsummary: Set up the thing\n---\n\n# B\n") // same summary, other spacing
	writeFile(t, dir, "c.md", "---\nsummary: >\n  Folded\n  summary\n---\n\n# C\n")
	writeFile(t, dir, "moved.md", "---\nsummary: \"Redirect to /a\"\n---\n\nThis page moved.\n")
	writeFile(t, dir, "none.md", "# No front matter\n")
	writeFile(t, dir, "empty.md", "---\ntitle: Only a title\n---\n\n# E\n")
	writeFile(t, dir, "list.md", "---\nsummary:\n  - not\n  - text\n---\n\n# L\n")
	writeFile(t, dir, "broken.md", "---\nsummary: \"open\ntitle: [x\n---\n")
	writeFile(t, dir, "notes.txt", "---\nsummary: not markdown\n---\n")
	writeFile(t, dir, ".hidden/h.md", "---\nsummary: hidden\n---\n")
	got, err := SummaryQueries(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Judged{
		{ID: "a", Text: "Set up the thing", Rel: map[string]int{"a.md": 1, "sub/b.mdx": 1}},
		{ID: "c", Text: "Folded summary", Rel: map[string]int{"c.md": 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if err := CheckPages(got, dir); err != nil {
		t.Error(err)
	}
	if err := CheckPages([]Judged{{ID: "x", Text: "x", Rel: map[string]int{"missing.md": 1}}}, dir); err == nil {
		t.Error("missing page: want an error")
	}
	if err := CheckPages([]Judged{{ID: "x", Text: "x", Rel: map[string]int{"sub": 1}}}, dir); err == nil {
		t.Error("folder as a page: want an error")
	}
}

func TestLoadJudged(t *testing.T) {
	dir := t.TempDir()
	ok := writeFile(t, dir, "ok.jsonl", `{"id":"q1","text":"how do I x","rel":{"a.md":2,"b/c.md":1}}

{"id":"q2","text":"y","rel":{"a.md":1}}
`)
	got, err := LoadJudged(ok)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "q1" || got[0].Rel["b/c.md"] != 1 || got[1].Text != "y" {
		t.Errorf("got %+v", got)
	}
	for name, line := range map[string]string{
		"repeated id":   `{"id":"q","text":"a","rel":{"a.md":1}}` + "\n" + `{"id":"q","text":"b","rel":{"a.md":1}}`,
		"no id":         `{"text":"a","rel":{"a.md":1}}`,
		"blank in id":   `{"id":"q 1","text":"a","rel":{"a.md":1}}`,
		"no text":       `{"id":"q","text":" ","rel":{"a.md":1}}`,
		"no page":       `{"id":"q","text":"a","rel":{}}`,
		"grade 0":       `{"id":"q","text":"a","rel":{"a.md":0}}`,
		"unknown field": `{"id":"q","text":"a","rel":{"a.md":1},"grade":2}`,
		"not json":      `id q`,
	} {
		p := writeFile(t, dir, "bad.jsonl", line+"\n")
		if _, err := LoadJudged(p); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if err := WriteSet(filepath.Join(dir, "s"), Set{Corpus: "c"}, nil); err == nil {
		t.Error("WriteSet without queries: want an error")
	}
}
