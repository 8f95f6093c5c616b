// Package indexer turns chunk sets into KH_INDEX documents: raw term
// frequencies per field plus display text, written one value per file and
// never over a newer stream sequence.
package indexer

import (
	"strings"
	"sync"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
)

// builders recycles vocabulary builders across documents: their maps and
// counters are scratch space.
var builders = sync.Pool{New: func() any { return new(contract.VocabBuilder) }}

// BuildDoc analyses a chunk set into the index document that replaces the
// file's previous one. A deleted set becomes a tombstone.
func BuildDoc(cs *contract.ChunkSet, an *analysis.Analyzer) *contract.IndexDoc {
	return BuildLearnedDoc(cs, an, nil)
}

// BuildLearnedDoc is BuildDoc where each section also gets the words that
// learned (the file's KH_LEARNED_WORDS record, or nil) holds for its
// heading path, as the field contract.FieldLearned.
func BuildLearnedDoc(cs *contract.ChunkSet, an *analysis.Analyzer, learned *contract.LearnedRecord) *contract.IndexDoc {
	doc := &contract.IndexDoc{
		Schema:     contract.SchemaVersion,
		Analyzer:   contract.DocsBuild(analysis.Version),
		Collection: contract.CollectionDocs,
		Repo:       cs.Repo,
		Path:       cs.Path,
		SourceSeq:  cs.FileSeq,
		Meta:       cs.Meta,
		Deleted:    cs.Deleted,
	}
	if cs.Deleted {
		return doc
	}
	doc.Chunks = make([]contract.IndexChunk, 0, len(cs.Chunks))
	// The document is built compact: each distinct term numbered once.
	// Title and summary come from the file's front matter and repeat on
	// every chunk: analyse each distinct text once and share its field.
	vb := builders.Get().(*contract.VocabBuilder)
	defer func() { vb.Reset(); builders.Put(vb) }()
	var terms []string
	field := func(name, text string) (contract.FieldTerms, bool) {
		if strings.TrimSpace(text) == "" {
			return contract.FieldTerms{}, false
		}
		terms = an.AppendTerms(terms[:0], text)
		for _, t := range terms {
			vb.Add(t, 1)
		}
		return vb.Field(name)
	}
	type memoKey struct{ field, text string }
	memo := map[memoKey]contract.FieldTerms{}
	shared := func(name, text string) (contract.FieldTerms, bool) {
		k := memoKey{name, text}
		if ft, ok := memo[k]; ok {
			return ft, ft.Field != ""
		}
		ft, ok := field(name, text)
		memo[k] = ft
		return ft, ok
	}
	for _, c := range cs.Chunks {
		var fields []contract.FieldTerms
		add := func(ft contract.FieldTerms, ok bool) {
			if ok {
				fields = append(fields, ft)
			}
		}
		// Fields in name order: body, heading, learned, summary, title.
		add(field(contract.FieldBody, c.Text))
		add(field(contract.FieldHeading, strings.Join(c.HeadingPath, "\n")))
		if words := learned.Words(c.HeadingPath); len(words) > 0 {
			add(field(contract.FieldLearned, strings.Join(words, "\n")))
		}
		add(shared(contract.FieldSummary, joinNonEmpty("\n", c.Summary, c.ReadWhen)))
		add(shared(contract.FieldTitle, c.Title))
		ic := contract.IndexChunk{
			ID:          c.ID,
			Ord:         c.Ord,
			HeadingPath: c.HeadingPath,
			Title:       c.Title,
			Text:        c.Text,
			Markdown:    c.Markdown,
			Fields:      fields,
		}
		if isNavigation(c.HeadingPath) {
			ic.Boost = navigationBoost
		}
		doc.Chunks = append(doc.Chunks, ic)
	}
	doc.Vocab = vb.Vocab()
	return doc
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// navigationBoost scales sections that only point elsewhere, so a list of
// links never outranks the content it links to.
const navigationBoost = 0.4

var navigationHeadings = map[string]bool{
	"related": true, "related pages": true, "related docs": true, "related topics": true,
	"related content": true, "see also": true, "next steps": true, "next": true,
	"learn more": true, "further reading": true, "more resources": true, "resources": true,
	"references": true, "links": true, "what's next": true, "what’s next": true, "read next": true,
}

// isNavigation reports whether a section's own heading names a navigation
// section.
func isNavigation(headingPath []string) bool {
	if len(headingPath) == 0 {
		return false
	}
	h := strings.ToLower(strings.Join(strings.Fields(headingPath[len(headingPath)-1]), " "))
	return navigationHeadings[strings.TrimRight(h, ":")]
}
