// Package indexdoc converts KH_INDEX documents, the wire form the indexer
// writes, into the search index's own document type.
package indexdoc

import (
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// Search returns doc in the index's own form: compact, each chunk keyed
// for conflict resolution by contract.SectionKey.
func Search(doc *contract.IndexDoc) *search.Doc {
	doc = doc.Compact()
	out := &search.Doc{
		Collection: doc.Collection, Repo: doc.Repo, Path: doc.Path, SourceSeq: doc.SourceSeq,
		Meta: search.Meta{Priority: doc.Meta.Priority, Type: doc.Meta.Type, Demote: doc.Meta.Demote}, Deleted: doc.Deleted,
		Vocab: doc.Vocab, Chunks: make([]search.Chunk, len(doc.Chunks)), EmbeddingModel: doc.EmbeddingModel,
	}
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		fields := make([]search.FieldTerms, len(c.Fields))
		for j, f := range c.Fields {
			fields[j] = search.FieldTerms{Field: f.Field, Terms: f.Terms, TFs: f.TFs}
		}
		out.Chunks[i] = search.Chunk{ID: c.ID, Ord: c.Ord, HeadingPath: c.HeadingPath, Title: c.Title, Text: c.Text, Markdown: c.Markdown,
			SectionKey: contract.SectionKey(doc.Path, c.HeadingPath), Boost: c.Boost, Fields: fields, Vec: c.Vec, Embedding: c.Embedding}
	}
	return out
}
