package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/eval"
)

func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runEval(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(t.Context(), append([]string{"eval"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// zooCorpus writes a three-page corpus and returns the corpora folder.
func zooCorpus(t *testing.T) string {
	t.Helper()
	corpora := t.TempDir()
	writeTestFile(t, corpora, "zoo/otters.md", "---\nsummary: \"Playful river mammals\"\n---\n\n# Otters\n\nOtters swim in rivers and eat fish.\n")
	writeTestFile(t, corpora, "zoo/owls.md", "---\nsummary: \"Nocturnal raptors\"\n---\n\n# Owls\n\nOwls hunt mice at night.\n")
	writeTestFile(t, corpora, "zoo/bees.md", "# Bees\n\nBees make honey. Mammals do not.\n")
	return corpora
}

func TestEvalMarkdownHitsAndStripping(t *testing.T) {
	corpora := zooCorpus(t)
	q := writeTestFile(t, t.TempDir(), "q.jsonl", `{"id":"1","text":"playful mammals"}`+"\n"+`{"id":"2","text":"owls mice"}`+"\n")
	r := writeTestFile(t, t.TempDir(), "r.tsv", "1\totters.md\t1\n2\towls.md\t1\n")
	docs := filepath.Join(corpora, "zoo")

	out, errOut, code := runEval(t, "--markdown", docs, "--queries", q, "--qrels", r, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep map[string]float64
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep["hit@1"] != 1 || rep["hit@5"] != 1 || rep["queries"] != 2 {
		t.Errorf("unstripped: %v, want hit@1 and hit@5 of 1 over 2 queries", rep)
	}

	// Without the summary, only bees.md mentions mammals: query 1 misses.
	out, errOut, code = runEval(t, "--markdown", docs, "--queries", q, "--qrels", r, "--strip-front-matter", "summary, read_when")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "hit@1       0.5000") || !strings.Contains(out, "hit@5       0.5000") {
		t.Errorf("stripped output lacks hit@1 and hit@5 of 0.5:\n%s", out)
	}

	for _, args := range [][]string{
		{"--markdown", docs, "--queries", q, "--qrels", r, "--strip-front-matter", "summary,,title"},
		{"DIR", "--strip-front-matter", "summary"},
	} {
		if _, _, code := runEval(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestEvalSets(t *testing.T) {
	corpora := zooCorpus(t)
	sets := t.TempDir()
	// "c" falls in dev, "e" in test (see eval.TestHalf).
	questions := []eval.Judged{
		{ID: "c", Text: "which animal swims in rivers", Rel: map[string]int{"otters.md": 2}},
		{ID: "e", Text: "honey", Rel: map[string]int{"bees.md": 1}},
	}
	if err := eval.WriteSet(filepath.Join(sets, "animals"), eval.Set{Corpus: "zoo"}, questions); err != nil {
		t.Fatal(err)
	}
	summaries := []eval.Judged{{ID: "c", Text: "playful mammals", Rel: map[string]int{"otters.md": 1}}, {ID: "e", Text: "nocturnal raptors", Rel: map[string]int{"owls.md": 1}}}
	if err := eval.WriteSet(filepath.Join(sets, "summaries"), eval.Set{Corpus: "zoo", StripFrontMatter: []string{"summary"}}, summaries); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runEval(t, "--sets", sets, "--half", "dev", "--corpora", corpora)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and two rows:\n%s", out)
	}
	want := [][]string{
		{"set", "corpus", "half", "queries", "hit@1", "hit@5", "nDCG@10"},
		{"animals", "zoo", "dev", "1", "1.000", "1.000", "1.0000"},
		{"summaries", "zoo", "dev", "1", "0.000", "0.000", "0.0000"}, // the summary is stripped
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d: %q, want %q", i, got, want[i])
		}
	}

	out, errOut, code = runEval(t, "--sets", sets, "--half", "test", "--corpora", corpora, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var reps []struct {
		Set     string  `json:"set"`
		Half    string  `json:"half"`
		Queries int     `json:"queries"`
		Hit1    float64 `json:"hit@1"`
		Hit5    float64 `json:"hit@5"`
		NDCG    float64 `json:"ndcg@10"`
		Pages   int     `json:"pages"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(reps) != 2 || reps[0].Set != "animals" || reps[0].Half != "test" || reps[0].Queries != 1 || reps[0].Hit1 != 1 || reps[0].Pages != 3 ||
		reps[1].Set != "summaries" || reps[1].Hit5 != 0 {
		t.Errorf("json %+v", reps)
	}

	for _, args := range [][]string{
		{"--sets", sets, "--half", "train", "--corpora", corpora},
		{"--sets", sets, "--markdown", corpora},
		{"--sets", sets, "--strip-front-matter", "summary"},
	} {
		if _, _, code := runEval(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if _, errOut, code := runEval(t, "--sets", sets, "--corpora", t.TempDir()); code != 1 || !strings.Contains(errOut, "corpus") {
		t.Errorf("missing corpus: exit %d, %q; want 1 and a word on the corpus", code, errOut)
	}
}

// --tune prints a step for every value of every parameter and the best
// setting; --ablate a row per component; together they are refused.
func TestEvalTuneAndAblate(t *testing.T) {
	corpora := zooCorpus(t)
	sets := t.TempDir()
	questions := []eval.Judged{{ID: "c", Text: "which animal swims in rivers", Rel: map[string]int{"otters.md": 2}}}
	if err := eval.WriteSet(filepath.Join(sets, "animals"), eval.Set{Corpus: "zoo"}, questions); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runEval(t, "--sets", sets, "--half", "dev", "--corpora", corpora, "--tune", "1")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	steps := 1
	for _, p := range eval.PageParams() {
		steps += len(p.Values)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != steps+2 || !strings.HasPrefix(lines[len(lines)-1], "best: ") || !strings.Contains(lines[1], "1.000/1.0000") {
		t.Errorf("tune: want a header, %d steps scoring 1.000/1.0000 at the start and the best:\n%s", steps, out)
	}
	out, errOut, code = runEval(t, "--sets", sets, "--half", "dev", "--corpora", corpora, "--ablate")
	if code != 0 {
		t.Fatalf("ablate: exit %d: %s", code, errOut)
	}
	names, _ := eval.Ablation(engine.DefaultPageScoring())
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != len(names)+1 || !strings.Contains(lines[1], "1/1 1.0000") {
		t.Errorf("ablate: want a header and %d rows, the default's 1/1 1.0000:\n%s", len(names), out)
	}
	if _, _, code := runEval(t, "--sets", sets, "--corpora", corpora, "--tune", "1", "--ablate"); code != 2 {
		t.Errorf("--tune with --ablate: exit %d, want 2", code)
	}
}
