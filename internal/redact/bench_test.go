package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds the openclaw documentation used by the corpus test and
// the benchmark.
const corpusDir = "../../../shared/corpora/openclaw-docs"

// corpus returns the Markdown files under corpusDir by path, or skips tb
// when the corpus is absent.
func corpus(tb testing.TB) map[string]string {
	tb.Helper()

	files := map[string]string{}
	err := filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if os.IsNotExist(err) || err == nil && len(files) == 0 {
		tb.Skipf("corpus %s absent", corpusDir)
	}
	if err != nil {
		tb.Fatalf("read corpus: %v", err)
	}
	return files
}

func BenchmarkRedact(b *testing.B) {
	files := corpus(b)
	texts := make([]string, 0, len(files))
	total := 0
	for _, s := range files {
		texts = append(texts, s)
		total += len(s)
	}
	r, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			r.Redact(s)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(nil); err != nil {
			b.Fatal(err)
		}
	}
}
