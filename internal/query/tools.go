package query

import (
	"sort"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

// Tool search limits; Limits.MaxToolLimit may lower or raise the cap.
const (
	DefaultToolLimit = 8
	MaxToolLimit     = 50
	// minPrefixRunes is the shortest query that counts as a name prefix.
	minPrefixRunes = 3
)

// Match tiers of a tool hit: an exact name always comes first, then name
// prefixes, then text relevance.
const (
	matchExact  = "exact"
	matchPrefix = "prefix"
	matchText   = "text"
)

// SearchTools ranks tools for a task: exact name match (case-insensitive,
// also "select:Name") first, then name-prefix matches, then BM25F over
// name, keywords and description. Filters apply before the limit.
func (e *Engine) SearchTools(req contract.ToolSearchRequest) (*contract.ToolSearchResponse, error) {
	start := time.Now()
	q, err := checkQuery(req.Query)
	if err != nil {
		return nil, err
	}
	limit := req.Limit
	switch {
	case limit <= 0:
		limit = DefaultToolLimit
	case limit > e.limits.MaxToolLimit:
		limit = e.limits.MaxToolLimit
	}
	switch req.Type {
	case "", "any", contract.ToolCore, contract.ToolSourced:
	default:
		return nil, badRequest("type %q is not core, sourced or any", req.Type)
	}
	filter := func(en *search.Entry) bool {
		t := en.Source.Tool
		if t == nil {
			return false
		}
		if req.Type != "" && req.Type != "any" && t.Type != req.Type {
			return false
		}
		return req.Instance == "" || t.Instance == req.Instance
	}

	name := strings.ToLower(q)
	if rest, ok := strings.CutPrefix(name, "select:"); ok {
		name = strings.TrimSpace(rest)
		q = strings.TrimSpace(q[len("select:"):])
		if q == "" {
			return nil, badRequest("select: needs a tool name")
		}
	}
	terms, _ := e.queryTerms(e.tools, q)
	hits, total := e.tools.Search(search.Query{Terms: terms, Filter: filter, Limit: limit + 64})
	if fb := e.feedback; fb.FeedbackWeight > 0 && len(hits) > 0 {
		terms = append(terms, e.feedbackTerms(hits, terms, fb)...)
		hits, total = e.tools.Search(search.Query{Terms: terms, Filter: filter, Limit: limit + 64})
	}

	type ranked struct {
		entry *search.Entry
		bm25  float64
		tier  string
	}
	byEntry := make(map[*search.Entry]*ranked, len(hits))
	var all []*ranked
	maxBM := 0.0
	for _, h := range hits {
		r := &ranked{entry: h.Entry, bm25: h.Score, tier: matchText}
		byEntry[h.Entry] = r
		all = append(all, r)
		maxBM = max(maxBM, h.Score)
	}
	// Name tiers come from a scan of the catalog (hundreds of tools).
	prefixOK := !strings.ContainsAny(name, " \t") && len([]rune(name)) >= minPrefixRunes
	e.tools.EachEntry(func(en *search.Entry) bool {
		if !filter(en) {
			return true
		}
		lower := strings.ToLower(en.Source.Tool.Name)
		tier := ""
		switch {
		case lower == name:
			tier = matchExact
		case prefixOK && strings.HasPrefix(lower, name):
			tier = matchPrefix
		default:
			return true
		}
		r := byEntry[en]
		if r == nil {
			r = &ranked{entry: en}
			byEntry[en] = r
			all = append(all, r)
			total++
		}
		r.tier = tier
		return true
	})
	// Tiers become score offsets larger than any text score, so scores
	// still descend monotonically down the list.
	offset := map[string]float64{matchExact: 2 * (maxBM + 1), matchPrefix: maxBM + 1, matchText: 0}
	sort.Slice(all, func(i, j int) bool {
		si, sj := all[i].bm25+offset[all[i].tier], all[j].bm25+offset[all[j].tier]
		if si != sj {
			return si > sj
		}
		return all[i].entry.Source.Tool.Name < all[j].entry.Source.Tool.Name
	})
	if len(all) > limit {
		all = all[:limit]
	}
	detail := req.Detail
	if detail != contract.DetailName && detail != contract.DetailFull {
		detail = contract.DetailNameDesc
	}
	resp := &contract.ToolSearchResponse{Query: req.Query, Hits: make([]contract.ToolHit, 0, len(all)), Total: total}
	for _, r := range all {
		t := r.entry.Source.Tool
		h := contract.ToolHit{Name: t.Name, Score: r.bm25 + offset[r.tier], Match: r.tier}
		if detail != contract.DetailName {
			h.Description, h.Type, h.Instance, h.Seq = t.Description, t.Type, t.Instance, r.entry.Source.SourceSeq
		}
		if detail == contract.DetailFull {
			h.InputSchema = t.InputSchema
		}
		resp.Hits = append(resp.Hits, h)
	}
	resp.TookMicros = time.Since(start).Microseconds()
	return resp, nil
}

// feedbackTerms picks the terms that the best first-pass tools share,
// weighted by those tools' scores, as extra low-weight query terms.
func (e *Engine) feedbackTerms(hits []search.Hit, have []search.Term, fb Scoring) []search.Term {
	seen := map[string]bool{}
	group := 0
	for _, t := range have {
		seen[t.Text] = true
		group = max(group, t.Group+1)
	}
	weight := map[string]float64{}
	top := hits[0].Score
	for _, h := range hits[:min(fb.FeedbackDocs, len(hits))] {
		for _, t := range e.tools.EntryTerms(h.Entry) {
			if !seen[t] && !strings.HasPrefix(t, "#") {
				weight[t] += h.Score / top
			}
		}
	}
	type tw struct {
		t string
		w float64
	}
	var list []tw
	for t, w := range weight {
		list = append(list, tw{t, w})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].w != list[j].w {
			return list[i].w > list[j].w
		}
		return list[i].t < list[j].t
	})
	var out []search.Term
	for i, x := range list[:min(fb.FeedbackTerms, len(list))] {
		out = append(out, search.Term{Text: x.t, Weight: fb.FeedbackWeight * x.w / list[0].w, Group: group + i})
	}
	return out
}
