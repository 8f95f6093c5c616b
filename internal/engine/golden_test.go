package engine

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

var update = flag.Bool("update", false, "rewrite the golden ranking file")

// TestGoldenRanking runs the queries of testdata/rank over its small docs
// folder through the real chunker, indexer and engine, and compares the top
// three hits of each with testdata/rank/golden.txt. Run with -update when a
// ranking change is intended, and review the diff.
func TestGoldenRanking(t *testing.T) {
	const dir = "testdata/rank"
	e := NewEngine(Limits{})
	seq := uint64(0)
	err := filepath.WalkDir(filepath.Join(dir, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "docs"), path)
		rel = filepath.ToSlash(rel)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			return err
		}
		seq++
		cs := &contract.ChunkSet{Repo: "docs", Path: rel, FileSeq: seq, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: chunks}
		e.Apply(contract.DocKey("docs", rel), indexer.BuildDoc(cs, e.Analyzer()), seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	qf, err := os.Open(filepath.Join(dir, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	var out strings.Builder
	sc := bufio.NewScanner(qf)
	for sc.Scan() {
		q := sc.Text()
		if strings.TrimSpace(q) == "" {
			continue
		}
		r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 3, NoSnippet: true})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		fmt.Fprintf(&out, "%s\n", q)
		for i, h := range r.Hits {
			fmt.Fprintf(&out, "  %d. %s § %s\n", i+1, h.Path, strings.Join(h.HeadingPath, " > "))
		}
	}
	golden := filepath.Join(dir, "golden.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("ranking changed; run go test ./internal/query -run Golden -update if intended\n--- got\n%s\n--- want\n%s", got, want)
	}
}
