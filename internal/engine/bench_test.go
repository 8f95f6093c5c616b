package engine_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/engine/enginetest"
)

func BenchmarkSearchDocs(b *testing.B) {
	e, queries := enginetest.Load(b, "../../../shared/corpora/openclaw-docs")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.SearchDocs(contract.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchDocsCold is BenchmarkSearchDocs with the CPU caches
// evicted before each query (a 16 MB sweep, untimed), as a query service
// finds them when requests come one at a time between other work: in
// knowhub up, searches take about this long rather than the warm time.
func BenchmarkSearchDocsCold(b *testing.B) {
	e, queries := enginetest.Load(b, "../../../shared/corpora/openclaw-docs")
	sweep := make([]byte, 16<<20)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j := 0; j < len(sweep); j += 64 {
			sweep[j]++
		}
		b.StartTimer()
		if _, err := e.SearchDocs(contract.SearchRequest{Query: queries[i%len(queries)]}); err != nil {
			b.Fatal(err)
		}
	}
}

// readJSONL decodes every line of a JSONL file into a T.
func readJSONL[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("collection file %s not available", path)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkSearchTools searches MetaTool's 199 tools with its queries, at
// the default limit; BenchmarkSearchToolsLexical does the same with
// semantic matching off, to show its cost in one binary.
func BenchmarkSearchTools(b *testing.B) { benchmarkSearchTools(b, nil) }

func BenchmarkSearchToolsLexical(b *testing.B) {
	off := false
	benchmarkSearchTools(b, &off)
}

func benchmarkSearchTools(b *testing.B, semantic *bool) {
	const dir = "../../../shared/eval/metatool"
	type record struct{ ID, Text string }
	e := engine.NewEngine(engine.Limits{})
	for i, d := range readJSONL[record](b, dir+"/corpus.jsonl") {
		t := &contract.Tool{Name: d.ID, Description: d.Text, Type: contract.ToolCore}
		e.Apply(contract.ToolIndexKey(d.ID), catalog.BuildDoc(t, uint64(i+1), e.Analyzer()), uint64(i+1))
	}
	queries := readJSONL[record](b, dir+"/queries.jsonl")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.SearchTools(contract.ToolSearchRequest{Query: queries[i%len(queries)].Text, Semantic: semantic}); err != nil {
			b.Fatal(err)
		}
	}
}
