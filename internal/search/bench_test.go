package search

import (
	"fmt"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// BenchmarkPut measures building the index: 200 documents of 12 chunks,
// each with four fields of 40 distinct terms from a 20k vocabulary.
func BenchmarkPut(b *testing.B) {
	docs := make([]*contract.IndexDoc, 200)
	for d := range docs {
		doc := &contract.IndexDoc{Collection: "docs", Repo: "r", Path: fmt.Sprint(d), SourceSeq: uint64(d + 1)}
		for c := range 12 {
			terms := map[string]map[string]int{}
			for f, name := range []string{"title", "summary", "heading", "body"} {
				m := map[string]int{}
				for t := range 40 {
					m[fmt.Sprintf("t%d", (d*7919+c*104729+f*13+t*31)%20000)] = 1 + t%3
				}
				terms[name] = m
			}
			doc.Chunks = append(doc.Chunks, contract.IndexChunk{ID: fmt.Sprint(c), Ord: c, Terms: terms})
		}
		docs[d] = doc
	}
	b.ReportAllocs()
	for b.Loop() {
		ix, _ := New(DocsParams())
		for d, doc := range docs {
			ix.Put(fmt.Sprint(d), doc, nil)
		}
	}
}
