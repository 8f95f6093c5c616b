package query

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// loadCorpus indexes a Markdown directory into a fresh engine without NATS.
func loadCorpus(tb testing.TB, dir string) (*Engine, []string) {
	tb.Helper()
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("corpus %s not available", dir)
	}
	e := NewEngine(Limits{})
	an := analysis.New()
	var queries []string
	var seq uint64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".md" && filepath.Ext(path) != ".mdx") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			return nil
		}
		seq++
		cs := &contract.ChunkSet{Repo: "bench", Path: rel, FileSeq: seq, Chunks: chunks}
		e.Apply(contract.DocKey("bench", rel), indexer.BuildDoc(cs, an), seq)
		for _, c := range chunks {
			if n := len(c.HeadingPath); n > 1 && len(queries) < 500 {
				queries = append(queries, strings.ToLower(c.HeadingPath[n-1]))
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e, queries
}

func BenchmarkSearchDocs(b *testing.B) {
	e, queries := loadCorpus(b, "../../../shared/corpora/openclaw-docs")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.SearchDocs(contract.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
	}
}
