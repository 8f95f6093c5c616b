package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/eval"
)

const corpora = "../../../../shared/corpora"

// The committed sets are what the generator writes from its sources, so
// an edit of a question file or of the split rule cannot go unnoticed.
func TestCommittedSetsAreGenerated(t *testing.T) {
	if _, err := os.Stat(corpora); err != nil {
		t.Skip("corpora not available")
	}
	out := t.TempDir()
	if err := run(corpora, "questions", out); err != nil {
		t.Fatal(err)
	}
	for _, s := range sources {
		for _, f := range []string{eval.SetFile, "dev/queries.jsonl", "dev/qrels.tsv", "test/queries.jsonl", "test/qrels.tsv"} {
			want, err := os.ReadFile(filepath.Join(out, s.name, f))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("../testdata/docs", s.name, f))
			if err != nil {
				t.Fatalf("%s/%s: %v (run go run ./internal/eval/gen)", s.name, f, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s/%s differs from the generator's output: run go run ./internal/eval/gen", s.name, f)
			}
		}
	}
}

// Every set has queries in both halves, about half in each, and the
// hand-written sets have at least 50 questions each.
func TestSetSizes(t *testing.T) {
	sets, err := eval.LoadSets("../testdata/docs")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != len(sources) {
		t.Errorf("%d sets, want %d", len(sets), len(sources))
	}
	for _, s := range sets {
		n := map[string]int{}
		for _, half := range []string{eval.Dev, eval.Test} {
			qs, _, err := s.Load(half)
			if err != nil {
				t.Fatal(err)
			}
			n[half] = len(qs)
		}
		total := n[eval.Dev] + n[eval.Test]
		if total < 50 {
			t.Errorf("%s: %d queries, want at least 50", s.Name, total)
		}
		if n[eval.Dev]*3 < total || n[eval.Test]*3 < total {
			t.Errorf("%s: %d dev, %d test; want about half each", s.Name, n[eval.Dev], n[eval.Test])
		}
	}
}
