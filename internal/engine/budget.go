package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/highlight"
	"github.com/knowhub/knowhub/internal/search"
)

// tokens estimates what s costs a model.
func (e *Engine) tokens(s string) int {
	if e.limits.Tokens != nil {
		return e.limits.Tokens(s)
	}
	return (len(s) + 3) / 4
}

// budgeted answers a search with a token budget: the hits, best first,
// each with its whole section while it fits in what is left (a hit that
// does not fit is left out, so a shorter one further down may still
// come); the best hit alone over the budget is cut at a paragraph. Then,
// while the budget lasts, the sections before and after each hit on its
// page, nearest first. Each section costs its text plus its location
// (repository, path and heading path), as a model reads both.
func (e *Engine) budgeted(req contract.SearchRequest, q string, kept []search.Hit, shadowed []Shadow, total int,
	ps *highlight.Matcher, termSet map[string]bool, start time.Time) *contract.SearchResponse {
	resp := &contract.SearchResponse{Query: q, Hits: []contract.SearchHit{}, Total: total}
	left := req.MaxTokens
	cost := func(en *search.Entry, text string) int {
		return e.tokens(en.Source.Repo+" "+en.Source.Path+" "+strings.Join(en.HeadingPath, " ")) + e.tokens(text)
	}
	// Sections are told apart by page and id: a coordinator's hits and the
	// pages it fetches from shards are distinct entries of one section.
	type section struct{ key, id string }
	shown := map[section]bool{}
	var chosen []search.Hit
	for i, h := range kept {
		text, cut := sectionBody(h.Entry), false
		c := cost(h.Entry, text)
		if c > left {
			if i > 0 || len(chosen) > 0 {
				continue
			}
			text = e.cutToTokens(text, left-cost(h.Entry, ""))
			if text == "" {
				break
			}
			c, cut = cost(h.Entry, text), true
		}
		hit := e.hit(h, ps, termSet)
		hit.Content, hit.ContentCut = text, cut
		resp.Hits = append(resp.Hits, hit)
		left -= c
		shown[section{h.Entry.Source.Key, h.Entry.ID}] = true
		chosen = append(chosen, h)
	}
	// The pages' context, nearest sections first, round-robin over the
	// hits so that the best hit's page does not take it all.
	pages := map[string][]*search.Entry{}
	for dist := 1; left > 0 && dist <= 3; dist++ {
		for _, h := range chosen {
			key := h.Entry.Source.Key
			page, ok := pages[key]
			if !ok {
				page = e.pageEntries(key)
				pages[key] = page
			}
			at := slices.IndexFunc(page, func(en *search.Entry) bool { return en.ID == h.Entry.ID })
			for _, j := range []int{at - dist, at + dist} {
				if at < 0 || j < 0 || j >= len(page) || shown[section{key, page[j].ID}] {
					continue
				}
				en := page[j]
				if c := cost(en, sectionBody(en)); c <= left {
					resp.Context = append(resp.Context, contract.ContextSection{Repo: en.Source.Repo, Path: en.Source.Path,
						HeadingPath: en.HeadingPath, ChunkID: en.ID, Of: h.Entry.ID, Text: sectionBody(en)})
					left -= c
					shown[section{key, en.ID}] = true
				}
			}
		}
	}
	resp.Tokens = req.MaxTokens - left
	for _, s := range shadowed {
		if shown[section{s.Winner.Entry.Source.Key, s.Winner.Entry.ID}] {
			w := s.Winner.Entry
			resp.Shadowed = append(resp.Shadowed, contract.ShadowedHit{SearchHit: e.hit(s.Hit, ps, termSet),
				ShadowedBy: w.Source.Repo + ":" + w.Source.Path + "#" + w.ID, Reason: s.Reason})
		}
	}
	resp.TookMicros = time.Since(start).Microseconds()
	return resp
}

// cutToTokens returns the longest run of whole paragraphs from the start
// of text that costs at most n tokens. A paragraph ends at a blank line
// outside a fenced code block, or at a line break where neither line is
// indented code, so a code block is never cut in half; when even the
// first paragraph is over n, it is cut after a line, then "" if no line
// fits.
func (e *Engine) cutToTokens(text string, n int) string {
	if e.tokens(text) <= n {
		return text
	}
	n -= e.tokens(" …")
	if n <= 0 {
		return ""
	}
	best := ""
	lines := strings.SplitAfter(text, "\n")
	fenced := false
	for i := range lines {
		if t := strings.TrimSpace(lines[i]); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
		}
		end := strings.Join(lines[:i+1], "")
		if e.tokens(end) > n {
			break
		}
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		// A boundary: a blank line follows, or the next line is not code
		// (indented) while this one is not either.
		blank := strings.TrimSpace(lines[i]) == "" || strings.TrimSpace(next) == ""
		code := strings.HasPrefix(lines[i], "    ") || strings.HasPrefix(lines[i], "\t") || strings.HasPrefix(next, "    ") || strings.HasPrefix(next, "\t")
		if blank && !code && !fenced || best == "" {
			best = end
		}
	}
	return strings.TrimRight(best, "\n") + " …"
}
