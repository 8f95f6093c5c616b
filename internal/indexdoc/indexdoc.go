// Package indexdoc converts KH_INDEX documents, the wire form the indexer
// writes, into the search index's own document type.
package indexdoc

import (
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/lang"
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
	if doc.Collection == contract.CollectionDocs && !doc.Deleted {
		out.Lang = pageLang(doc)
	}
	return out
}

// langSample is how much of a page's text its language is told from.
const langSample = 4 << 10

// pageLang returns the language of a docs page from its path and the
// start of its text (package lang). It is derived from what KH_INDEX
// holds, so an index of any layout gets it, and the same page always
// gets the same language.
func pageLang(doc *contract.IndexDoc) string {
	if l := lang.Folder(doc.Path); l != "" {
		return l
	}
	var b strings.Builder
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		if i == 0 {
			b.WriteString(c.Title)
			b.WriteByte('\n')
		}
		b.WriteString(strings.Join(c.HeadingPath, " "))
		b.WriteByte('\n')
		if c.Markdown != "" {
			b.WriteString(c.Markdown)
		} else {
			b.WriteString(c.Text)
		}
		b.WriteByte('\n')
		if b.Len() >= langSample {
			break
		}
	}
	return lang.Text(b.String())
}
