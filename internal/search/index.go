// Package search is knowhub's in-memory inverted index: postings of raw
// term frequencies per field, live global statistics, and BM25F scoring
// with filters applied before the top-k cut. It is a pure core: documents
// arrive as contract.IndexDoc values and nothing here does I/O.
package search

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/knowhub/knowhub/internal/contract"
)

// MaxFields is the number of fields one collection may index.
const MaxFields = 4

// Field configures one indexed field for BM25F.
type Field struct {
	Name   string
	Weight float64 // multiplies the field's normalised term frequency
	B      float64 // length normalisation strength, 0..1
	// K1, when positive, saturates the field's term frequency on its own
	// with this k1, and adds its weighted score to that of the fields
	// without one, which share Params.K1 as in BM25F. A term in two such
	// fields then counts in both instead of saturating once.
	K1 float64
}

// Params configures scoring for one collection.
type Params struct {
	K1     float64 // saturation of the fields without a K1 of their own
	Fields []Field
	// IDFPower raises IDF to this power (0 means 1); above 1 it favours
	// rare terms more, which suits short documents and verbose queries.
	IDFPower float64
}

// ToolsParams are the default scoring parameters of the tools collection,
// chosen on MetaTool. Every field saturates on its own: a query word found
// in a tool's name and its description counts in both, while a word only
// in the name weighs what it would in the description. Names and keywords
// saturate fast (k1 0.5), descriptions and n-grams slower (1.2); against
// BM25F with the name weighing three descriptions (k1 2.2) this gains
// 0.002 nDCG@10 with the query handling of query.DefaultScoring. IDF^1.5
// (0.583 against 0.580 under BM25F; 1.25 and 2 score lower) suits verbose
// queries that share common words with many tools.
func ToolsParams() Params {
	return Params{IDFPower: 1.5, Fields: []Field{
		{Name: contract.FieldName, Weight: 1, B: 0.3, K1: 0.5},
		{Name: contract.FieldKeywords, Weight: 1, B: 0.3, K1: 0.5},
		{Name: contract.FieldDescription, Weight: 1, B: 0.15, K1: 1.2},
		{Name: contract.FieldGrams, Weight: 1, B: 0.2, K1: 1.2},
	}}
}

// DocsParams are the default BM25F parameters of the docs collection.
func DocsParams() Params {
	return Params{K1: 1.2, Fields: []Field{
		{Name: contract.FieldTitle, Weight: 1.5, B: 0.3},
		{Name: contract.FieldSummary, Weight: 1.0, B: 0.5},
		{Name: contract.FieldHeading, Weight: 2.5, B: 0.3},
		{Name: contract.FieldBody, Weight: 1.0, B: 0.75},
	}}
}

// Source is what an index keeps of a contract.IndexDoc besides its chunks.
type Source struct {
	Key        string
	Collection string
	Repo       string
	Path       string
	SourceSeq  uint64
	Meta       contract.RepoMeta
	Tool       *contract.Tool // tools collection only
	// Extra is the caller's decoded record of the document (for example a
	// knowledge entry), for filters.
	Extra any
}

// Entry is one searchable chunk.
type Entry struct {
	Source      *Source
	ID          string
	Ord         int
	HeadingPath []string
	Title       string
	Text        string
	// SectionKey is contract.SectionKey of the entry, computed once.
	SectionKey string

	ord   uint32
	alive bool
	boost float64
	lens  [MaxFields]uint32
	terms []*postingList
}

type posting struct {
	doc uint32
	tf  [MaxFields]uint16
}

type postingList struct {
	term     string
	postings []posting
	df       int // alive postings
}

// Index holds one collection. It is safe for concurrent use: searches share
// a read lock, updates take the write lock.
type Index struct {
	params  Params
	fieldOf map[string]int

	mu      sync.RWMutex
	entries []*Entry // by ordinal; nil once compacted away
	sources map[string][]*Entry
	terms   map[string]*postingList
	vocab   map[vocabKey][]string // for Fuzzy and Related; may hold removed terms
	alive   int
	dead    int
	sumLen  [MaxFields]uint64
	applied uint64 // highest SourceSeq applied, for stats
	pool    sync.Pool
}

// New returns an empty index scoring with p.
func New(p Params) (*Index, error) {
	if len(p.Fields) == 0 || len(p.Fields) > MaxFields {
		return nil, fmt.Errorf("index needs 1 to %d fields, got %d", MaxFields, len(p.Fields))
	}
	ix := &Index{
		params:  p,
		fieldOf: make(map[string]int, len(p.Fields)),
		sources: make(map[string][]*Entry),
		terms:   make(map[string]*postingList),
		vocab:   make(map[vocabKey][]string),
	}
	for i, f := range p.Fields {
		ix.fieldOf[f.Name] = i
	}
	return ix, nil
}

// Put replaces every chunk of the source key with doc's chunks, keeping
// extra on the source. A doc marked Deleted removes the source.
func (ix *Index) Put(key string, doc *contract.IndexDoc, extra any) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(key)
	if doc.SourceSeq > ix.applied {
		ix.applied = doc.SourceSeq
	}
	if doc.Deleted || len(doc.Chunks) == 0 {
		return
	}
	src := &Source{Key: key, Collection: doc.Collection, Repo: doc.Repo, Path: doc.Path, SourceSeq: doc.SourceSeq, Meta: doc.Meta, Tool: doc.Tool, Extra: extra}
	list := make([]*Entry, 0, len(doc.Chunks))
	slot := make(map[string]int, 256)
	var rows []mergedTerm
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		e := &Entry{Source: src, ID: c.ID, Ord: c.Ord, HeadingPath: c.HeadingPath, Title: c.Title, Text: c.Text,
			SectionKey: contract.SectionKey(doc.Path, c.HeadingPath),
			ord:        uint32(len(ix.entries)), alive: true, boost: 1}
		if c.Boost > 0 {
			e.boost = c.Boost
		}
		// Merge per-field term frequencies into one posting per term,
		// in scratch space reused across the document's chunks.
		clear(slot)
		rows = rows[:0]
		for field, tfs := range c.Terms {
			fi, ok := ix.fieldOf[field]
			if !ok {
				continue
			}
			for term, tf := range tfs {
				if tf <= 0 {
					continue
				}
				i, ok := slot[term]
				if !ok {
					i = len(rows)
					slot[term] = i
					rows = append(rows, mergedTerm{term: term})
				}
				rows[i].tf[fi] = clampTF(int(rows[i].tf[fi]) + tf)
				e.lens[fi] += uint32(tf)
			}
		}
		e.terms = make([]*postingList, 0, len(rows))
		for _, r := range rows {
			pl := ix.terms[r.term]
			if pl == nil {
				pl = &postingList{term: r.term}
				ix.terms[r.term] = pl
				ix.addVocab(r.term)
			}
			pl.postings = append(pl.postings, posting{doc: e.ord, tf: r.tf})
			pl.df++
			e.terms = append(e.terms, pl)
		}
		for f := range e.lens {
			ix.sumLen[f] += uint64(e.lens[f])
		}
		ix.entries = append(ix.entries, e)
		ix.alive++
		list = append(list, e)
	}
	ix.sources[key] = list
}

// mergedTerm is one term of a chunk with its frequency in each field.
type mergedTerm struct {
	term string
	tf   [MaxFields]uint16
}

func clampTF(n int) uint16 {
	if n > math.MaxUint16 {
		return math.MaxUint16
	}
	return uint16(n)
}

// Remove deletes every chunk of the source key.
func (ix *Index) Remove(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(key)
}

func (ix *Index) removeLocked(key string) {
	list, ok := ix.sources[key]
	if !ok {
		return
	}
	delete(ix.sources, key)
	for _, e := range list {
		e.alive = false
		for _, pl := range e.terms {
			pl.df--
			if pl.df == 0 {
				delete(ix.terms, pl.term)
			} else if pl.df*2 < len(pl.postings) && len(pl.postings) > 8 {
				ix.compactList(pl)
			}
		}
		e.terms = nil
		for f := range e.lens {
			ix.sumLen[f] -= uint64(e.lens[f])
		}
		ix.alive--
		ix.dead++
	}
	if ix.dead > 1024 && ix.dead > ix.alive/2 {
		ix.compactAll()
	}
}

// compactAll renumbers the live entries densely and rewrites every posting
// list without dead entries, so churn does not grow memory without bound.
func (ix *Index) compactAll() {
	remap := make([]uint32, len(ix.entries))
	live := make([]*Entry, 0, ix.alive)
	for i, e := range ix.entries {
		if e.alive {
			remap[i] = uint32(len(live))
			e.ord = uint32(len(live))
			live = append(live, e)
		}
	}
	for _, pl := range ix.terms {
		out := pl.postings[:0]
		for _, p := range pl.postings {
			if ix.entries[p.doc].alive {
				p.doc = remap[p.doc]
				out = append(out, p)
			}
		}
		pl.postings = out
	}
	ix.entries = live
	ix.dead = 0
	clear(ix.vocab)
	for term := range ix.terms {
		ix.addVocab(term)
	}
}

// vocabKey groups the vocabulary by what Fuzzy and Related compare first:
// they only look at terms that start alike and are of a similar length.
type vocabKey struct {
	first byte // the first byte of the term
	n     int  // its length in bytes
}

func (ix *Index) addVocab(term string) {
	if term == "" {
		return
	}
	k := vocabKey{term[0], len(term)}
	ix.vocab[k] = append(ix.vocab[k], term)
}

func (ix *Index) compactList(pl *postingList) {
	out := pl.postings[:0]
	for _, p := range pl.postings {
		if ix.entries[p.doc].alive {
			out = append(out, p)
		}
	}
	pl.postings = out
}

// Stats describes an index.
type Stats struct {
	Sources int    `json:"sources"`
	Chunks  int    `json:"chunks"`
	Terms   int    `json:"terms"`
	Applied uint64 `json:"applied_seq"`
}

// Stats returns counts under the read lock.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Stats{Sources: len(ix.sources), Chunks: ix.alive, Terms: len(ix.terms), Applied: ix.applied}
}

// EachSource calls fn for every source under the read lock.
func (ix *Index) EachSource(fn func(s *Source, chunks int)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, list := range ix.sources {
		if len(list) > 0 {
			fn(list[0].Source, len(list))
		}
	}
}

// EachEntry calls fn for every live entry under the read lock until fn
// returns false.
func (ix *Index) EachEntry(fn func(*Entry) bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, list := range ix.sources {
		for _, e := range list {
			if !fn(e) {
				return
			}
		}
	}
}

// EntryTerms returns the distinct terms an entry holds.
func (ix *Index) EntryTerms(e *Entry) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(e.terms))
	for _, pl := range e.terms {
		out = append(out, pl.term)
	}
	return out
}

// Term is one query term with its weight (1 for exact terms, less for
// expansions such as typo corrections).
type Term struct {
	Text   string
	Weight float64
	// Group ties expansions to the query word they came from: within one
	// group only the best-scoring variant counts for a document.
	Group int
}

// Query is a scored search over one index.
type Query struct {
	Terms []Term
	// Filter, when set, keeps only entries for which it returns true; it is
	// applied before the top-k cut.
	Filter func(*Entry) bool
	// Limit is the number of hits returned.
	Limit int
}

// Hit is one scored entry.
type Hit struct {
	Entry *Entry
	Score float64
}

// Search scores every entry matching at least one term and returns the best
// Limit hits in descending score (ties broken by source key and ordinal, so
// results are deterministic). total is the number of matching entries that
// passed the filter.
func (ix *Index) Search(q Query) (hits []Hit, total int) {
	if q.Limit <= 0 || len(q.Terms) == 0 {
		return nil, 0
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := len(ix.entries)
	acc := ix.getAcc(n)
	defer ix.pool.Put(acc)

	var avg [MaxFields]float64
	for f := range ix.params.Fields {
		if ix.alive > 0 {
			avg[f] = float64(ix.sumLen[f]) / float64(ix.alive)
		}
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	k1 := ix.params.K1
	// Terms of one group are variants of one query word (exact and
	// expansions): a document counts only its best variant.
	groups := make(map[int][]Term, len(q.Terms))
	var order []int
	for _, t := range q.Terms {
		if _, ok := groups[t.Group]; !ok {
			order = append(order, t.Group)
		}
		groups[t.Group] = append(groups[t.Group], t)
	}
	for _, g := range order {
		terms := groups[g]
		multi := len(terms) > 1
		for _, t := range terms {
			pl := ix.terms[t.Text]
			if pl == nil || pl.df == 0 {
				continue
			}
			w := ix.idf(pl.df) * t.Weight
			for _, p := range pl.postings {
				e := ix.entries[p.doc]
				if !e.alive {
					continue
				}
				var shared, own float64 // shared: the BM25F tf of the fields without a K1
				for f, fp := range ix.params.Fields {
					if p.tf[f] == 0 {
						continue
					}
					tf := float64(p.tf[f]) / (1 - fp.B + fp.B*float64(e.lens[f])/avg[f])
					if fp.K1 > 0 {
						own += fp.Weight * tf * (fp.K1 + 1) / (fp.K1 + tf)
					} else {
						shared += fp.Weight * tf
					}
				}
				if shared > 0 {
					own += shared * (k1 + 1) / (k1 + shared)
				}
				s := w * own
				if multi {
					acc.addBest(p.doc, s)
				} else {
					acc.add(p.doc, s)
				}
			}
		}
		if multi {
			acc.foldBest()
		}
	}
	hits, total = acc.top(ix.entries, q.Filter, q.Limit)
	return hits, total
}

// idf is the BM25 inverse document frequency of a term in df live
// entries, raised to Params.IDFPower. The caller holds the read lock.
func (ix *Index) idf(df int) float64 {
	n, d := float64(ix.alive), float64(df)
	idf := math.Log(1 + (n-d+0.5)/(d+0.5))
	if p := ix.params.IDFPower; p > 0 && p != 1 {
		idf = math.Pow(idf, p)
	}
	return idf
}

// Smooth adds to the score of every hit weight times its resemblance to
// the best k hits (the cluster hypothesis): the sum of their scores, each
// times the cosine of the two entries' term sets weighted by IDF, a hit's
// own score excepted. An entry like several strong matches rises; one that
// matched on an incidental word alone does not. Terms for which ignore
// returns true are left out of the cosines. Scores only rise, and hits,
// from Search on this index, are re-sorted in place.
func (ix *Index) Smooth(hits []Hit, k int, weight float64, ignore func(term string) bool) {
	k = min(k, len(hits))
	if k == 0 || weight <= 0 {
		return
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	// The unit vector of hit i is vec[at[i]:at[i+1]].
	type coord struct {
		pl *postingList
		w  float64
	}
	vec := make([]coord, 0, 32*len(hits))
	at := make([]int, 1, len(hits)+1)
	for _, h := range hits {
		start, norm := len(vec), 0.0
		for _, pl := range h.Entry.terms {
			if !ignore(pl.term) {
				w := ix.idf(pl.df)
				vec = append(vec, coord{pl, w})
				norm += w * w
			}
		}
		for c := range vec[start:] {
			vec[start+c].w /= math.Sqrt(norm)
		}
		at = append(at, len(vec))
	}
	// centroid is the score-weighted sum of the best k unit vectors.
	centroid := make(map[*postingList]float64, 32*k)
	for i, h := range hits[:k] {
		for _, c := range vec[at[i]:at[i+1]] {
			centroid[c.pl] += h.Score * c.w
		}
	}
	for i := range hits {
		var dot float64
		for _, c := range vec[at[i]:at[i+1]] {
			dot += c.w * centroid[c.pl]
		}
		if i < k && at[i+1] > at[i] {
			dot = max(0, dot-hits[i].Score) // less its own unit vector, at its score
		}
		hits[i].Score += weight * dot
	}
	sort.Slice(hits, func(i, j int) bool { return less(hits[j], hits[i]) })
}

// accumulator sums scores per entry. Variants of one query word first
// compete in best, and only the winner per entry is folded into score.
type accumulator struct {
	score       []float64
	touched     []uint32
	best        []float64
	bestTouched []uint32
}

func (ix *Index) getAcc(n int) *accumulator {
	a, _ := ix.pool.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if cap(a.score) < n {
		a.score = make([]float64, n)
		a.best = make([]float64, n)
	}
	a.score = a.score[:n]
	a.best = a.best[:n]
	a.touched = a.touched[:0]
	a.bestTouched = a.bestTouched[:0]
	return a
}

// add adds s to doc's score. Scores are always positive, so a zero score
// marks an untouched entry.
func (a *accumulator) add(doc uint32, s float64) {
	if a.score[doc] == 0 {
		a.touched = append(a.touched, doc)
	}
	a.score[doc] += s
}

func (a *accumulator) addBest(doc uint32, s float64) {
	if a.best[doc] == 0 {
		a.bestTouched = append(a.bestTouched, doc)
	}
	if s > a.best[doc] {
		a.best[doc] = s
	}
}

func (a *accumulator) foldBest() {
	for _, d := range a.bestTouched {
		a.add(d, a.best[d])
		a.best[d] = 0
	}
	a.bestTouched = a.bestTouched[:0]
}

func (a *accumulator) top(entries []*Entry, filter func(*Entry) bool, limit int) ([]Hit, int) {
	hits := make([]Hit, 0, limit+1)
	total := 0
	for _, d := range a.touched {
		e := entries[d]
		s := a.score[d] * e.boost
		a.score[d] = 0
		if filter != nil && !filter(e) {
			continue
		}
		total++
		if len(hits) < limit {
			hits = append(hits, Hit{Entry: e, Score: s})
			if len(hits) == limit {
				sort.Slice(hits, func(i, j int) bool { return less(hits[j], hits[i]) })
			}
			continue
		}
		// hits is sorted descending; replace the worst if better.
		h := Hit{Entry: e, Score: s}
		if !less(hits[limit-1], h) {
			continue
		}
		i := sort.Search(limit, func(i int) bool { return less(hits[i], h) })
		copy(hits[i+1:], hits[i:limit-1])
		hits[i] = h
	}
	a.touched = a.touched[:0]
	if len(hits) < limit {
		sort.Slice(hits, func(i, j int) bool { return less(hits[j], hits[i]) })
	}
	return hits, total
}

// less orders hits ascending by score, then descending by key/ord so the
// earliest document wins a tie.
func less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	if a.Entry.Source.Key != b.Entry.Source.Key {
		return a.Entry.Source.Key > b.Entry.Source.Key
	}
	return a.Entry.Ord > b.Entry.Ord
}
