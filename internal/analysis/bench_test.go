package analysis

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadCorpus reads every .md file under dir, skipping the benchmark when
// the corpus is absent.
func loadCorpus(tb testing.TB, dir string) []string {
	tb.Helper()
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("corpus %s: %v", dir, err)
	}
	var docs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
		docs = append(docs, string(b))
		return nil
	})
	if err != nil {
		tb.Fatalf("read corpus %s: %v", dir, err)
	}
	if len(docs) == 0 {
		tb.Skipf("corpus %s has no .md files", dir)
	}
	return docs
}

// reportCPU reports throughput per CPU second of the process (cpuMB/s)
// besides the usual MB/s, which is wall-clock based and unreliable on a
// shared machine. It reports nothing where CPU time is not available.
func reportCPU(b *testing.B, size int64, start time.Duration) {
	if d := cpuTime() - start; start > 0 && d > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/d.Seconds()/1e6, "cpuMB/s")
	}
}

func corpusBytes(docs []string) int64 {
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// benchCorpus runs the analyzer entry points over every document of the
// corpus. "warm" reuses one Analyzer (its term cache is filled after the
// first pass); "cold" builds a new Analyzer per pass, as a fresh indexer
// process would.
func benchCorpus(b *testing.B, dir string) {
	docs := loadCorpus(b, dir)
	size := corpusBytes(docs)
	b.Run("TermFreqs/warm", func(b *testing.B) {
		a := New()
		b.SetBytes(size)
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			for _, d := range docs {
				a.TermFreqs(d, make(map[string]int))
			}
		}
		reportCPU(b, size, start)
	})
	b.Run("TermFreqs/cold", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			a := New()
			for _, d := range docs {
				a.TermFreqs(d, make(map[string]int))
			}
		}
		reportCPU(b, size, start)
	})
	b.Run("AppendTerms", func(b *testing.B) {
		a := New()
		b.SetBytes(size)
		b.ReportAllocs()
		var terms []string
		start := cpuTime()
		for b.Loop() {
			for _, d := range docs {
				terms = a.AppendTerms(terms[:0], d)
			}
		}
		reportCPU(b, size, start)
	})
	b.Run("Analyze", func(b *testing.B) {
		a := New()
		b.SetBytes(size)
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			for _, d := range docs {
				a.Analyze(d)
			}
		}
		reportCPU(b, size, start)
	})
}

// BenchmarkAnalyzeCorpus measures throughput on the English OpenClaw docs.
func BenchmarkAnalyzeCorpus(b *testing.B) {
	benchCorpus(b, "../../../shared/corpora/openclaw-docs")
}

// BenchmarkAnalyzeCorpusZhCN measures throughput on the Chinese OpenClaw
// docs, which exercise the CJK bigram path.
func BenchmarkAnalyzeCorpusZhCN(b *testing.B) {
	benchCorpus(b, "../../../shared/corpora/openclaw-docs-zh-CN")
}
