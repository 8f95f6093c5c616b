package engine

import (
	"fmt"
	"time"

	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/search"
)

// SearchKB ranks knowledge entries for a task: BM25F over task and
// content, filtered (scopes, fail-closed; types; author score; active
// state) before the cut, then blended with quality (kb.Rank).
func (e *Engine) SearchKB(req kb.SearchRequest) (*kb.SearchResponse, error) {
	start := time.Now()
	q, err := checkQuery(req.Query)
	if err != nil {
		return nil, err
	}
	req.Query = q
	if err := kb.ValidateSearch(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	f := kb.FilterOf(&req)
	filter := func(en *search.Entry) bool {
		entry, _ := en.Source.Extra.(*kb.Entry)
		return f.Allow(entry)
	}
	terms, _ := e.queryTerms(e.kb, q)
	hits, _ := e.kb.Search(search.Query{Terms: terms, Filter: filter, Limit: kb.PoolSize(req.Limit)})
	pool := make([]kb.Hit, 0, len(hits))
	for _, h := range hits {
		entry := h.Entry.Source.Extra.(*kb.Entry)
		pool = append(pool, kb.Hit{KBEntry: *entry, Relevance: h.Score})
	}
	ranked, total := kb.Rank(pool, f, req.Limit)
	resp := &kb.SearchResponse{Query: q, Hits: ranked, Total: total}
	if req.Format == kb.OutputPrompt {
		entries := make([]kb.Entry, len(ranked))
		for i, h := range ranked {
			entries[i] = h.KBEntry
		}
		resp.Prompt = kb.FormatPrompt(entries)
	}
	resp.TookMicros = time.Since(start).Microseconds()
	return resp, nil
}

// SimilarKB returns active entries whose task and content best match text
// among those with exactly the given scopes: the near-duplicate candidates
// of a save.
func (e *Engine) SimilarKB(text string, scopes []string, limit int) []kb.Candidate {
	terms, _ := e.queryTerms(e.kb, text)
	if len(terms) == 0 {
		return nil
	}
	hits, _ := e.kb.Search(search.Query{Terms: terms, Limit: limit, Filter: func(en *search.Entry) bool {
		entry, _ := en.Source.Extra.(*kb.Entry)
		return entry != nil && sameSet(entry.Scopes, scopes)
	}})
	out := make([]kb.Candidate, 0, len(hits))
	for _, h := range hits {
		out = append(out, kb.Candidate{Entry: h.Entry.Source.Extra.(*kb.Entry)})
	}
	return out
}

func sameSet(a, b []string) bool {
	m := make(map[string]bool, len(a))
	for _, s := range a {
		m[s] = true
	}
	n := make(map[string]bool, len(b))
	for _, s := range b {
		if !m[s] {
			return false
		}
		n[s] = true
	}
	return len(m) == len(n)
}
