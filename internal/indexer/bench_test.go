package indexer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
)

// loadChunkSets chunks every Markdown file under dir, as the chunker would.
func loadChunkSets(b *testing.B, dir string) ([]*contract.ChunkSet, int64) {
	b.Helper()
	var sets []*contract.ChunkSet
	var bytes int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			return nil // skipped by the chunker too
		}
		bytes += int64(len(data))
		sets = append(sets, &contract.ChunkSet{Schema: contract.SchemaVersion, Repo: "docs", Path: filepath.ToSlash(rel), FileSeq: uint64(len(sets) + 1), Chunks: chunks})
		return nil
	})
	if err != nil {
		b.Skipf("corpus %s: %v", dir, err)
	}
	return sets, bytes
}

// BenchmarkBuildAndEncode measures the indexer's work per file: analysing
// a chunk set into an index document and encoding it for KH_INDEX, on the
// English and the Chinese OpenClaw docs. It reports the encoded size per
// source byte.
func BenchmarkBuildAndEncode(b *testing.B) {
	for _, corpus := range []string{"openclaw-docs", "openclaw-docs-zh-CN"} {
		b.Run(corpus, func(b *testing.B) {
			sets, size := loadChunkSets(b, "../../../shared/corpora/"+corpus)
			an := analysis.New()
			b.SetBytes(size)
			b.ReportAllocs()
			var encoded int64
			for b.Loop() {
				encoded = 0
				for _, cs := range sets {
					v, err := contract.EncodeIndexDoc(BuildDoc(cs, an))
					if err != nil {
						b.Fatal(err)
					}
					encoded += int64(len(v))
				}
			}
			b.ReportMetric(float64(encoded)/float64(size), "encoded/source")
		})
	}
}
