package engine

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/semantic"
)

// Tool search limits; Limits.MaxToolLimit may lower or raise the cap.
const (
	DefaultToolLimit = 8
	MaxToolLimit     = 50
	// minPrefixRunes is the shortest query that counts as a name prefix.
	minPrefixRunes = 3
)

// ToolCut is what makes a ranked tool a result of a tool search. Every
// catalog tool gets a score (the n-grams of the query words, typo and
// feedback terms, smoothing and the blended cosine all reach far), so the
// score alone does not tell a match from the rest: a tool is a result when
// it matches by words or by meaning, and scores at least MinShare times
// the second best such tool (runnerUp). It matches by words when its name, keywords or
// description hold a query word other than a request word (requestWords;
// unless the query has nothing else), a word of its family
// (search.Index.Related), or the correction of a misspelt word (one that
// neither the catalog nor the word vectors know). It matches by meaning
// when its cosine with the query stands out from the catalog's
// (blender.standing) by at least MeaningZ, or by NearZ when its words hold
// a neighbour of a query word (semantic expansion), and exceeds the
// catalog's median cosine by at least MinGap; with semantic matching off,
// nothing matches by meaning. A cosine is judged against
// the catalog's rather than against a fixed bar because pooled vectors of
// any text lean the same way: in a catalog of a dozen tools a query's
// cosines with all of them lie between 0.6 and 0.9, relevant or not.
// Exact names and name prefixes are always results. The values were
// chosen on MetaTool's dev half and small catalogs (docs/performance.md).
type ToolCut struct {
	MeaningZ, NearZ float64
	// MinGap is the least a cosine that stands out must also exceed the
	// catalog's median cosine by: in a small catalog whose cosines barely
	// spread, a tiny margin can be several deviations.
	MinGap   float64
	MinShare float64
}

// toolMatch says how a tool matched a query: byWords, byMeaning, both, or
// neither (0).
type toolMatch uint8

const (
	byWords toolMatch = 1 << iota
	byMeaning
)

// label returns the contract's name of m.
func (m toolMatch) label() string {
	switch m {
	case byWords:
		return contract.MatchWords
	case byMeaning:
		return contract.MatchMeaning
	case byWords | byMeaning:
		return contract.MatchWordsMeaning
	}
	return ""
}

// SearchTools ranks tools for a task: exact name match (case-insensitive,
// also "select:Name") first, then name-prefix matches, then text relevance
// over name, keywords and description (toolTerms, feedback, smoothing,
// the blended cosine), of the tools that match by words or meaning
// (ToolCut). Filters apply before the limit; total counts every result.
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
		t := toolOf(en)
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
	sc := e.scoring
	st := e.semanticTable(req.Semantic, q)
	words := e.toolWords(q)
	terms, evidence := e.toolTerms(words, st)
	var blend *blender
	if st != nil {
		blend = e.toolBlender(st, words, filter)
	}
	hits, _ := e.tools.Search(search.Query{Terms: terms, Filter: filter, Limit: limit + 64})
	if sc.FeedbackWeight > 0 && len(hits) > 0 {
		// Feedback comes from the best tools of the blended ranking.
		first := hits
		if blend != nil {
			first = bestHits(blend.fuse(hits), sc.FeedbackDocs)
		}
		terms = append(terms, e.feedbackTerms(first, terms, sc)...)
		hits, _ = e.tools.Search(search.Query{Terms: terms, Filter: filter, Limit: limit + 64})
	}
	if blend != nil {
		hits = blend.fuse(hits)
		sortHits(hits)
	}
	if sc.SmoothWeight > 0 {
		// Smoothing only raises scores, so hits below the head stay there.
		head := hits[:min(len(hits), limit+sc.SmoothDocs)]
		e.tools.Smooth(head, sc.SmoothDocs, sc.SmoothWeight, catalog.IsGram)
	}

	matches := e.toolMatches(hits, evidence, blend, filter)
	floor := sc.ToolCut.MinShare * runnerUp(hits, matches)

	type ranked struct {
		entry *search.Entry
		bm25  float64
		tier  string
	}
	byEntry := make(map[*search.Entry]*ranked, len(hits))
	var all []*ranked
	maxBM := 0.0
	for i, h := range hits {
		if matches[i] == 0 || h.Score < floor {
			continue
		}
		r := &ranked{entry: h.Entry, bm25: h.Score, tier: matches[i].label()}
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
		tier := ""
		switch tool := toolOf(en).Name; {
		case strings.EqualFold(tool, name):
			tier = contract.MatchExact
		case prefixOK && hasPrefixFold(tool, name):
			tier = contract.MatchPrefix
		default:
			return true
		}
		r := byEntry[en]
		if r == nil {
			r = &ranked{entry: en}
			byEntry[en] = r
			all = append(all, r)
		}
		r.tier = tier
		return true
	})
	total := len(all)
	// Tiers become score offsets larger than any text score, so scores
	// still descend monotonically down the list.
	offset := func(tier string) float64 {
		switch tier {
		case contract.MatchExact:
			return 2 * (maxBM + 1)
		case contract.MatchPrefix:
			return maxBM + 1
		}
		return 0
	}
	sort.Slice(all, func(i, j int) bool {
		si, sj := all[i].bm25+offset(all[i].tier), all[j].bm25+offset(all[j].tier)
		if si != sj {
			return si > sj
		}
		return toolOf(all[i].entry).Name < toolOf(all[j].entry).Name
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
		t := toolOf(r.entry)
		h := contract.ToolHit{Name: t.Name, Score: r.bm25 + offset(r.tier), Match: r.tier}
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

// toolEvidence holds the terms of a tool query that tie a tool to it
// (ToolCut): words, the terms a tool matches by words, and near, the
// neighbours of query words.
type toolEvidence struct {
	words, near []search.Term
}

// toolTerms turns a tool query's words (toolWords) into scored terms: each
// word at its weight, then, unless it is a request word, its
// character n-grams, its word family and its typo expansions, each at a
// share of that weight. It also returns the terms that are evidence of a
// match (ToolCut).
func (e *Engine) toolTerms(words []toolWord, st *semantic.Table) ([]search.Term, toolEvidence) {
	sc := e.scoring
	terms := make([]search.Term, 0, 8*len(words))
	var ev toolEvidence
	onlyRequests := !slices.ContainsFunc(words, func(w toolWord) bool { return !w.request })
	for i, w := range words {
		terms = append(terms, search.Term{Text: w.term, Weight: w.weight, Group: i})
		if !w.request || onlyRequests {
			ev.words = append(ev.words, search.Term{Text: w.term, Weight: 1})
		}
		if w.request {
			continue
		}
		if sc.GramWeight > 0 {
			grams := catalog.Grams(w.term)
			for _, g := range grams {
				// Every n-gram is a group of its own: they add up.
				terms = append(terms, search.Term{Text: g, Weight: w.weight * sc.GramWeight / float64(len(grams)), Group: len(words) + len(terms)})
			}
		}
		if sc.RelatedWeight > 0 {
			for _, x := range e.tools.Related(w.term, maxExpansions) {
				terms = append(terms, search.Term{Text: x.Term, Weight: w.weight * sc.RelatedWeight, Group: i})
				ev.words = append(ev.words, search.Term{Text: x.Term, Weight: 1})
			}
		}
		// A typo expansion is a correction when the word is not a word
		// the catalog or the vectors know; otherwise it is a guess.
		misspelt := e.tools.DF(w.term) == 0 && (st == nil || st.Index(w.term) < 0)
		for _, x := range typos(e.tools, w.term) {
			terms = append(terms, search.Term{Text: x.Term, Weight: w.weight * fuzzyWeight[x.Edits], Group: i})
			if misspelt {
				ev.words = append(ev.words, search.Term{Text: x.Term, Weight: 1})
			}
		}
		if st != nil {
			near := e.expand(st, e.tools, sc.ToolsSemantic, sc.Tools.IDFPower, w.term, w.weight, i)
			terms = append(terms, near...)
			ev.near = append(ev.near, near...)
		}
	}
	return terms, ev
}

// toolMatches returns how each hit matched the query (ToolCut): byWords
// when it holds a term of ev.words, byMeaning when its cosine stands out
// from the catalog's (blend: nil when semantic matching is off).
func (e *Engine) toolMatches(hits []search.Hit, ev toolEvidence, blend *blender, filter func(*search.Entry) bool) []toolMatch {
	cut := e.scoring.ToolCut
	out := make([]toolMatch, len(hits))
	var z, gap []float64
	if blend != nil {
		z, gap = blend.standing(hits)
	}
	// The tools that hold a term of each kind, from the postings: as
	// many as the catalog has (and room for tools added meanwhile), so
	// that none is left out.
	holders := func(terms []search.Term) map[*search.Entry]bool {
		if len(terms) == 0 {
			return nil
		}
		found, _ := e.tools.Search(search.Query{Terms: terms, Filter: filter, Limit: e.tools.Stats().Chunks + 64})
		set := make(map[*search.Entry]bool, len(found))
		for _, h := range found {
			set[h.Entry] = true
		}
		return set
	}
	words, near := holders(ev.words), holders(ev.near)
	for i, h := range hits {
		if words[h.Entry] {
			out[i] |= byWords
		}
		switch {
		case z == nil && near[h.Entry], // no cosines: a neighbour is all there is
			z != nil && gap[i] >= cut.MinGap && (z[i] >= cut.MeaningZ || near[h.Entry] && z[i] >= cut.NearZ):
			out[i] |= byMeaning
		}
	}
	return out
}

// runnerUp returns the second best score of the hits that match, or the
// best when only one does: the cut-off's floor is a share of it, since the
// best tool's own terms feed back into its score (Scoring.FeedbackWeight),
// and when every tool holds the query's words equally, little else sets
// the best apart.
func runnerUp(hits []search.Hit, matches []toolMatch) float64 {
	var best, second float64
	n := 0
	for i, h := range hits {
		if matches[i] == 0 {
			continue
		}
		n++
		switch {
		case h.Score > best:
			best, second = h.Score, best
		case h.Score > second:
			second = h.Score
		}
	}
	if n < 2 {
		return best
	}
	return second
}

// toolWord is a distinct term of a tool query with its weight.
type toolWord struct {
	term    string
	weight  float64
	request bool // one of requestWords
}

// toolWords returns the distinct terms of a tool query in order of first
// occurrence. A term weighs 1, PartWeight when it only occurs as a part of
// a compound word, RequestWeight times that when it is a request word, and
// more when it is repeated (QueryK3).
func (e *Engine) toolWords(q string) []toolWord {
	sc := e.scoring
	tokens := e.an.Analyze(q)
	var words []toolWord
	index := make(map[string]int, len(tokens))
	var counts []int
	for i, tk := range tokens {
		weight := 1.0
		if i > 0 && tokens[i-1].Pos == tk.Pos {
			// The whole of a compound comes first at its position, then
			// its parts.
			weight = sc.PartWeight
		}
		j, seen := index[tk.Term]
		if !seen {
			j = len(words)
			index[tk.Term] = j
			words = append(words, toolWord{term: tk.Term, request: e.request[tk.Term]})
			counts = append(counts, 0)
		}
		words[j].weight = max(words[j].weight, weight)
		counts[j]++
	}
	for j := range words {
		if words[j].request {
			words[j].weight *= sc.RequestWeight
		}
		if k3, n := sc.QueryK3, float64(counts[j]); k3 > 0 {
			words[j].weight *= (k3 + 1) * n / (k3 + n)
		}
	}
	return words
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
			if !seen[t] && !catalog.IsGram(t) {
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

// hasPrefixFold reports whether s starts with prefix under Unicode case
// folding, as strings.EqualFold compares, without allocating.
func hasPrefixFold(s, prefix string) bool {
	for _, p := range prefix {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !foldEqual(r, p) {
			return false
		}
		s = s[size:]
	}
	return true
}

// foldEqual reports whether two runes are equal under simple case folding.
func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// toolOf returns the descriptor of a tools-collection entry.
func toolOf(en *search.Entry) *contract.Tool {
	t, _ := en.Source.Extra.(*contract.Tool)
	if t == nil {
		return &contract.Tool{}
	}
	return t
}
