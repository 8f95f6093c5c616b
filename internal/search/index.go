// Package search is knowhub's in-memory inverted index: postings of raw
// term frequencies per field, live global statistics, and BM25F scoring
// with filters applied before the top-k cut. It is a pure core: documents
// arrive as Doc values, in the compact form of a vocabulary and per-field
// term indexes, and nothing here does I/O.
package search

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxFields is the number of fields one collection may index: docs use
// five (title, summary, heading, body and learned words).
const MaxFields = 5

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
	// OutlineField, when set, names the field whose terms over all of a
	// source's entries make its outline (Source.Outline).
	OutlineField string
}

// saturationBound is more than a term's saturated frequency can reach in
// one entry: tf/(k+tf) < 1, so a field of its own adds less than
// Weight·(K1+1), and the shared fields together less than K1+1.
func (p Params) saturationBound() float64 {
	bound, shared := 0.0, false
	for _, f := range p.Fields {
		if f.K1 > 0 {
			bound += f.Weight * (f.K1 + 1)
		} else {
			shared = true
		}
	}
	if shared {
		bound += p.K1 + 1
	}
	return bound
}

// Doc is one source document (a file, a tool, a knowledge entry), replaced
// as a unit by Put. A Deleted doc removes the source but still counts its
// SourceSeq as applied.
type Doc struct {
	Collection string
	Repo       string
	Path       string
	SourceSeq  uint64
	Meta       Meta
	Deleted    bool
	// Lang is the language of a docs page (package lang), "" when
	// undetermined.
	Lang string
	// Vocab lists the document's distinct terms, each once; its chunks'
	// fields index it.
	Vocab  []string
	Chunks []Chunk
	// EmbeddingModel names the space of the chunks' Embedding vectors.
	EmbeddingModel string
}

// Meta is what conflict resolution reads of a document's repository.
type Meta struct {
	Priority int
	Type     string
	// Demote lists the repository's demote globs (contract.RepoMeta).
	Demote []string
}

// Chunk is one searchable section of a Doc.
type Chunk struct {
	ID          string
	Ord         int
	HeadingPath []string
	Title       string
	Text        string
	// Markdown is the section as written, for agents; empty when only
	// Text is known.
	Markdown string
	// SectionKey groups the chunk with its counterparts in other
	// repositories (see Entry.SectionKey).
	SectionKey string
	// Boost multiplies the chunk's score; 0 means 1.
	Boost  float64
	Fields []FieldTerms
	// Vec is the chunk's pooled word vector (package semantic), or nil.
	Vec []byte
	// Embedding is the chunk's vector from an embeddings endpoint (int8
	// components, semantic.Cosine reads them), or nil.
	Embedding []byte
}

// FieldTerms is one field's term frequencies in a chunk: Terms are
// ascending indexes into Doc.Vocab, TFs their frequencies.
type FieldTerms struct {
	Field string
	Terms []uint32
	TFs   []uint32
}

// Source is what an index keeps of a Doc besides its chunks.
type Source struct {
	Key        string
	Collection string
	Repo       string
	Path       string
	SourceSeq  uint64
	Meta       Meta
	// Lang is Doc.Lang.
	Lang string
	// Extra is the caller's decoded record of the document (a tool's
	// descriptor, a knowledge entry), for filters and replies.
	Extra any
	// Chunks is the number of the document's entries.
	Chunks int
	// Outline holds the posting list ids of the terms of the document's
	// Params.OutlineField in any entry, ascending: for a docs page, the
	// words of its headings.
	Outline []uint32
	// EmbeddingModel is the Doc's.
	EmbeddingModel string
}

// Entry is one searchable chunk.
type Entry struct {
	Source      *Source
	ID          string
	Ord         int
	HeadingPath []string
	Title       string
	Text        string
	// Markdown is the chunk's Markdown (Chunk.Markdown).
	Markdown string
	// SectionKey is the key that groups the entry with the same section
	// in other repositories, as the caller computed it.
	SectionKey string
	// Vec is the entry's pooled word vector (package semantic), or nil.
	Vec []byte
	// Embedding is the entry's endpoint vector (Chunk.Embedding), in the
	// space of Source.EmbeddingModel.
	Embedding []byte

	ord uint32
	// terms are the ids of the entry's posting lists (see Index.lists):
	// ids rather than pointers, half the size and nothing for the garbage
	// collector to scan.
	terms []uint32
}

// docStat is what scoring reads of an entry, kept in one flat slice by
// ordinal so that the posting loop reads memory in order instead of
// chasing an entry pointer per posting.
type docStat struct {
	lens  [MaxFields]uint16 // field lengths, saturating at MaxUint16
	boost float64           // positive; 0 once the entry is removed
}

func (st *docStat) alive() bool { return st.boost > 0 }

// addLen adds n to a field length, saturating.
func addLen(l uint16, n uint32) uint16 {
	return uint16(min(uint32(l)+n, math.MaxUint16))
}

type posting struct {
	doc uint32
	tf  [MaxFields]uint8 // clamped at MaxTF
}

// postingList is a term's postings, in Index.lists at the term's id in
// Index.terms. A removed term's list is empty.
type postingList struct {
	postings []posting
	df       int // alive postings
	// remote counts the entries of other shards holding the term (see
	// PutStats).
	remote uint32
	// impacts caches what each posting scores before IDF, for the index
	// generation it was computed at; see Index.impacts.
	impacts atomic.Pointer[impacts]
}

// impacts holds, for one generation of an index, a posting list's BM25F
// saturated term frequencies times the entries' boosts (0 for a removed
// entry), parallel to its postings.
type impacts struct {
	gen uint64
	v   []float64
}

// Index holds one collection. It is safe for concurrent use: searches share
// a read lock, updates take the write lock.
type Index struct {
	params  Params
	fieldOf map[string]int

	mu      sync.RWMutex
	entries []*Entry  // by ordinal
	stats   []docStat // by ordinal, parallel to entries
	// maxBoost bounds every entry's boost (it never decreases), for the
	// pruning bound of Search.
	maxBoost float64
	sources  map[string][]*Entry
	terms    termDict
	lists    []postingList // by term id
	// vocab lists term ids by first byte and length, for typo expansion
	// and completions; it may hold removed ids (see vocabOf).
	vocab map[vocabKey][]uint32
	alive int
	dead  int
	// repoEntries counts the live entries of each repository, those of
	// remotes included.
	repoEntries map[string]int
	// remotes are the documents the index holds the statistics of (see
	// PutStats), and remoteEntries counts their entries.
	remotes       map[string]*remote
	remoteEntries int
	sumLen        [MaxFields]uint64
	applied       uint64 // highest SourceSeq applied, for stats
	// gen counts the updates: every one may change the statistics that
	// cached impacts depend on. searched is the generation the latest
	// search saw.
	gen      uint64
	searched atomic.Uint64
	// norms holds the length norms of the latest average field lengths.
	norms atomic.Pointer[lenNorms]
	// idfs holds the IDFs of small document frequencies at the latest
	// count of live entries.
	idfs atomic.Pointer[idfTable]
	pool sync.Pool
	// scratch is Put's, under mu: see putScratch.
	scratch struct {
		lists []uint32
		slot  []int32
		rows  []mergedTerm
	}
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
		terms:   newTermDict(),
		vocab:   make(map[vocabKey][]uint32),
	}
	for i, f := range p.Fields {
		ix.fieldOf[f.Name] = i
	}
	return ix, nil
}

// Put replaces every chunk of the source key with doc's chunks, keeping
// extra on the source. A doc marked Deleted removes the source.
func (ix *Index) Put(key string, doc *Doc, extra any) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	ix.removeLocked(key)
	ix.removeRemote(key)
	if doc.SourceSeq > ix.applied {
		ix.applied = doc.SourceSeq
	}
	if doc.Deleted || len(doc.Chunks) == 0 {
		return
	}
	src := &Source{Key: key, Collection: doc.Collection, Repo: doc.Repo, Path: doc.Path, SourceSeq: doc.SourceSeq, Meta: doc.Meta, Lang: doc.Lang, Extra: extra,
		Chunks: len(doc.Chunks), EmbeddingModel: doc.EmbeddingModel}
	list := make([]*Entry, 0, len(doc.Chunks))
	outline, hasOutline := ix.fieldOf[ix.params.OutlineField]
	// The compact form names each of the document's terms once, so the
	// global term map is consulted once per distinct term, not per chunk.
	lists, slot, rows := ix.putScratch(len(doc.Vocab))
	defer func() { clear(lists); ix.scratch.rows = rows[:0] }()
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		e := &Entry{Source: src, ID: c.ID, Ord: c.Ord, HeadingPath: c.HeadingPath, Title: c.Title, Text: c.Text, Markdown: c.Markdown,
			SectionKey: c.SectionKey, Vec: c.Vec, Embedding: c.Embedding,
			ord: uint32(len(ix.entries))}
		st := docStat{boost: 1}
		if c.Boost > 0 {
			st.boost = c.Boost
		}
		ix.maxBoost = max(ix.maxBoost, st.boost)
		// Merge per-field term frequencies into one posting per term.
		rows = rows[:0]
		for _, f := range c.Fields {
			fi, ok := ix.fieldOf[f.Field]
			if !ok {
				continue
			}
			for k, t := range f.Terms {
				tf := f.TFs[k]
				if tf == 0 {
					continue
				}
				r := slot[t]
				if r == 0 {
					rows = append(rows, mergedTerm{term: t})
					r = int32(len(rows))
					slot[t] = r
				}
				rows[r-1].tf[fi] = clampTF(int(rows[r-1].tf[fi]) + int(tf))
				st.lens[fi] = addLen(st.lens[fi], tf)
			}
		}
		e.terms = make([]uint32, 0, len(rows))
		for _, r := range rows {
			slot[r.term] = 0
			id := lists[r.term]
			if id == 0 {
				id = ix.listID(doc.Vocab[r.term]) + 1
				lists[r.term] = id
			}
			pl := &ix.lists[id-1]
			pl.postings = append(pl.postings, posting{doc: e.ord, tf: r.tf})
			pl.df++
			e.terms = append(e.terms, id-1)
			if hasOutline && r.tf[outline] > 0 {
				src.Outline = append(src.Outline, id-1)
			}
		}
		for f := range st.lens {
			ix.sumLen[f] += uint64(st.lens[f])
		}
		ix.entries = append(ix.entries, e)
		ix.stats = append(ix.stats, st)
		ix.alive++
		list = append(list, e)
	}
	if ix.repoEntries == nil {
		ix.repoEntries = make(map[string]int)
	}
	ix.repoEntries[doc.Repo] += len(list)
	slices.Sort(src.Outline)
	src.Outline = slices.Clip(slices.Compact(src.Outline))
	ix.sources[key] = list
}

// putScratch returns Put's scratch for a document of n terms: the posting
// list id of each term plus one, resolved on first use (all 0), the row of
// each term in the chunk being merged, plus one (all 0), and the rows. Put
// holds the write lock, so one scratch serves every call; a very large
// document gets its own.
func (ix *Index) putScratch(n int) ([]uint32, []int32, []mergedTerm) {
	const maxKept = 1 << 16
	if n > maxKept {
		return make([]uint32, n), make([]int32, n), nil
	}
	sc := &ix.scratch
	if cap(sc.lists) < n {
		sc.lists, sc.slot = make([]uint32, n, max(n, 1024)), make([]int32, n, max(n, 1024))
	}
	return sc.lists[:n], sc.slot[:n], sc.rows[:0]
}

// Trim gives back the spare capacity that appending left in posting lists
// (up to half of them), for an index that has loaded and will mostly be
// read from now on. It holds the write lock for trimBatch lists at a
// time, so that searches go on meanwhile: a whole index of twenty
// languages takes a few hundred milliseconds.
func (ix *Index) Trim() {
	for start := 0; ix.trimFrom(start); start += trimBatch {
	}
}

const trimBatch = 4096

// trimFrom trims the posting lists from id start on, trimBatch of them,
// and reports whether there were any.
func (ix *Index) trimFrom(start int) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if start >= len(ix.lists) {
		return false
	}
	for i := start; i < min(start+trimBatch, len(ix.lists)); i++ {
		if pl := &ix.lists[i]; cap(pl.postings)-len(pl.postings) > len(pl.postings)/8 {
			exact := make([]posting, len(pl.postings))
			copy(exact, pl.postings)
			pl.postings = exact
		}
	}
	return true
}

// listID returns the id of term's posting list, adding the term if new.
// The dictionary copies a new term: a decoded document's terms share one
// allocation, which the index must not keep.
func (ix *Index) listID(term string) uint32 {
	id, added := ix.terms.add(term)
	if added {
		if int(id) == len(ix.lists) {
			ix.lists = append(ix.lists, postingList{})
		}
		ix.addVocab(term, id)
	}
	return id
}

// vocabKey groups vocabulary terms by first byte and byte length: typo
// expansions and completions share the query term's first letter.
type vocabKey struct {
	first byte
	n     int
}

// mergedTerm is one term of a chunk, by vocabulary index, with its
// frequency in each field.
type mergedTerm struct {
	term uint32
	tf   [MaxFields]uint8
}

// MaxTF caps a term's frequency in one field of one entry, so that a
// posting takes 8 bytes. BM25 saturates long before: with k1 = 1.2, a
// term 255 times in a field already scores over 99% of its limit.
const MaxTF = math.MaxUint8

func clampTF(n int) uint8 {
	return uint8(min(n, MaxTF))
}

// Remove deletes every chunk of the source key.
func (ix *Index) Remove(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	ix.removeLocked(key)
	ix.removeRemote(key)
}

func (ix *Index) removeLocked(key string) {
	list, ok := ix.sources[key]
	if !ok {
		return
	}
	delete(ix.sources, key)
	if len(list) > 0 {
		repo := list[0].Source.Repo
		if ix.repoEntries[repo] -= len(list); ix.repoEntries[repo] <= 0 {
			delete(ix.repoEntries, repo)
		}
	}
	for _, e := range list {
		st := &ix.stats[e.ord]
		st.boost = 0
		for _, id := range e.terms {
			pl := &ix.lists[id]
			pl.df--
			switch {
			case pl.df == 0 && pl.remote == 0:
				ix.terms.remove(id)
				*pl = postingList{}
			case pl.df == 0:
				// Other shards' entries still hold the term.
				pl.postings = nil
				pl.impacts.Store(nil)
			case pl.df*2 < len(pl.postings) && len(pl.postings) > 8:
				ix.compactList(pl)
			}
		}
		e.terms = nil
		for f := range st.lens {
			ix.sumLen[f] -= uint64(st.lens[f])
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
	stats := make([]docStat, 0, ix.alive)
	for i, e := range ix.entries {
		if ix.stats[i].alive() {
			remap[i] = uint32(len(live))
			e.ord = uint32(len(live))
			live = append(live, e)
			stats = append(stats, ix.stats[i])
		}
	}
	for i := range ix.lists {
		pl := &ix.lists[i]
		// A new array: the old one may be a read-only map (see Restore).
		out := make([]posting, 0, pl.df)
		for _, p := range pl.postings {
			if ix.stats[p.doc].alive() {
				p.doc = remap[p.doc]
				out = append(out, p)
			}
		}
		pl.postings = out
	}
	ix.entries = live
	ix.stats = stats
	ix.dead = 0
	ix.terms.compact()
	clear(ix.vocab)
	for id := range uint32(ix.terms.Cap()) {
		if ix.terms.alive(id) {
			ix.addVocab(ix.terms.term(id), id)
		}
	}
}

func (ix *Index) addVocab(term string, id uint32) {
	if term == "" {
		return // nothing is close to it
	}
	k := vocabKey{first: term[0], n: len(term)}
	ix.vocab[k] = append(ix.vocab[k], id)
}

// vocabOf yields the live terms listed under k, possibly twice: an id
// stays listed when its term is removed, and may come back for another.
func (ix *Index) vocabOf(k vocabKey) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, id := range ix.vocab[k] {
			if !ix.terms.alive(id) {
				continue
			}
			if t := ix.terms.term(id); len(t) == k.n && t[0] == k.first && !yield(t) {
				return
			}
		}
	}
}

// list returns the posting list of term, nil if the index has none.
func (ix *Index) list(term string) *postingList {
	id, ok := ix.terms.find(term)
	if !ok {
		return nil
	}
	return &ix.lists[id]
}

// compactList rewrites a list without its removed entries, into a new
// array: the old one may be a read-only map (see Restore).
func (ix *Index) compactList(pl *postingList) {
	out := make([]posting, 0, pl.df)
	for _, p := range pl.postings {
		if ix.stats[p.doc].alive() {
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
	// Collection counts the live entries of the whole collection: Chunks
	// and those of other shards whose statistics the index holds.
	Collection int `json:"collection_chunks"`
}

// Stats returns counts under the read lock.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Stats{Sources: len(ix.sources), Chunks: ix.alive, Terms: ix.terms.Len(), Applied: ix.applied, Collection: ix.collection()}
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

// Entries returns the live entries of the source key in the order they
// were put (a docs page's sections in page order), or nil.
func (ix *Index) Entries(key string) []*Entry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.sources[key])
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
	for _, id := range e.terms {
		out = append(out, ix.terms.term(id))
	}
	return out
}

// TermSet is the distinct terms of one entry: ids sorted ascending (an
// id stands for one term within one call) and each term's IDF.
type TermSet struct {
	IDs []uint32
	IDF []float64
}

// TermCounts returns the number of distinct terms of each hit's entry
// (0 for an entry removed since the search). It takes the read lock once.
func (ix *Index) TermCounts(hits []Hit) []int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = len(h.Entry.terms)
	}
	return out
}

// TermSets returns the term set of each hit's entry for which want is
// true (all when want is nil), for comparing the entries' vocabularies.
// It takes the read lock once.
func (ix *Index) TermSets(hits []Hit, want []bool) []TermSet {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]TermSet, len(hits))
	var byDF [256]float64 // most terms are rare: their IDFs are computed once
	for i, h := range hits {
		if want != nil && !want[i] {
			continue
		}
		ids := slices.Clone(h.Entry.terms)
		slices.Sort(ids)
		idf := make([]float64, len(ids))
		for k, id := range ids {
			df := ix.lists[id].n()
			if df >= len(byDF) {
				idf[k] = ix.idf(df)
				continue
			}
			if byDF[df] == 0 {
				byDF[df] = ix.idf(df)
			}
			idf[k] = byDF[df]
		}
		out[i] = TermSet{IDs: ids, IDF: idf}
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
//
// Query words are scored term at a time, the most selective first. Once
// the Limit-th best score so far exceeds what every remaining word could
// still add to an entry that has none yet (max-score pruning), the common
// words only rescore the candidates: the top Limit is unchanged, and
// entries they alone match are counted in total without being scored.
func (ix *Index) Search(q Query) (hits []Hit, total int) {
	hits, total, _ = ix.search(q)
	return hits, total
}

// search is Search, also reporting whether pruning engaged.
func (ix *Index) search(q Query) (hits []Hit, total int, pruned bool) {
	if q.Limit <= 0 || len(q.Terms) == 0 {
		return nil, 0, false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	acc := ix.getAcc(len(ix.entries))
	defer ix.pool.Put(acc)

	sc := ix.newScorer()
	sc.norms = ix.lenNorms(&sc)
	// Read first: between updates, searches on other cores only share the
	// cache line.
	if sc.quiet = ix.searched.Load() == ix.gen; !sc.quiet {
		ix.searched.Store(ix.gen)
	}
	groups := ix.groupTerms(q.Terms)
	// rest[i] bounds what groups i.. can add to one entry's final score.
	rest := make([]float64, len(groups)+1)
	for i := len(groups) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + groups[i].bound*ix.maxBoost
	}
	for i, g := range groups {
		// No entry can have scored more than rest[0]-rest[i] yet: until
		// that exceeds rest[i], the floor cannot, and is not computed.
		if !pruned && i > 0 && len(acc.touched) >= q.Limit && rest[0]-rest[i] > rest[i] {
			pruned = acc.kth(ix.entries, q.Filter, q.Limit) > rest[i]
		}
		ix.scoreGroup(acc, &sc, g, pruned)
	}
	hits, total = acc.top(ix.entries, q.Filter, q.Limit)
	return hits, total + acc.countSeen(ix.entries, ix.stats, q.Filter, ix.dead > 0), pruned
}

// scorer holds one query's BM25F constants: a field's length norm is
// c0 + c1·len; fieldK1 is a field's own saturation (0: shared, k1).
type scorer struct {
	k1      float64
	nAlive  float64
	weight  [MaxFields]float64
	fieldK1 [MaxFields]float64
	c0, c1  [MaxFields]float64
	fields  int
	// shared is set when no field saturates on its own (docs).
	shared bool
	norms  *lenNorms
	// quiet is set when the index has not changed since the search
	// before: impacts computed now are worth keeping.
	quiet bool
}

func (ix *Index) newScorer() scorer {
	sc := scorer{k1: ix.params.K1, nAlive: float64(ix.collection()), fields: len(ix.params.Fields), shared: true}
	for f, fp := range ix.params.Fields {
		avg := 0.0
		if sc.nAlive > 0 {
			avg = float64(ix.sumLen[f]) / sc.nAlive
		}
		if avg == 0 {
			avg = 1
		}
		sc.weight[f] = fp.Weight
		sc.fieldK1[f] = fp.K1
		sc.shared = sc.shared && fp.K1 <= 0
		sc.c0[f] = 1 - fp.B
		sc.c1[f] = fp.B / avg
	}
	return sc
}

// termGroup is one query word's postings: its exact term and expansions,
// of which an entry counts only its best.
type termGroup struct {
	lists   []*postingList
	weights []float64 // idf × term weight, per list
	bound   float64   // the most one entry can gain from the group
}

// groupTerms resolves the query's terms to posting lists, grouped by query
// word, most selective (highest bound) first.
func (ix *Index) groupTerms(terms []Term) []termGroup {
	sat := ix.params.saturationBound()
	// First each term's list and group, then every group's lists and
	// weights carved out of two shared arrays: a query of many words and
	// expansions allocates a handful of times, not twice per group.
	type resolved struct {
		pl    *postingList
		w     float64
		group int
	}
	res := make([]resolved, 0, len(terms))
	ids := make([]int, 0, len(terms)) // the Group of each group
	var counts []int
	for _, t := range terms {
		pl := ix.list(t.Text)
		// A term only other shards' entries hold keeps its place: groups
		// are ordered by their bounds, and the order in which an entry's
		// groups add up must be the whole collection's to the last bit.
		if pl == nil || pl.n() == 0 {
			continue
		}
		// A word's variants follow it: look at the last group first.
		gi := len(ids) - 1
		if gi < 0 || ids[gi] != t.Group {
			gi = slices.Index(ids, t.Group)
		}
		if gi < 0 {
			gi = len(ids)
			ids = append(ids, t.Group)
			counts = append(counts, 0)
		}
		counts[gi]++
		res = append(res, resolved{pl, ix.idf(pl.n()) * t.Weight, gi})
	}
	groups := make([]termGroup, len(ids))
	lists := make([]*postingList, len(res))
	weights := make([]float64, len(res))
	at := 0
	for gi, n := range counts {
		groups[gi].lists = lists[at : at : at+n]
		groups[gi].weights = weights[at : at : at+n]
		at += n
	}
	for _, r := range res {
		g := &groups[r.group]
		g.lists = append(g.lists, r.pl)
		g.weights = append(g.weights, r.w)
		g.bound = max(g.bound, r.w*sat)
	}
	slices.SortStableFunc(groups, func(a, b termGroup) int { return cmp.Compare(b.bound, a.bound) })
	return groups
}

// scoreGroup adds a group's BM25F contributions to the accumulator: per
// posting, the list's weight times the posting's impact. When pruned,
// only entries already scored are updated; the others are only noted for
// the total, which spares reading most postings' impacts for a common
// word. An entry that matches several lists of the group counts only its
// best.
func (ix *Index) scoreGroup(acc *accumulator, sc *scorer, g termGroup, pruned bool) {
	if len(g.lists) == 1 {
		scoreList(acc, g.lists[0].postings, ix.impacts(g.lists[0], sc, acc), g.weights[0], pruned)
		return
	}
	for li, pl := range g.lists {
		w, imp := g.weights[li], ix.impacts(pl, sc, acc)
		for i, p := range pl.postings {
			if pruned && acc.score[p.doc] == 0 {
				acc.see(p.doc)
				continue
			}
			if imp[i] > 0 {
				acc.addBest(p.doc, w*imp[i])
			}
		}
	}
	acc.foldBest()
}

// scoreList is scoreGroup for a word of one posting list, the usual case,
// in loops of their own: the one that scores every posting holds its
// state in registers, with room made for the entries it may touch.
func scoreList(acc *accumulator, postings []posting, imp []float64, w float64, pruned bool) {
	score := acc.score
	imp = imp[:len(postings)]
	if pruned {
		for i, p := range postings {
			old := score[p.doc]
			if old == 0 {
				acc.see(p.doc)
			} else if imp[i] > 0 {
				score[p.doc] = old + w*imp[i]
			}
		}
		return
	}
	touched := slices.Grow(acc.touched, len(postings))
	n := len(touched)
	room := touched[:cap(touched)]
	for i := range postings {
		d, v := postings[i].doc, imp[i]
		if v == 0 {
			continue // a removed entry
		}
		old := score[d]
		if old == 0 {
			room[n] = d
			n++
		}
		score[d] = old + w*v
	}
	acc.touched = touched[:n]
}

// impacts returns the impacts of a posting list's postings (see impacts),
// computing them if the index changed since they were cached: between
// updates, a word's postings are scored once, and each search then only
// multiplies by the word's weight. While updates keep coming (an initial
// load, a reindex), impacts are computed in the accumulator's scratch and
// not kept, and a stale cache is dropped: the second search in a row that
// finds the index unchanged caches them. Concurrent searches may each
// compute them; any is right. The caller holds the read lock, and uses
// the list before the next call.
func (ix *Index) impacts(pl *postingList, sc *scorer, acc *accumulator) []float64 {
	c := pl.impacts.Load()
	if c != nil && c.gen == ix.gen {
		return c.v
	}
	var v []float64
	if sc.quiet {
		v = make([]float64, len(pl.postings))
	} else {
		if c != nil {
			pl.impacts.CompareAndSwap(c, nil)
		}
		if cap(acc.impacts) < len(pl.postings) {
			acc.impacts = make([]float64, len(pl.postings))
		}
		v = acc.impacts[:len(pl.postings)]
		clear(v)
	}
	if sc.shared {
		sharedImpacts(v, pl.postings, ix.stats, sc)
	} else {
		for i, p := range pl.postings {
			if st := &ix.stats[p.doc]; st.alive() {
				v[i] = st.boost * sc.saturated(&p.tf, &st.lens)
			}
		}
	}
	if sc.quiet {
		pl.impacts.Store(&impacts{gen: ix.gen, v: v})
	}
	return v
}

// sharedImpacts computes impacts in an index whose fields share one
// saturation (docs) in a loop of its own. It spells out the five fields:
// the constant below stops the build if MaxFields changes.
func sharedImpacts(v []float64, postings []posting, stats []docStat, sc *scorer) {
	n, wt, k1 := sc.norms, sc.weight, sc.k1
	v = v[:len(postings)]
	for i, p := range postings {
		st := &stats[p.doc]
		if !st.alive() {
			continue
		}
		x := wt[0]*float64(p.tf[0])*n.of(0, st.lens[0]) + wt[1]*float64(p.tf[1])*n.of(1, st.lens[1]) +
			wt[2]*float64(p.tf[2])*n.of(2, st.lens[2]) + wt[3]*float64(p.tf[3])*n.of(3, st.lens[3])
		if p.tf[4] != 0 {
			x += wt[4] * float64(p.tf[4]) * n.of(4, st.lens[4])
		}
		v[i] = st.boost * (x * (k1 + 1) / (k1 + x))
	}
}

// sharedImpacts reads exactly fields 0 to 4.
const _ = uint(MaxFields-5) + uint(5-MaxFields)

// saturated returns BM25F's saturated term frequency of a posting's
// frequencies tf in an entry of field lengths lens. Fields without a K1
// of their own share one saturation; the others saturate alone and add up.
func (sc *scorer) saturated(tf *[MaxFields]uint8, lens *[MaxFields]uint16) float64 {
	var shared, own float64
	for f := 0; f < sc.fields; f++ {
		if tf[f] == 0 {
			continue
		}
		x := float64(tf[f]) * sc.norms.of(f, lens[f])
		if k := sc.fieldK1[f]; k > 0 {
			own += sc.weight[f] * x * (k + 1) / (k + x)
		} else {
			shared += sc.weight[f] * x
		}
	}
	if shared > 0 {
		own += shared * (sc.k1 + 1) / (sc.k1 + shared)
	}
	return own
}

// normLens is how many field lengths lenNorms tabulates.
const normLens = 1024

// lenNorms tabulates the inverse length norm 1/(c0+c1·len) of each field
// for lengths below normLens, for one set of average field lengths (c1
// depends on them): scoring multiplies frequencies by it where it would
// divide. A table is 32 KB, built again only once the averages change.
type lenNorms struct {
	c0, c1 [MaxFields]float64
	inv    [MaxFields][normLens]float64
}

// of returns the inverse length norm of field f at length l.
func (n *lenNorms) of(f int, l uint16) float64 {
	if int(l) < normLens {
		return n.inv[f][l]
	}
	return 1 / (n.c0[f] + n.c1[f]*float64(l))
}

// lenNorms returns the norms for the scorer's averages, building them
// when they changed. Concurrent searches may each build one; any is right.
func (ix *Index) lenNorms(sc *scorer) *lenNorms {
	if n := ix.norms.Load(); n != nil && n.c0 == sc.c0 && n.c1 == sc.c1 {
		return n
	}
	n := &lenNorms{c0: sc.c0, c1: sc.c1}
	for f := range sc.fields {
		for l := range normLens {
			n.inv[f][l] = 1 / (sc.c0[f] + sc.c1[f]*float64(l))
		}
	}
	ix.norms.Store(n)
	return n
}

// idf is the BM25 inverse document frequency of a term in df live
// entries, raised to Params.IDFPower. The caller holds the read lock.
func (ix *Index) idf(df int) float64 {
	if df < idfTabled {
		t := ix.idfs.Load()
		if t == nil || t.alive != ix.collection() {
			t = ix.tabulateIDF()
		}
		if df < len(t.vals) {
			return t.vals[df]
		}
	}
	return ix.computeIDF(df)
}

func (ix *Index) computeIDF(df int) float64 {
	n, d := float64(ix.collection()), float64(df)
	idf := math.Log(1 + (n-d+0.5)/(d+0.5))
	if p := ix.params.IDFPower; p > 0 && p != 1 {
		idf = math.Pow(idf, p)
	}
	return idf
}

// idfTabled is how many document frequencies, from 0, idfTable holds:
// a query's words and their expansions mostly have small ones, and an
// IDF with a power other than 1 costs a math.Pow.
const idfTabled = 1024

// idfTable holds computeIDF of each document frequency below idfTabled
// (and at most alive) at one count of live entries.
type idfTable struct {
	alive int
	vals  []float64
}

// tabulateIDF builds the table of the current count of live entries,
// under the read lock; searches racing to build it build the same one.
func (ix *Index) tabulateIDF() *idfTable {
	t := &idfTable{alive: ix.collection(), vals: make([]float64, min(ix.collection()+1, idfTabled))}
	for df := range t.vals {
		t.vals[df] = ix.computeIDF(df)
	}
	ix.idfs.Store(t)
	return t
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
		for _, id := range h.Entry.terms {
			if pl := &ix.lists[id]; !ignore(ix.terms.term(id)) {
				w := ix.idf(pl.n())
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
	sortDesc(hits)
}

// accumulator sums scores per entry. Variants of one query word first
// compete in best, and only the winner per entry is folded into score.
type accumulator struct {
	score       []float64
	touched     []uint32
	best        []float64
	bestTouched []uint32
	// seen marks entries matched only by pruned words, listed in seenList.
	seen     []uint64
	seenList []uint32
	heap     []float64
	cand     []scored  // top's
	impacts  []float64 // scratch of impacts not kept
}

func (ix *Index) getAcc(n int) *accumulator {
	a, _ := ix.pool.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if cap(a.score) < n {
		a.score = make([]float64, n)
		a.best = make([]float64, n)
		a.seen = make([]uint64, (n+63)/64)
	}
	a.score = a.score[:n]
	a.best = a.best[:n]
	a.seen = a.seen[:(n+63)/64]
	a.touched = a.touched[:0]
	a.bestTouched = a.bestTouched[:0]
	a.seenList = a.seenList[:0]
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

func (a *accumulator) see(doc uint32) {
	w, bit := doc/64, uint64(1)<<(doc%64)
	if a.seen[w]&bit == 0 {
		a.seen[w] |= bit
		a.seenList = append(a.seenList, doc)
	}
}

// countSeen counts the live entries noted by see that pass filter, and
// clears the marks. Without a filter, in an index with no dead entry (the
// usual case), every noted entry counts and none is read: at scale most
// of them would be a cache miss each.
func (a *accumulator) countSeen(entries []*Entry, stats []docStat, filter func(*Entry) bool, anyDead bool) int {
	n := 0
	if filter == nil && !anyDead {
		n = len(a.seenList)
		for _, d := range a.seenList {
			a.seen[d/64] = 0
		}
	} else {
		for _, d := range a.seenList {
			a.seen[d/64] = 0
			if stats[d].alive() && (filter == nil || filter(entries[d])) {
				n++
			}
		}
	}
	a.seenList = a.seenList[:0]
	return n
}

// kth returns the limit-th best final score among the scored entries that
// pass filter (0 if fewer pass): a floor under the final top-limit.
// Without a filter, the usual case, the loop calls nothing on the path of
// an entry below the floor.
func (a *accumulator) kth(entries []*Entry, filter func(*Entry) bool, limit int) float64 {
	h, score := slices.Grow(a.heap[:0], limit), a.score
	root := math.Inf(-1) // h[0] once h is full
	if filter == nil {
		for _, d := range a.touched {
			if s := score[d]; s > root {
				h, root = keep(h, s, limit)
			}
		}
	} else {
		for _, d := range a.touched {
			if s := score[d]; s > root && filter(entries[d]) {
				h, root = keep(h, s, limit)
			}
		}
	}
	a.heap = h
	if len(h) < limit {
		return 0
	}
	return h[0]
}

// keep adds s to h, a min-heap of at most limit scores with room for
// them, and returns it and its root once full (-Inf until then).
func keep(h []float64, s float64, limit int) ([]float64, float64) {
	if len(h) < limit {
		h = h[:len(h)+1]
		h[len(h)-1] = s
		siftUp(h, len(h)-1)
		if len(h) < limit {
			return h, math.Inf(-1)
		}
		return h, h[0]
	}
	h[0] = s
	siftDown(h, 0)
	return h, h[0]
}

// siftUp and siftDown keep h a min-heap of floats.
func siftUp(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []float64, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r] < h[l] {
			l = r
		}
		if h[i] <= h[l] {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// top returns the best limit hits among the scored entries that pass
// filter, best first, and how many passed, and clears the scores. Scores
// are final (boosted as they were added). One pass keeps the best limit
// scores in a min-heap, whose root only rises, and notes as a candidate
// every entry that scores at least the root when it is seen: every entry
// of the final top is one, usually a few hundred in thousands. A second
// pass keeps the best limit candidates in order among those at or above
// the final root, so that only ties at the root (common at scale, where
// translations share code blocks) are ordered by their keys.
func (a *accumulator) top(entries []*Entry, filter func(*Entry) bool, limit int) ([]Hit, int) {
	h, cand, touched, score := slices.Grow(a.heap[:0], limit), a.cand[:0], a.touched, a.score
	if filter != nil {
		kept := touched[:0] // in place: the list is the accumulator's
		for _, d := range touched {
			if filter(entries[d]) {
				kept = append(kept, d)
			} else {
				score[d] = 0
			}
		}
		touched = kept
	}
	total := len(touched)
	root := math.Inf(-1) // h[0] once h is full
	for _, d := range touched {
		s := score[d]
		score[d] = 0
		if s < root {
			continue
		}
		cand = append(cand, scored{d, s})
		if s > root {
			h, root = keep(h, s, limit)
		}
	}
	a.heap, a.cand = h, cand
	a.touched = a.touched[:0]
	floor := math.SmallestNonzeroFloat64
	if len(h) == limit {
		floor = h[0]
	}
	hits := make([]Hit, 0, limit)
	for _, c := range cand {
		if c.s < floor {
			continue
		}
		hit := Hit{Entry: entries[c.doc], Score: c.s}
		if len(hits) < limit {
			hits = append(hits, hit)
			if len(hits) == limit {
				sortDesc(hits)
			}
			continue
		}
		// hits is sorted descending; replace the worst if better.
		if !less(hits[limit-1], hit) {
			continue
		}
		i := sort.Search(limit, func(i int) bool { return less(hits[i], hit) })
		copy(hits[i+1:], hits[i:limit-1])
		hits[i] = hit
	}
	if len(hits) < limit {
		sortDesc(hits)
	}
	return hits, total
}

// scored is a candidate of top: an entry's ordinal and score.
type scored struct {
	doc uint32
	s   float64
}

// SortHits sorts hits best first, ties as Search breaks them: the hits of
// several indexes of one collection's shards merge into the order one
// index of the whole collection gives them.
func SortHits(hits []Hit) { sortDesc(hits) }

// sortDesc sorts hits best first.
func sortDesc(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case less(b, a):
			return -1
		case less(a, b):
			return 1
		}
		return 0
	})
}

// less orders hits ascending by score, then descending by key/ord so the
// earliest document wins a tie.
func less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	// Ties are common at scale (translations share code blocks): compare
	// the keys once, and not at all within one source.
	if sa, sb := a.Entry.Source, b.Entry.Source; sa != sb {
		if c := strings.Compare(sa.Key, sb.Key); c != 0 {
			return c > 0
		}
	}
	return a.Entry.Ord > b.Entry.Ord
}

// RepoShares returns, for each of repos, the share of the index's live
// entries that the repository holds, and how many repositories the index
// holds. It takes the read lock once.
func (ix *Index) RepoShares(repos []string) (shares []float64, n int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	shares = make([]float64, len(repos))
	if ix.collection() == 0 {
		return shares, len(ix.repoEntries)
	}
	for i, r := range repos {
		shares[i] = float64(ix.repoEntries[r]) / float64(ix.collection())
	}
	return shares, len(ix.repoEntries)
}
