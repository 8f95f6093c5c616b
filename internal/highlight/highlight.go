// Package highlight locates a query's terms in the text of index entries:
// the marked snippet of a hit, the spans that proximity scoring reads, and
// whether a quoted phrase occurs. It reports where terms stand and makes no
// ranking decision; the engine decides what a span or a phrase is worth.
package highlight

import (
	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/search"
)

// Terms returns how many distinct terms m locates.
func (m *Matcher) Terms() int { return len(m.terms) }

// MinSpan returns the smallest byte span of the entry's heading path and
// text that covers every distinct term found there, and how many distinct
// terms that is (a span is 0 when fewer than two are found).
func (m *Matcher) MinSpan(e *search.Entry) (span, matched int) {
	hits, _ := m.entryScan(e)
	return minSpan(hits)
}

// Snippet returns the passage of the entry's text, at most maxLen bytes cut
// at word boundaries, that holds the most distinct terms, with every word
// analysing to one of terms marked as **word**. Without a match it returns
// the start of the text.
func (m *Matcher) Snippet(an *analysis.Analyzer, e *search.Entry, terms map[string]bool, maxLen int) string {
	return snippetOf(an, e.Text, m.textHits(e), m, terms, maxLen)
}
