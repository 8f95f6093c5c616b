// Package indexer turns chunk sets into KH_INDEX documents: raw term
// frequencies per field plus display text, written one value per file and
// never over a newer stream sequence.
package indexer

import (
	"strings"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
)

// BuildDoc analyses a chunk set into the index document that replaces the
// file's previous one. A deleted set becomes a tombstone.
func BuildDoc(cs *contract.ChunkSet, an *analysis.Analyzer) *contract.IndexDoc {
	doc := &contract.IndexDoc{
		Schema:     contract.SchemaVersion,
		Analyzer:   analysis.Version,
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
	// Title and summary come from the file's front matter and repeat on
	// every chunk: analyse each distinct text once and share the
	// (read-only) vector.
	memo := map[string]map[string]int{}
	vector := func(text string) map[string]int {
		if strings.TrimSpace(text) == "" {
			return nil
		}
		if m, ok := memo[text]; ok {
			return m
		}
		m := map[string]int{}
		if an.TermFreqs(text, m) == 0 {
			m = nil
		}
		memo[text] = m
		return m
	}
	for _, c := range cs.Chunks {
		terms := map[string]map[string]int{}
		add := func(field string, m map[string]int) {
			if m != nil {
				terms[field] = m
			}
		}
		add(contract.FieldTitle, vector(c.Title))
		add(contract.FieldSummary, vector(joinNonEmpty("\n", c.Summary, c.ReadWhen)))
		add(contract.FieldHeading, analyse(an, strings.Join(c.HeadingPath, "\n")))
		add(contract.FieldBody, analyse(an, c.Text))
		ic := contract.IndexChunk{
			ID:          c.ID,
			Ord:         c.Ord,
			HeadingPath: c.HeadingPath,
			Title:       c.Title,
			Text:        c.Text,
			Terms:       terms,
		}
		if isNavigation(c.HeadingPath) {
			ic.Boost = navigationBoost
		}
		doc.Chunks = append(doc.Chunks, ic)
	}
	return doc
}

// analyse returns the term frequencies of text, or nil when it has none.
func analyse(an *analysis.Analyzer, text string) map[string]int {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m := map[string]int{}
	if an.TermFreqs(text, m) == 0 {
		return nil
	}
	return m
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
