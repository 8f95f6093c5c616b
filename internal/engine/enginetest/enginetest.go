// Package enginetest loads real corpora into an engine for tests and
// benchmarks, without NATS.
package enginetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/corpus"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/indexer"
)

// Load indexes a Markdown directory into a fresh engine without NATS
// and returns the queries `knowhub bench` asks of it. It skips the test
// when the directory is absent.
func Load(tb testing.TB, dir string) (*engine.Engine, []string) {
	tb.Helper()
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("corpus %s not available", dir)
	}
	e := engine.NewEngine(engine.Limits{})
	an := e.Analyzer()
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
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	// The queries `knowhub bench` asks.
	queries, err := corpus.Queries(dir, 500)
	if err != nil {
		tb.Fatal(err)
	}
	return e, queries
}
