package eval

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(tb testing.TB, dir, name, content string) string {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestLoadQrels(t *testing.T) {
	want := Qrels{
		"q1": {"d1": 2, "d2": 1},
		"q2": {"d3": 1},
	}
	tests := []struct {
		name, content string
	}{
		{"header", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td3\t1\n"},
		{"no header", "q1\td1\t2\nq1\td2\t1\nq2\td3\t1\n"},
		{"trec four columns", "q1 0 d1 2\nq1 0 d2 1\nq2 0 d3 1\n"},
		// Grade 0 and negative grades are judged non-relevant: dropped, and
		// q3 with nothing relevant disappears. Blank lines and CRLF are fine.
		{"non-relevant dropped", "q1\td1\t2\r\nq1\td2\t1\n\nq1\td9\t0\nq2\td3\t1\nq2\td4\t-1\nq3\td5\t0\n"},
		{"later grade wins", "q1\td1\t2\nq1\td2\t1\nq2\td3\t1\nq2\td4\t1\nq2\td4\t0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadQrels(writeFile(t, t.TempDir(), "qrels.tsv", tt.content))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("LoadQrels = %v, want %v", got, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		load func(string) error
		file string
		want string
	}{
		{"qrels grade", loadQrels, "q1\td1\t1\nq1\td2\tyes\n", "qrels.tsv:2: grade \"yes\" is not an integer"},
		{"qrels columns", loadQrels, "q1\td1\n", "qrels.tsv:1: want 3 or 4 columns"},
		{"corpus json", loadCorpus, "{\"id\": \"a\"}\n{\"id\": \n", "corpus.jsonl:2:"},
		{"corpus repeat", loadCorpus, "{\"id\": \"a\"}\n{\"id\": \"a\"}\n", "corpus.jsonl:2: document id \"a\" repeats"},
		{"query without id", loadQueries, "{\"text\": \"hello\"}\n", "queries.jsonl:1: query without an id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := map[string]string{"qrels": "qrels.tsv", "corpus": "corpus.jsonl", "query": "queries.jsonl"}[strings.Fields(tt.name)[0]]
			err := tt.load(writeFile(t, dir, name, tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := LoadQueries(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error = %v, want not-exist", err)
	}
}

func loadQrels(p string) error   { _, err := LoadQrels(p); return err }
func loadCorpus(p string) error  { _, err := LoadCorpus(p); return err }
func loadQueries(p string) error { _, err := LoadQueries(p); return err }

func TestLoadJSONL(t *testing.T) {
	dir := t.TempDir()
	docs, err := LoadCorpus(writeFile(t, dir, "corpus.jsonl",
		`{"id": "1", "title": "T", "text": "body", "metadata": {}}`+"\n\n"+`{"id": "2", "text": "no title"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Doc{{"1", "T", "body"}, {"2", "", "no title"}}; !reflect.DeepEqual(docs, want) {
		t.Errorf("LoadCorpus = %v, want %v", docs, want)
	}
	qs, err := LoadQueries(writeFile(t, dir, "queries.jsonl", `{"id": "q2", "text": "b"}`+"\n"+`{"id": "q1", "text": "a"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Query{{"q2", "b"}, {"q1", "a"}}; !reflect.DeepEqual(qs, want) {
		t.Errorf("LoadQueries = %v, want %v (file order)", qs, want)
	}
}
