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
		loadDocs(docs)
	}
}

// loadDocs puts docs into a new index, each under its ordinal as key.
func loadDocs(docs []*contract.IndexDoc) *Index {
	ix, _ := New(docsLikeParams())
	for d, doc := range docs {
		put(ix, fmt.Sprint(d), doc, nil)
	}
	return ix
}

// BenchmarkLoadLargeVocabulary measures loading a replica whose
// vocabulary runs to millions of terms, as twenty languages give: 10k
// documents of 8 chunks, each chunk 150 distinct body terms, two thirds
// drawn from 50k common words and one third from 4M rare ones. The
// garbage collector's work over the term tables is part of the figure.
func BenchmarkLoadLargeVocabulary(b *testing.B) {
	const (
		nDocs, nChunks, perChunk = 10000, 8, 150
		common, rare             = 50_000, 4_000_000
	)
	rng := uint64(1)
	next := func(n uint64) uint64 { // xorshift, deterministic
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng % n
	}
	docs := make([]*contract.IndexDoc, nDocs)
	for d := range docs {
		doc := &contract.IndexDoc{Collection: "docs", Repo: "r", Path: fmt.Sprint(d), SourceSeq: uint64(d + 1)}
		var vb contract.VocabBuilder
		for c := range nChunks {
			for t := range perChunk {
				if t%3 == 2 {
					vb.Add(fmt.Sprintf("r%d", next(rare)), 1)
				} else {
					vb.Add(fmt.Sprintf("c%d", next(next(common)+1)), 1) // skewed to low ids
				}
			}
			ft, _ := vb.Field("body")
			doc.Chunks = append(doc.Chunks, contract.IndexChunk{ID: fmt.Sprint(c), Ord: c, Fields: []contract.FieldTerms{ft}})
		}
		doc.Vocab = vb.Vocab()
		docs[d] = doc
	}
	b.ReportAllocs()
	for b.Loop() {
		ix := loadDocs(docs)
		b.ReportMetric(float64(ix.terms.Len()), "terms")
	}
}
