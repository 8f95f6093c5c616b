package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestHalf(t *testing.T) {
	dev := 0
	const n = 2000
	for i := range n {
		id := fmt.Sprintf("q-%d", i)
		h := Half(id)
		if h != Dev && h != Test {
			t.Fatalf("Half(%q) = %q", id, h)
		}
		if Half(id) != h {
			t.Fatalf("Half(%q) changed between calls", id)
		}
		if h == Dev {
			dev++
		}
	}
	// A fair coin gives 1000 ± 22 (one standard deviation); allow 4.5.
	if dev < 900 || dev > 1100 {
		t.Errorf("%d of %d IDs in dev; want about half", dev, n)
	}
	// The rule is part of the committed sets: changing it moves queries
	// between halves. These follow from SHA-256 (first byte even = dev).
	// SHA-256 first bytes: "" e3, "a" ca, "c" 2e, "e" 3f, "nats-01" 33.
	for id, want := range map[string]string{"": Test, "a": Dev, "c": Dev, "e": Test, "nats-01": Test} {
		if got := Half(id); got != want {
			t.Errorf("Half(%q) = %s, want %s", id, got, want)
		}
	}
}

// writeCorpus writes a tiny Markdown corpus under corpora/name.
func writeCorpus(t *testing.T, corpora, name string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		writeFile(t, filepath.Join(corpora, name), p, text)
	}
}

func TestWriteAndLoadSets(t *testing.T) {
	dir := t.TempDir()
	judged := make([]Judged, 0, 20)
	for i := range 20 {
		judged = append(judged, Judged{ID: fmt.Sprintf("q%02d", i), Text: fmt.Sprintf("question %d", i), Rel: map[string]int{"b.md": 1, "a.md": 2}})
	}
	set := Set{Corpus: "docs", StripFrontMatter: []string{"summary"}}
	if err := WriteSet(filepath.Join(dir, "one"), set, judged); err != nil {
		t.Fatal(err)
	}
	if err := WriteSet(filepath.Join(dir, "two"), Set{Corpus: "other"}, judged[:3]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "not-a-set"), 0o755); err != nil {
		t.Fatal(err)
	}
	sets, err := LoadSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Name != "one" || sets[1].Name != "two" || sets[0].Corpus != "docs" ||
		!reflect.DeepEqual(sets[0].StripFrontMatter, []string{"summary"}) || sets[1].StripFrontMatter != nil {
		t.Fatalf("sets %+v", sets)
	}
	seen := map[string]string{}
	for _, half := range []string{Dev, Test} {
		qs, qrels, err := sets[0].Load(half)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if Half(q.ID) != half {
				t.Errorf("%s in %s, want %s", q.ID, half, Half(q.ID))
			}
			if prev, ok := seen[q.ID]; ok {
				t.Errorf("%s in both %s and %s", q.ID, prev, half)
			}
			seen[q.ID] = half
			if !reflect.DeepEqual(qrels[q.ID], map[string]int{"a.md": 2, "b.md": 1}) {
				t.Errorf("%s judged %v", q.ID, qrels[q.ID])
			}
		}
	}
	if len(seen) != 20 {
		t.Errorf("%d queries over both halves, want 20", len(seen))
	}
	data, err := os.ReadFile(filepath.Join(dir, "one", Dev, "qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(data), "\n"); lines[0] != "query-id\tcorpus-id\tscore" || !strings.HasSuffix(lines[1], "\ta.md\t2") {
		t.Errorf("qrels start %q", lines[:2])
	}
	if _, _, err := sets[0].Load("train"); err == nil {
		t.Error("half train: want an error")
	}
}

func TestLoadSetRejects(t *testing.T) {
	mk := func(t *testing.T, meta string, files map[string]string) Set {
		t.Helper()
		dir := t.TempDir()
		writeFile(t, dir, SetFile, meta)
		for p, text := range files {
			writeFile(t, dir, p, text)
		}
		s, err := LoadSet(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, meta := range []string{`{"corpus": ""}`, `{"corpus": "../x"}`, `{"corpus": "a/b"}`, `{"corpus": "x", "extra": 1}`, `not json`} {
		dir := t.TempDir()
		writeFile(t, dir, SetFile, meta)
		if _, err := LoadSet(dir); err == nil {
			t.Errorf("set.json %s: want an error", meta)
		}
	}
	if _, err := LoadSets(t.TempDir()); err == nil {
		t.Error("folder without sets: want an error")
	}
	devID, testID := "c", "e" // see TestHalf
	tests := map[string]map[string]string{
		"query in the wrong half": {"dev/queries.jsonl": `{"id":"` + testID + `","text":"x"}`, "dev/qrels.tsv": testID + "\tp.md\t1\n"},
		"unjudged query":          {"dev/queries.jsonl": `{"id":"` + devID + `","text":"x"}`, "dev/qrels.tsv": ""},
		"judged unknown query":    {"dev/queries.jsonl": `{"id":"` + devID + `","text":"x"}`, "dev/qrels.tsv": devID + "\tp.md\t1\nzz\tp.md\t1\n"},
		"missing qrels":           {"dev/queries.jsonl": `{"id":"` + devID + `","text":"x"}`},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			s := mk(t, `{"corpus": "docs"}`, files)
			if _, _, err := s.Load(Dev); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestRunSets(t *testing.T) {
	corpora := t.TempDir()
	writeCorpus(t, corpora, "zoo", map[string]string{
		"otters.md": "---\nsummary: \"Playful river mammals\"\n---\n\n# Otters\n\nOtters swim in rivers and eat fish.\n",
		"owls.md":   "---\nsummary: \"Night hunters\"\n---\n\n# Owls\n\nOwls hunt mice at night.\n",
		"bees.md":   "# Bees\n\nBees make honey. Mammals do not.\n",
	})
	sets := t.TempDir()
	// Queries whose IDs fall in dev (checked below).
	questions := []Judged{
		{ID: "c", Text: "which animal swims in rivers", Rel: map[string]int{"otters.md": 2}},
		{ID: "q-night", Text: "night hunters", Rel: map[string]int{"owls.md": 1}},
	}
	for _, q := range questions {
		if Half(q.ID) != Dev {
			t.Fatalf("fixture: %s is not in dev", q.ID)
		}
	}
	if err := WriteSet(filepath.Join(sets, "plain"), Set{Corpus: "zoo"}, questions); err != nil {
		t.Fatal(err)
	}
	summaries := []Judged{{ID: "c", Text: "playful mammals", Rel: map[string]int{"otters.md": 1}}}
	if err := WriteSet(filepath.Join(sets, "stripped"), Set{Corpus: "zoo", StripFrontMatter: []string{"summary"}}, summaries); err != nil {
		t.Fatal(err)
	}
	if err := WriteSet(filepath.Join(sets, "unstripped"), Set{Corpus: "zoo"}, summaries); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadSets(sets)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := RunSets(context.Background(), loaded, corpora, Dev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Scores{}
	for _, r := range reps {
		if r.Half != Dev || r.Corpus != "zoo" || r.Pages != 3 {
			t.Errorf("%s: half %s, corpus %s, %d pages", r.Set, r.Half, r.Corpus, r.Pages)
		}
		got[r.Set] = r.Scores
	}
	// plain: both questions find their page first (owls through its
	// summary, which is indexed there).
	if s := got["plain"]; s.Hit1 != 1 || s.Hit5 != 1 || !near(s.NDCG10, 1) {
		t.Errorf("plain %+v, want every figure 1", s)
	}
	// Unstripped, "playful mammals" finds the otters by their summary;
	// stripped, only bees mention mammals, and the otters are not found.
	if s := got["unstripped"]; s.Hit1 != 1 {
		t.Errorf("unstripped %+v, want hit@1 1", s)
	}
	if s := got["stripped"]; s.Hit5 != 0 || s.NDCG10 != 0 {
		t.Errorf("stripped %+v, want nothing found", s)
	}
	if _, err := RunSets(context.Background(), loaded, t.TempDir(), Dev, Options{}); err == nil {
		t.Error("missing corpus: want an error")
	}
}
