// Package query serves searches: an Engine holds the in-memory indexes of
// every collection, built from KH_INDEX values, and answers requests; the
// Service feeds it from a KV watch and exposes it as a NATS micro service
// and an HTTP API.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/highlight"
	"github.com/knowhub/knowhub/internal/indexdoc"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/lang"
	"github.com/knowhub/knowhub/internal/search"
)

// Limits on requests.
const (
	MaxQueryBytes = 4096
	snippetBytes  = 240
)

// Limits bound the number of hits a request gets.
type Limits struct {
	DefaultTopK  int // when a request names none
	MaxTopK      int // the most a request may ask for
	MaxToolLimit int // the most tools a request may ask for (default 50)
	// Tokens estimates the tokens a text costs a model, for budgeted
	// searches (SearchRequest.MaxTokens); the query replica passes the
	// estimate the chunker sizes sections by. Nil counts four bytes a
	// token.
	Tokens func(string) int
}

// ErrBadRequest marks errors caused by the request itself.
var ErrBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// Engine answers searches over in-memory indexes. It is safe for
// concurrent use.
type Engine struct {
	limits Limits
	an     *analysis.Analyzer
	docs   *search.Index
	tools  *search.Index
	kb     *search.Index

	scoring Scoring
	request map[string]bool // terms of requestWords
	sem     semState
	emb     Embeddings

	// shard and shardCount place the engine in a sharded deployment
	// (SetShard); shards, when set, are the shards it coordinates docs
	// searches across (SetShards).
	shard, shardCount int
	shards            Shards

	mu       sync.Mutex
	revision uint64 // last KH_INDEX revision applied
	changed  chan struct{}
}

// Scoring holds the ranking parameters of the collections, so they can be
// tuned by measurement (knowhub eval); DefaultScoring has the tuned values.
// All but Docs apply to tool search only.
type Scoring struct {
	Docs, Tools search.Params
	// RelatedWeight, when positive, also matches the tool vocabulary terms
	// of a query word's family (search.Index.Related: tour and tourism,
	// repository and repo) at this share of the word's weight.
	RelatedWeight float64
	// GramWeight weighs a tool query word's character n-grams, shared out
	// among them.
	GramWeight float64
	// RequestWeight weighs the words that frame a request rather than name
	// a capability (requestWords), which get no expansions either.
	RequestWeight float64
	// PartWeight weighs each part of a compound query word ("time-travel",
	// "createIssue") whose whole weighs 1, so the word does not count
	// thrice against a tool that holds the whole.
	PartWeight float64
	// QueryK3, when positive, saturates a word repeated in the query as
	// BM25's k3: said n times, it weighs (k3+1)n/(k3+n).
	QueryK3 float64
	// Feedback, when FeedbackWeight is positive, expands a tool query with
	// the terms of its FeedbackDocs best tools (pseudo-relevance feedback).
	FeedbackDocs, FeedbackTerms int
	FeedbackWeight              float64
	// SmoothDocs and SmoothWeight, when positive, add to every tool's score
	// its resemblance to the SmoothDocs best tools (search.Index.Smooth).
	SmoothDocs   int
	SmoothWeight float64
	// Pages weighs the evidence a docs section draws from its page and
	// from its coverage of the query (docs only).
	Pages PageScoring
	// ToolsSemantic and DocsSemantic tune semantic matching (see
	// Semantic) of tool and docs searches; docs use expansion only.
	ToolsSemantic, DocsSemantic Semantic
	// ToolCut decides which ranked tools are results at all.
	ToolCut ToolCut
}

// DefaultScoring returns the parameters chosen on the judged collections.
// On MetaTool through tool search, nDCG@10 rose from 0.571 with name
// completions and character n-grams (0.577), one-tool feedback (0.579),
// discounted typo expansions (0.580) and IDF^1.5 (0.583). It reached 0.600
// with word families in place of completions, request words at half
// weight, own saturation per field (ToolsParams), smoothing over
// the 20 best tools, compound parts at half weight, k3 1.5 for repeated
// words and n-grams at 0.15: leaving one out of these settings costs
// 0.006, 0.003, 0.002, 0.002, 0.002, 0.001 and 0.001, on both halves of
// the queries (odd and even IDs), and Recall@100 went from 0.891 to 0.886.
// SciFact (docs) stays at 0.701. Semantic matching (see Semantic and
// SemanticDefault) then lifts MetaTool to 0.652 on the dev half (expansion
// alone 0.622, the blended retriever alone 0.643) and from 0.597 to 0.631
// on the test half. The blended retriever owes most of that to cosines
// taken in the catalog's space with its two most shared directions taken
// out (semantic.Space; on the dev half, with tool names weighed as their
// descriptions, 0.629 with none, 0.636 with one, 0.648 with two, 0.644
// with three, at the best blend weight of each), then to tool names
// weighing twice in a tool's vector (catalog) and to choosing the feedback
// tool and the smoothing head from the blended ranking (0.005). Docs
// search leaves it off: expansion changes nothing on the judged docs sets
// and SciFact, and blending the retriever in at 0.3 costs SciFact 0.010.
func DefaultScoring() Scoring {
	return Scoring{Docs: DocsParams(), Tools: ToolsParams(), RelatedWeight: 0.5, GramWeight: 0.15,
		RequestWeight: 0.5, PartWeight: 0.5, QueryK3: 1.5, FeedbackDocs: 1, FeedbackTerms: 30, FeedbackWeight: 0.15,
		SmoothDocs: 20, SmoothWeight: 0.3, Pages: DefaultPageScoring(),
		ToolsSemantic: Semantic{Expand: 0.5, ExpandTerms: 3, ExpandMinSim: 0.5, Fuse: 1.3, FuseAll: true, FuseMinSim: 0.45, Common: 2},
		DocsSemantic:  Semantic{Expand: 0.5, ExpandTerms: 3, ExpandMinSim: 0.5},
		ToolCut:       ToolCut{MeaningZ: 1.7, NearZ: 1.2, MinGap: 0.15, MinShare: 0.25}}
}

// NewEngine returns an empty engine with DefaultScoring and semantic
// matching on (see SetSemantic). Zero limits take
// the defaults of 10 and 100 hits.
func NewEngine(limits Limits) *Engine { return NewEngineScoring(limits, DefaultScoring()) }

// NewEngineScoring returns an empty engine with the given scoring.
func NewEngineScoring(limits Limits, sc Scoring) *Engine {
	return NewWithAnalyzer(limits, sc, analysis.New())
}

// NewWithAnalyzer returns an empty engine analysing queries with an, which
// the process's other stages may share.
func NewWithAnalyzer(limits Limits, sc Scoring, an *analysis.Analyzer) *Engine {
	if limits.DefaultTopK <= 0 {
		limits.DefaultTopK = 10
	}
	if limits.MaxTopK < limits.DefaultTopK {
		limits.MaxTopK = max(limits.DefaultTopK, 100)
	}
	if limits.MaxToolLimit <= 0 {
		limits.MaxToolLimit = MaxToolLimit
	}
	if len(sc.Docs.Fields) == 0 {
		sc.Docs = DocsParams()
	}
	if len(sc.Tools.Fields) == 0 {
		sc.Tools = ToolsParams()
	}
	docs, err := search.New(sc.Docs)
	if err != nil {
		panic(err) // a programming error in the parameters
	}
	tools, err := search.New(sc.Tools)
	if err != nil {
		panic(err)
	}
	kbIndex, err := search.New(kb.SearchParams())
	if err != nil {
		panic(err)
	}
	e := &Engine{limits: limits, an: an, docs: docs, tools: tools, kb: kbIndex,
		changed: make(chan struct{}), scoring: sc, request: termSet(an, requestWords)}
	e.SetSemantic(true)
	return e
}

// WithPageScoring returns an engine that shares e's indexes and limits
// and searches docs with page scoring p: a view for measuring settings
// side by side on one index. Updates must go to e.
func (e *Engine) WithPageScoring(p PageScoring) *Engine {
	sc := e.scoring
	sc.Pages = p
	v := &Engine{limits: e.limits, an: e.an, docs: e.docs, tools: e.tools, kb: e.kb,
		changed: e.changed, scoring: sc, request: e.request, emb: e.emb,
		shard: e.shard, shardCount: e.shardCount, shards: e.shards}
	e.sem.mu.Lock()
	v.sem.table, v.sem.mode = e.sem.table, e.sem.mode
	e.sem.mu.Unlock()
	return v
}

// Analyzer returns the engine's analyzer.
func (e *Engine) Analyzer() *analysis.Analyzer { return e.an }

// Trim releases the spare capacity of every collection's index; see
// search.Index.Trim.
func (e *Engine) Trim() {
	for _, ix := range []*search.Index{e.docs, e.tools, e.kb} {
		ix.Trim()
	}
}

// Apply applies one KH_INDEX entry: a value (nil when the key was deleted
// or purged) at a bucket revision.
func (e *Engine) Apply(key string, doc *contract.IndexDoc, revision uint64) {
	collection, _, _ := strings.Cut(key, ".")
	ix := e.index(collection)
	var extra any
	if collection == contract.CollectionKB && doc != nil && len(doc.Record) > 0 {
		var entry kb.Entry
		if err := json.Unmarshal(doc.Record, &entry); err != nil {
			doc = nil // unreadable record: never serve the entry
		} else {
			extra = &entry
		}
	}
	if collection == contract.CollectionTools && doc != nil && doc.Tool != nil {
		extra = doc.Tool
	}
	switch {
	case collection == contract.CollectionDocs:
		e.applyDocs(key, doc)
	case ix != nil:
		if doc == nil {
			ix.Remove(key)
		} else {
			ix.Put(key, indexdoc.Search(doc), extra)
		}
	}
	e.mu.Lock()
	if revision > e.revision {
		e.revision = revision
	}
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// index returns the index of a collection, or nil.
func (e *Engine) index(collection string) *search.Index {
	switch collection {
	case contract.CollectionDocs:
		return e.docs
	case contract.CollectionTools:
		return e.tools
	case contract.CollectionKB:
		return e.kb
	}
	return nil
}

// Revision returns the last applied KH_INDEX revision.
func (e *Engine) Revision() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.revision
}

// WaitApplied blocks until the collection's index has applied source
// sequence seq, or ctx is done. It reports whether seq was reached.
func (e *Engine) WaitApplied(ctx context.Context, collection string, seq uint64) bool {
	ix := e.index(collection)
	if ix == nil {
		return false
	}
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if ix.Stats().Applied >= seq {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// checkQuery trims a query and rejects what cannot be searched.
func checkQuery(query string) (string, error) {
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return "", badRequest("query is empty")
	case len(q) > MaxQueryBytes:
		return "", badRequest("query is %d bytes, the limit is %d", len(q), MaxQueryBytes)
	case !utf8.ValidString(q):
		return "", badRequest("query is not valid UTF-8")
	case strings.IndexByte(q, 0) >= 0:
		return "", badRequest("query contains a NUL byte")
	}
	return q, nil
}

// Typo tolerance: a query term absent from the index, or rare while a
// close term is far more frequent, is expanded to vocabulary terms within
// one edit (two for long words), at a discount so exact matches win.
const (
	rareDF          = 2
	rareRatio       = 20
	maxExpansions   = 3
	fuzzyMinRunes   = 4
	fuzzyTwoEditsAt = 8
)

// fuzzyWeight discounts an expansion by its edits. Low weights keep exact
// matches ahead and cost clean queries least (MetaTool, SciFact).
var fuzzyWeight = [...]float64{1, 0.2, 0.1}

// queryTerms analyses q into scored terms for ix, with typo expansions
// grouped under the word they came from, and the set of terms to mark in
// snippets.
func (e *Engine) queryTerms(ix *search.Index, q string) ([]search.Term, map[string]bool) {
	words := e.an.QueryTerms(stripFraming(q))
	terms := make([]search.Term, 0, len(words))
	set := make(map[string]bool, len(words))
	for i, w := range words {
		terms = append(terms, search.Term{Text: w, Weight: 1, Group: i})
		set[w] = true
		for _, x := range typos(ix, w) {
			terms = append(terms, search.Term{Text: x.Term, Weight: fuzzyWeight[x.Edits], Group: i})
			set[x.Term] = true
		}
	}
	return terms, set
}

// typos returns the typo expansions of the query term w in ix.
func typos(ix *search.Index, w string) []search.Expansion {
	n := utf8.RuneCountInString(w)
	if n < fuzzyMinRunes {
		return nil
	}
	df := ix.DF(w)
	if df > rareDF {
		return nil
	}
	edits := 1
	if n >= fuzzyTwoEditsAt {
		edits = 2
	}
	out := ix.Fuzzy(w, edits, maxExpansions)
	if df > 0 {
		// A rare term that is a word of its own keeps only expansions far
		// more frequent than itself.
		out = slices.DeleteFunc(out, func(x search.Expansion) bool { return x.DF < rareRatio*df })
	}
	return out
}

// phraseCandidates is how many candidates a phrase query checks.
const phraseCandidates = 500

// SearchDocs runs a docs search with conflict resolution.
func (e *Engine) SearchDocs(req contract.SearchRequest) (*contract.SearchResponse, error) {
	start := time.Now()
	q, err := checkQuery(req.Query)
	if err != nil {
		return nil, err
	}
	if req.Group != "" && req.Group != contract.GroupSections && req.Group != contract.GroupPages {
		return nil, badRequest("group %q: want %s or %s", req.Group, contract.GroupSections, contract.GroupPages)
	}
	topK := req.TopK
	switch {
	case topK <= 0:
		topK = e.limits.DefaultTopK
	case topK > e.limits.MaxTopK:
		topK = e.limits.MaxTopK
	}
	text, phrases := parseQuery(q)
	st := e.semanticTable(req.Semantic, text)
	terms, termSet := e.queryTerms(e.docs, text)
	e.dampCJK(terms, text, e.scoring.Pages)
	if st != nil {
		terms = e.expandDocs(st, terms)
	}
	var l string
	if req.Lang != "" {
		if l, err = lang.Normalize(req.Lang); err != nil {
			return nil, badRequest("lang: %v", err)
		}
	}
	// Fetch more than topK so that conflict losers can be replaced, and
	// more again when phrases will filter the candidates.
	limit := topK*3 + 10
	if req.Group == contract.GroupPages {
		limit = topK*8 + 10 // pages whose sections crowd the list still leave topK distinct ones
	}
	pterms := highlight.PhraseTerms(e.an, phrases)
	if len(pterms) > 0 {
		limit = max(limit, phraseCandidates)
	}
	limit = max(limit, e.scoring.Pages.Depth) // page evidence is gathered over the same depth for every topK
	hits, total, view, near, missing := e.retrieve(terms, req.Repos, l, limit, req.Embedding, req.Content || req.MaxTokens > 0)
	if len(pterms) > 0 {
		hits = filterPhrases(e.an, hits, pterms)
		total = len(hits)
	}
	rankPages(view, hits, terms, e.scoring.Pages, lang.Query(text))
	ps := highlight.New(termSet)
	defer ps.Release()
	boostProximity(hits, ps)
	if len(req.Embedding) > 0 && (req.Semantic == nil || *req.Semantic) {
		var added int
		hits, added = e.fuseEmbedding(hits, req.Embedding, near, len(pterms) == 0)
		total += added
	}
	kept, shadowed := Resolve(hits, view)
	if req.Group == contract.GroupPages {
		kept = distinctPages(kept)
	}
	if len(kept) > topK {
		kept = kept[:topK]
	}
	var done contract.Completeness
	if len(missing) > 0 {
		done = contract.Completeness{Partial: true, MissingShards: missing}
	}
	if req.MaxTokens > 0 {
		resp := e.budgeted(req, q, kept, shadowed, total, ps, termSet, start)
		resp.Completeness = done
		return resp, nil
	}
	resp := &contract.SearchResponse{Query: q, Hits: make([]contract.SearchHit, 0, len(kept)), Total: total, Completeness: done}
	shown := make(map[*search.Entry]bool, len(kept))
	if req.NoSnippet {
		termSet = nil
	}
	budget := contract.MaxReplyContentBytes
	for _, h := range kept {
		hit := e.hit(h, ps, termSet)
		// A section that fits in what is left goes whole; a longer one is
		// cut while a useful part of it fits.
		// Content is the section's Markdown, as indexed, when the chunker
		// kept it; its plain text otherwise.
		body := h.Entry.Markdown
		if body == "" {
			body = h.Entry.Text
		}
		if limit := min(contract.MaxHitContentBytes, budget); req.Content && (len(body) <= limit || limit >= minContentBytes) {
			hit.Content, hit.ContentCut = CutText(body, limit)
			budget -= len(hit.Content)
		}
		resp.Hits = append(resp.Hits, hit)
		shown[h.Entry] = true
	}
	for _, s := range shadowed {
		if !shown[s.Winner.Entry] {
			continue // report only conflicts whose winner is shown
		}
		w := s.Winner.Entry
		resp.Shadowed = append(resp.Shadowed, contract.ShadowedHit{
			SearchHit:  e.hit(s.Hit, ps, termSet),
			ShadowedBy: w.Source.Repo + ":" + w.Source.Path + "#" + w.ID,
			Reason:     s.Reason,
		})
	}
	resp.TookMicros = time.Since(start).Microseconds()
	return resp, nil
}

// distinctPages keeps the first, best ranked, hit of each page, in order.
func distinctPages(hits []search.Hit) []search.Hit {
	type page struct{ repo, path string }
	seen := make(map[page]bool, len(hits))
	out := hits[:0]
	for _, h := range hits {
		p := page{h.Entry.Source.Repo, h.Entry.Source.Path}
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, h)
	}
	return out
}

func (e *Engine) hit(h search.Hit, ps *highlight.Matcher, terms map[string]bool) contract.SearchHit {
	en := h.Entry
	return contract.SearchHit{
		Collection:  en.Source.Collection,
		Repo:        en.Source.Repo,
		Path:        en.Source.Path,
		HeadingPath: en.HeadingPath,
		Title:       en.Title,
		ChunkID:     en.ID,
		Score:       h.Score,
		Snippet:     e.snippet(en, ps, terms),
		Seq:         en.Source.SourceSeq,
		Priority:    en.Source.Meta.Priority,
		RepoType:    en.Source.Meta.Type,
		Lang:        en.Source.Lang,
	}
}

// snippet builds a hit's snippet; nil terms mean no snippet.
func (e *Engine) snippet(en *search.Entry, ps *highlight.Matcher, terms map[string]bool) string {
	if terms == nil {
		return ""
	}
	return ps.Snippet(e.an, en, terms, snippetBytes)
}

// minContentBytes is the least of a section's text worth sending cut.
const minContentBytes = 256

// CutText returns text whole when it fits in limit bytes, or else cut at
// the last word boundary within the limit, with an ellipsis, and true.
func CutText(text string, limit int) (string, bool) {
	const ellipsis = " …"
	if len(text) <= limit {
		return text, false
	}
	if limit <= len(ellipsis) {
		return "", true
	}
	cut := text[:limit-len(ellipsis)]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1] // never split a rune
	}
	if i := strings.LastIndexAny(cut, " \t\n"); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \t\n") + ellipsis, true
}

// Stats reports what the engine holds.
func (e *Engine) Stats(ready bool) *contract.StatsResponse {
	resp := &contract.StatsResponse{
		Ready:         ready,
		Collections:   map[string]contract.CollectionStats{},
		IndexRevision: e.Revision(),
		Analyzer:      analysis.Version,
	}
	for name, ix := range map[string]*search.Index{contract.CollectionDocs: e.docs, contract.CollectionTools: e.tools, contract.CollectionKB: e.kb} {
		st := ix.Stats()
		resp.Collections[name] = contract.CollectionStats{Sources: st.Sources, Chunks: st.Chunks, Terms: st.Terms, Applied: st.Applied}
	}
	byRepo := map[string]*contract.RepoStats{}
	e.docs.EachSource(func(s *search.Source, chunks int) {
		r := byRepo[s.Repo]
		if r == nil {
			r = &contract.RepoStats{Repo: s.Repo}
			byRepo[s.Repo] = r
		}
		r.Files++
		r.Chunks += chunks
		if r.Languages == nil {
			r.Languages = map[string]int{}
		}
		r.Languages[s.Lang]++
	})
	for _, r := range byRepo {
		resp.Repos = append(resp.Repos, *r)
	}
	sort.Slice(resp.Repos, func(i, j int) bool { return resp.Repos[i].Repo < resp.Repos[j].Repo })
	return resp
}
