package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexdoc"
	"github.com/knowhub/knowhub/internal/lang"
	"github.com/knowhub/knowhub/internal/search"
)

// Sharding. An engine that is shard i of n (SetShard) puts the docs pages
// that contract.ShardOf assigns to it and the statistics of every other
// page (search.Index.PutStats), so it scores its sections as an index of
// the whole collection would. ShardSearch answers a coordinator's part of
// a docs search; an engine given the shards (SetShards) coordinates: it
// analyses the query against its statistics, which are the whole
// collection's, gathers every shard's best sections and runs the rest of
// the docs pipeline (phrases, page evidence, embeddings, conflict
// resolution, grouping, budgets) on the merged list, so a sharded
// deployment answers as one replica of every page does.

// Shards is how a coordinating engine reaches one replica of every shard.
type Shards interface {
	// Search sends req to every shard and returns the replies of those
	// that answered, and the shards that did not.
	Search(req contract.ShardSearchRequest) (replies []*contract.ShardSearchReply, missing []int)
	// Page returns the sections of the page key from the shard holding
	// it, in page order.
	Page(key string) (*contract.ShardSearchReply, error)
}

// maxShardLimit bounds the sections one shard request asks for.
const maxShardLimit = 10000

// SetShard makes the engine shard i of n of the docs collection (n <= 1:
// the whole collection). Call it before the first Apply.
func (e *Engine) SetShard(i, n int) {
	e.shard, e.shardCount = i, n
}

// SetShards makes the engine coordinate docs searches across shards.
// Call it before the engine serves.
func (e *Engine) SetShards(s Shards) { e.shards = s }

// Shard returns the engine's shard and shard count (0 of 1 when not
// sharded).
func (e *Engine) Shard() (i, n int) { return e.shard, max(e.shardCount, 1) }

// owns reports whether the engine searches the docs page key.
func (e *Engine) owns(key string) bool {
	return e.shardCount <= 1 || contract.ShardOf(key, e.shardCount) == e.shard
}

// applyDocs applies a docs value: the page itself when the engine's shard
// holds it, its statistics otherwise.
func (e *Engine) applyDocs(key string, doc *contract.IndexDoc) {
	switch {
	case e.owns(key) && doc == nil:
		e.docs.Remove(key)
	case e.owns(key):
		e.docs.Put(key, indexdoc.Search(doc), nil)
	case doc == nil:
		e.docs.Remove(key)
	default:
		e.docs.PutStats(key, indexdoc.Search(doc))
	}
}

// docsFilter returns the filter of a docs search by repositories and a
// normalised language, nil when it keeps everything.
func docsFilter(repos []string, l string) func(*search.Entry) bool {
	var filter func(*search.Entry) bool
	if len(repos) > 0 {
		set := make(map[string]bool, len(repos))
		for _, r := range repos {
			set[r] = true
		}
		filter = func(en *search.Entry) bool { return set[en.Source.Repo] }
	}
	if l != "" {
		// Pages too short to tell their language are kept.
		inLang := func(en *search.Entry) bool { return en.Source.Lang == l || en.Source.Lang == "" }
		if byRepo := filter; byRepo != nil {
			filter = func(en *search.Entry) bool { return byRepo(en) && inLang(en) }
		} else {
			filter = inLang
		}
	}
	return filter
}

// ShardSearch answers a coordinator's request for this shard's part of a
// docs search.
func (e *Engine) ShardSearch(req contract.ShardSearchRequest) (*contract.ShardSearchReply, error) {
	if req.Limit <= 0 || req.Limit > maxShardLimit || req.Near < 0 || req.Near > maxShardLimit {
		return nil, badRequest("limit must be 1 to %d and near 0 to %d", maxShardLimit, maxShardLimit)
	}
	if len(req.Terms) > 4*MaxQueryBytes {
		return nil, badRequest("%d terms is too many", len(req.Terms))
	}
	if req.Lang != "" {
		if _, err := lang.Normalize(req.Lang); err != nil {
			return nil, badRequest("lang: %v", err)
		}
	}
	terms := make([]search.Term, len(req.Terms))
	for i, t := range req.Terms {
		terms[i] = search.Term{Text: t.Text, Weight: t.Weight, Group: t.Group}
	}
	filter := docsFilter(req.Repos, req.Lang)
	hits, total := e.docs.Search(search.Query{Terms: terms, Filter: filter, Limit: req.Limit})
	w := replyWriter{reply: &contract.ShardSearchReply{Shard: e.shard, Total: total}, at: map[*search.Source]int{}}
	w.markdown, w.vectors = req.WithMarkdown, req.WithVectors || len(req.Embedding) > 0
	coverage, _ := e.docs.Coverage(hits, terms)
	for i, h := range hits {
		sh := w.hit(h.Entry)
		sh.Score, sh.Coverage = h.Score, coverage[i]
		if req.WithTerms {
			sh.Terms = e.docs.EntryTerms(h.Entry)
		}
		w.reply.Hits = append(w.reply.Hits, sh)
	}
	if len(req.Embedding) > 0 && req.Near > 0 {
		for _, n := range e.nearest(req.Embedding, filter, nil, req.Near) {
			sh := w.hit(n.entry)
			sh.Cos = n.cos
			w.reply.Near = append(w.reply.Near, sh)
		}
	}
	outline, _ := e.docs.OutlineCoverage(w.sources, terms)
	for i := range w.reply.Sources {
		w.reply.Sources[i].Outline = outline[i]
	}
	return w.reply, nil
}

// ShardPage returns the sections of the page key, which this shard holds,
// in page order.
func (e *Engine) ShardPage(key string) (*contract.ShardSearchReply, error) {
	page := e.docs.Entries(key)
	if len(page) == 0 {
		return nil, fmt.Errorf("%w: no page %s", ErrNotFound, key)
	}
	slices.SortFunc(page, func(a, b *search.Entry) int { return a.Ord - b.Ord })
	w := replyWriter{reply: &contract.ShardSearchReply{Shard: e.shard}, at: map[*search.Source]int{}, markdown: true, vectors: true}
	for _, en := range page {
		w.reply.Hits = append(w.reply.Hits, w.hit(en))
	}
	return w.reply, nil
}

// replyWriter writes sections into a shard reply, each page once.
type replyWriter struct {
	reply   *contract.ShardSearchReply
	at      map[*search.Source]int
	sources []*search.Source
	// markdown and vectors write the sections' Markdown and endpoint
	// vectors.
	markdown, vectors bool
}

func (w *replyWriter) hit(en *search.Entry) contract.ShardHit {
	s := en.Source
	i, ok := w.at[s]
	if !ok {
		i = len(w.reply.Sources)
		w.at[s] = i
		w.sources = append(w.sources, s)
		w.reply.Sources = append(w.reply.Sources, contract.ShardSource{Key: s.Key, Repo: s.Repo, Path: s.Path, SourceSeq: s.SourceSeq,
			Priority: s.Meta.Priority, Type: s.Meta.Type, Demote: s.Meta.Demote, Lang: s.Lang, Chunks: s.Chunks, EmbeddingModel: s.EmbeddingModel})
	}
	h := contract.ShardHit{Source: i, ID: en.ID, Ord: en.Ord, HeadingPath: en.HeadingPath, Title: en.Title, Text: en.Text,
		SectionKey: en.SectionKey}
	if w.markdown {
		h.Markdown = en.Markdown
	}
	if w.vectors {
		h.Embedding = en.Embedding
	}
	return h
}

// merged is the shards' replies to one docs search, as entries of the
// coordinator: it stands in for the index where the docs pipeline reads
// what an index knows of its hits (pageView, TermSource).
type merged struct {
	ix       *search.Index // the coordinator's, for collection statistics
	hits     []search.Hit
	near     []nearEntry
	total    int
	missing  []int
	coverage map[*search.Entry]uint64
	terms    map[*search.Entry][]string
	outline  map[*search.Source]uint64
}

// mergeReplies turns the shards' replies into one list of the best limit
// hits, in the order one index of every page would give them.
func (e *Engine) mergeReplies(replies []*contract.ShardSearchReply, missing []int, limit int) *merged {
	m := &merged{ix: e.docs, missing: missing, coverage: map[*search.Entry]uint64{}, terms: map[*search.Entry][]string{},
		outline: map[*search.Source]uint64{}}
	for _, r := range replies {
		sources := make([]*search.Source, len(r.Sources))
		for i, s := range r.Sources {
			sources[i] = &search.Source{Key: s.Key, Collection: contract.CollectionDocs, Repo: s.Repo, Path: s.Path, SourceSeq: s.SourceSeq,
				Meta: search.Meta{Priority: s.Priority, Type: s.Type, Demote: s.Demote}, Lang: s.Lang, Chunks: s.Chunks, EmbeddingModel: s.EmbeddingModel}
			m.outline[sources[i]] = s.Outline
		}
		byID := map[string]*search.Entry{}
		entry := func(h *contract.ShardHit) (*search.Entry, bool) {
			if h.Source < 0 || h.Source >= len(sources) {
				return nil, false
			}
			k := sources[h.Source].Key + "#" + h.ID
			if en, ok := byID[k]; ok {
				return en, true
			}
			en := &search.Entry{Source: sources[h.Source], ID: h.ID, Ord: h.Ord, HeadingPath: h.HeadingPath, Title: h.Title,
				Text: h.Text, Markdown: h.Markdown, SectionKey: h.SectionKey, Embedding: h.Embedding}
			byID[k] = en
			return en, true
		}
		for i := range r.Hits {
			h := &r.Hits[i]
			en, ok := entry(h)
			if !ok {
				continue
			}
			m.coverage[en], m.terms[en] = h.Coverage, h.Terms
			m.hits = append(m.hits, search.Hit{Entry: en, Score: h.Score})
		}
		for i := range r.Near {
			if en, ok := entry(&r.Near[i]); ok {
				m.near = append(m.near, nearEntry{en, r.Near[i].Cos})
			}
		}
		m.total += r.Total
	}
	search.SortHits(m.hits)
	if len(m.hits) > limit {
		m.hits = m.hits[:limit]
	}
	return m
}

// Coverage gives each hit the coverage its shard found (search.Index.Coverage),
// with the groups' weights from the collection's statistics.
func (m *merged) Coverage(hits []search.Hit, terms []search.Term) ([]uint64, []float64) {
	_, weights := m.ix.Coverage(nil, terms)
	groups := make([]uint64, len(hits))
	for i, h := range hits {
		groups[i] = m.coverage[h.Entry]
	}
	return groups, weights
}

// OutlineCoverage is Coverage over the pages' headings.
func (m *merged) OutlineCoverage(sources []*search.Source, terms []search.Term) ([]uint64, []float64) {
	_, weights := m.ix.Coverage(nil, terms)
	groups := make([]uint64, len(sources))
	for i, s := range sources {
		groups[i] = m.outline[s]
	}
	return groups, weights
}

// RepoShares reads the collection's statistics.
func (m *merged) RepoShares(repos []string) ([]float64, int) { return m.ix.RepoShares(repos) }

// TermCounts counts each hit's distinct terms.
func (m *merged) TermCounts(hits []search.Hit) []int {
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = len(m.terms[h.Entry])
	}
	return out
}

// TermSets gives the wanted hits' term sets, in the coordinator's ids.
func (m *merged) TermSets(hits []search.Hit, want []bool) []search.TermSet {
	out := make([]search.TermSet, len(hits))
	for i, h := range hits {
		if want == nil || want[i] {
			out[i] = m.ix.TermSetOf(m.terms[h.Entry])
		}
	}
	return out
}

// pageView is what the docs pipeline reads of an index beyond its hits:
// a search.Index, or the merged replies of the shards.
type pageView interface {
	TermSource
	Coverage(hits []search.Hit, terms []search.Term) ([]uint64, []float64)
	OutlineCoverage(sources []*search.Source, terms []search.Term) ([]uint64, []float64)
	RepoShares(repos []string) ([]float64, int)
}

// retrieve gathers the best limit docs hits for terms, from the engine's
// index or, when it coordinates shards, from every shard, with the view
// the rest of the pipeline reads and the embedding candidates' source.
func (e *Engine) retrieve(terms []search.Term, repos []string, l string, limit int, emb []float32, markdown bool) (hits []search.Hit, total int, view pageView, near nearFunc, missing []int) {
	filter := docsFilter(repos, l)
	if e.shards == nil {
		hits, total = e.docs.Search(search.Query{Terms: terms, Filter: filter, Limit: limit})
		return hits, total, e.docs, func(q []float32, skip map[*search.Entry]bool, k int) []nearEntry {
			return e.nearest(q, filter, skip, k)
		}, nil
	}
	// Terms serve conflict resolution, which only hits of several
	// repositories have.
	_, nrepos := e.docs.RepoShares(nil)
	req := contract.ShardSearchRequest{Repos: repos, Lang: l, Limit: limit, WithMarkdown: markdown, WithTerms: nrepos > 1 && len(repos) != 1}
	for _, t := range terms {
		req.Terms = append(req.Terms, contract.ShardTerm{Text: t.Text, Weight: t.Weight, Group: t.Group})
	}
	if e.emb.Model != "" && e.emb.Weight > 0 && len(emb) > 0 {
		// Each shard's nearest, enough that the hits of the merged list
		// can be skipped and Candidates still remain.
		req.Embedding, req.Near = emb, e.emb.Candidates+limit
	}
	replies, missing := e.shards.Search(req)
	m := e.mergeReplies(replies, missing, limit)
	return m.hits, m.total, m, m.nearest, m.missing
}

// nearEntry is an entry near a query vector.
type nearEntry struct {
	entry *search.Entry
	cos   float32
}

// nearFunc returns the k entries nearest to q, best first, leaving out
// those in skip.
type nearFunc func(q []float32, skip map[*search.Entry]bool, k int) []nearEntry

// nearest returns the merged shards' nearest entries, leaving out skip.
func (m *merged) nearest(_ []float32, skip map[*search.Entry]bool, k int) []nearEntry {
	out := make([]nearEntry, 0, k)
	near := slices.Clone(m.near)
	slices.SortStableFunc(near, func(a, b nearEntry) int {
		switch {
		case a.cos > b.cos:
			return -1
		case a.cos < b.cos:
			return 1
		}
		return 0
	})
	for _, n := range near {
		if len(out) == k {
			break
		}
		if !skip[n.entry] {
			out = append(out, n)
		}
	}
	return out
}

// pageEntries returns the sections of the docs page key in page order,
// from the shard holding it when the engine coordinates shards.
func (e *Engine) pageEntries(key string) []*search.Entry {
	if e.shards == nil || e.owns(key) {
		page := e.docs.Entries(key)
		slices.SortFunc(page, func(a, b *search.Entry) int { return a.Ord - b.Ord })
		return page
	}
	r, err := e.shards.Page(key)
	if err != nil || r == nil {
		return nil
	}
	m := e.mergeReplies([]*contract.ShardSearchReply{r}, nil, len(r.Hits))
	page := make([]*search.Entry, len(m.hits))
	for i, h := range m.hits {
		page[i] = h.Entry
	}
	slices.SortFunc(page, func(a, b *search.Entry) int { return a.Ord - b.Ord })
	return page
}

// ShardPages lists this shard's pages of a repository from the start up
// to the end of the window a coordinator lists (MergePages), which may
// reach past MaxPagesLimit.
func (e *Engine) ShardPages(req contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
	if req.Offset != 0 || req.Limit < 0 || req.Limit > maxShardPages {
		return nil, badRequest("a shard lists pages from offset 0, at most %d", maxShardPages)
	}
	return e.listPages(req, maxShardPages)
}

// maxShardPages bounds the pages one shard lists for a window.
const maxShardPages = 1 << 20

// MergePages merges the shards' pages of a repository (ShardPages, each
// up to the end of req's window) into req's window of them all; no page
// in any shard is ErrNotFound.
func MergePages(req contract.DocsPagesRequest, replies []*contract.DocsPagesResponse) (*contract.DocsPagesResponse, error) {
	resp := &contract.DocsPagesResponse{Repo: req.Repo, Pages: []contract.DocsPage{}}
	var all []contract.DocsPage
	for _, r := range replies {
		all = append(all, r.Pages...)
		resp.Total += r.Total
	}
	if resp.Total == 0 {
		return nil, fmt.Errorf("%w: no repository %q in the index", ErrNotFound, req.Repo)
	}
	slices.SortFunc(all, func(a, b contract.DocsPage) int { return strings.Compare(a.Path, b.Path) })
	limit := max(req.Limit, 0)
	if limit == 0 {
		limit = DefaultPagesLimit
	}
	if req.Offset < len(all) {
		resp.Pages = all[req.Offset:min(req.Offset+limit, len(all))]
	}
	return resp, nil
}

// MergeRepos adds up the shards' listings of the repositories.
func MergeRepos(replies []*contract.DocsReposResponse) *contract.DocsReposResponse {
	byRepo := map[string]*contract.DocsRepo{}
	for _, r := range replies {
		for _, x := range r.Repos {
			m := byRepo[x.Repo]
			if m == nil {
				m = &contract.DocsRepo{Repo: x.Repo, Type: x.Type, Priority: x.Priority}
				byRepo[x.Repo] = m
			}
			m.Files += x.Files
			m.Sections += x.Sections
			m.LastSeq = max(m.LastSeq, x.LastSeq)
		}
	}
	return sortedRepos(byRepo)
}

// MergeStats replaces the docs counts of st, a replica's statistics, with
// the sum of the shards' (st's own shard among the replies).
func MergeStats(st *contract.StatsResponse, replies []*contract.StatsResponse) {
	var docs contract.CollectionStats
	byRepo := map[string]*contract.RepoStats{}
	for _, r := range replies {
		c := r.Collections[contract.CollectionDocs]
		docs.Sources += c.Sources
		docs.Chunks += c.Chunks
		docs.Terms = max(docs.Terms, c.Terms)
		docs.Applied = max(docs.Applied, c.Applied)
		for _, x := range r.Repos {
			m := byRepo[x.Repo]
			if m == nil {
				m = &contract.RepoStats{Repo: x.Repo, Languages: map[string]int{}}
				byRepo[x.Repo] = m
			}
			m.Files += x.Files
			m.Chunks += x.Chunks
			for l, n := range x.Languages {
				m.Languages[l] += n
			}
		}
	}
	if st.Collections == nil {
		st.Collections = map[string]contract.CollectionStats{}
	}
	st.Collections[contract.CollectionDocs] = docs
	st.Repos = st.Repos[:0]
	for _, r := range byRepo {
		st.Repos = append(st.Repos, *r)
	}
	slices.SortFunc(st.Repos, func(a, b contract.RepoStats) int { return strings.Compare(a.Repo, b.Repo) })
}
