package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/semantic"
)

// Semantic matching closes the vocabulary gap between a query and the
// words of what answers it ("horoscope" for an astrology tool) with the
// static word vectors of package semantic, two ways: query expansion with
// the nearest neighbours of a query word among the collection's terms, in
// the word's group and down-weighted, and a second retriever, the cosine
// of the query's pooled vector with each entry's (indexed with it), in the
// collection's space (semantic.Space: the directions all the entries
// share taken out), blended into the lexical score. For tools the blended
// ranking also picks the tool that feedback draws its terms from and the
// tools that smoothing compares with. Exact matches keep winning: a
// neighbour never weighs more than the word it stands for would, and when the query holds
// an anchor, a term the collection has but the table lacks (an identifier,
// a tool or product name), only entries that hold an anchor get the
// blended score. A query with CJK text is left alone: the vectors are
// English.
type Semantic struct {
	// Expand weighs a neighbour at this share of its query word's weight
	// times their cosine; 0 turns expansion off.
	Expand float64
	// ExpandTerms is the most neighbours a query word gets, each at least
	// ExpandMinSim from it. Only words in at most ExpandMaxDF entries are
	// expanded: 0 expands the words the collection lacks, the gap that
	// expansion closes; on MetaTool expanding every word scores lower.
	ExpandTerms  int
	ExpandMinSim float64
	ExpandMaxDF  int
	// Fuse, when positive, adds to every entry's score Fuse times the best
	// lexical score times the entry's cosine with the query. FuseAll
	// blends every entry, so that one no query word matches can enter
	// when its cosine is at least FuseMinSim; otherwise only the lexical
	// candidates are blended.
	Fuse       float64
	FuseAll    bool
	FuseMinSim float64
	// Common is the number of common directions taken out of the pooled
	// vectors before their cosines are blended (semantic.Space); tools
	// only, as docs have no blended retriever.
	Common int
}

// SemanticMode says which parts of semantic matching an engine uses.
type SemanticMode int

// The semantic modes: off, expansion only, the blended retriever only,
// both, and the default, what measurement chose for each collection: both
// for tools, where each part gains, and off for docs, where expansion
// changes nothing on the judged sets and SciFact. Docs have no blended
// retriever: blending sections' pooled vectors in cost nDCG on every
// English dev set and on SciFact (0.7009 to 0.6906), and pooling them cost
// a third of an index build, so sections carry no vector.
const (
	SemanticOff SemanticMode = iota
	SemanticExpand
	SemanticFuse
	SemanticBoth
	SemanticDefault
)

// ParseSemanticMode reads a mode by name: off, expand, fuse, both or
// default.
func ParseSemanticMode(s string) (SemanticMode, error) {
	for m, name := range []string{"off", "expand", "fuse", "both", "default"} {
		if s == name {
			return SemanticMode(m), nil
		}
	}
	return 0, fmt.Errorf("semantic mode %q: want off, expand, fuse, both or default", s)
}

// semState is what an engine keeps for semantic matching.
type semState struct {
	table *semantic.Table // nil: switched off
	mode  SemanticMode
	mu    sync.Mutex
	cands map[*search.Index]*semCands
}

// semCands is what semantic matching derives from one generation of an
// index: the vectors of its terms, for neighbour scans; its entries'
// vectors in their space (semantic.Space), for the blended retriever; and
// the neighbours found so far, since the words of a stream of queries
// repeat.
type semCands struct {
	gen   uint64
	m     *semantic.Matrix
	space *semantic.Space
	row   map[*search.Entry]int // entry → its row in space
	ents  []*search.Entry       // row → entry

	mu   sync.Mutex
	near map[nearKey][]semantic.Neighbour
}

// nearKey names one neighbour scan.
type nearKey struct {
	word string
	k    int
	min  float32
}

// maxNear bounds the neighbour scans a semCands remembers (a few MB at
// most); past it a random one is forgotten for each new one. MetaTool's
// 10,239 queries scan about 5,500 distinct words.
const maxNear = 16384

// neighbours returns up to k terms of the index nearest to word, at
// least minSim from it (semantic.Matrix.Neighbours), remembered.
func (c *semCands) neighbours(word string, k int, minSim float32) []semantic.Neighbour {
	key := nearKey{word, k, minSim}
	c.mu.Lock()
	nb, ok := c.near[key]
	c.mu.Unlock()
	if ok {
		return nb
	}
	nb = c.m.Neighbours(word, k, minSim)
	c.mu.Lock()
	if len(c.near) >= maxNear {
		for old := range c.near {
			delete(c.near, old)
			break
		}
	}
	c.near[key] = nb
	c.mu.Unlock()
	return nb
}

// SetSemantic switches semantic matching on (with the embedded table) or
// off for every request; a request may still switch it off for itself.
func (e *Engine) SetSemantic(on bool) {
	if on {
		e.SetSemanticMode(SemanticDefault)
	} else {
		e.SetSemanticMode(SemanticOff)
	}
}

// SetSemanticMode chooses the parts of semantic matching the engine uses,
// for measuring them apart.
func (e *Engine) SetSemanticMode(m SemanticMode) {
	e.sem.mu.Lock()
	defer e.sem.mu.Unlock()
	e.sem.mode = m
	e.sem.table = nil
	if m != SemanticOff {
		e.sem.table = semantic.Default()
	}
	e.sem.cands = map[*search.Index]*semCands{}
}

// semanticParts reports whether expansion and the blended retriever are on
// for tool search (tools) or docs search.
func (e *Engine) semanticParts(tools bool) (expand, fuse bool) {
	e.sem.mu.Lock()
	m := e.sem.mode
	e.sem.mu.Unlock()
	if m == SemanticDefault {
		m = SemanticOff
		if tools {
			m = SemanticBoth
		}
	}
	return m == SemanticExpand || m == SemanticBoth, m == SemanticFuse || m == SemanticBoth
}

// semanticTable returns the table when a request with the given switch
// and query gets semantic matching, or nil.
func (e *Engine) semanticTable(req *bool, q string) *semantic.Table {
	e.sem.mu.Lock()
	t := e.sem.table
	e.sem.mu.Unlock()
	if t == nil || (req != nil && !*req) || hasCJK(q) {
		return nil
	}
	return t
}

// hasCJK reports whether s holds Han, Hiragana, Katakana or Hangul.
func hasCJK(s string) bool {
	for _, r := range s {
		if isCJKRune(r) {
			return true
		}
	}
	return false
}

// isCJKRune reports whether r is Han, Hiragana, Katakana or Hangul.
func isCJKRune(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// candidates returns what semantic matching derives from ix, cached until
// ix changes.
func (e *Engine) candidates(t *semantic.Table, ix *search.Index) *semCands {
	gen := ix.Generation()
	e.sem.mu.Lock()
	c := e.sem.cands[ix]
	e.sem.mu.Unlock()
	if c != nil && c.gen == gen {
		return c
	}
	var ids []int
	ix.EachTerm(func(term string, df int) {
		if i := t.Index(term); i >= 0 {
			ids = append(ids, i)
		}
	})
	sort.Ints(ids)
	// Only tools carry vectors for the blended retriever: sections have
	// none, and a docs index's space would be empty.
	var vecs [][]byte
	var ents []*search.Entry
	row := map[*search.Entry]int{}
	if ix == e.tools {
		ix.EachEntry(func(en *search.Entry) bool {
			ents = append(ents, en)
			return true
		})
		// In key order, not the index's map order: the space sums the
		// vectors in float32, and one catalog must score alike however
		// it was loaded (put by put, or from a segment).
		slices.SortFunc(ents, func(a, b *search.Entry) int {
			return cmp.Or(strings.Compare(a.Source.Key, b.Source.Key), cmp.Compare(a.Ord, b.Ord))
		})
		for _, en := range ents {
			row[en] = len(vecs)
			vecs = append(vecs, en.Vec)
		}
	}
	c = &semCands{gen: gen, m: t.Matrix(ids), space: semantic.NewSpace(t.Dim(), vecs, e.scoring.ToolsSemantic.Common),
		row: row, ents: ents, near: map[nearKey][]semantic.Neighbour{}}
	e.sem.mu.Lock()
	if e.sem.cands == nil {
		e.sem.cands = map[*search.Index]*semCands{}
	}
	e.sem.cands[ix] = c
	e.sem.mu.Unlock()
	return c
}

// expand returns the neighbours of the query word w among ix's terms as
// terms of group, each weighing weight × Expand × cosine, and, where ix
// has w, no more than w itself would: idf(w)^p / idf(neighbour)^p caps it.
func (e *Engine) expand(t *semantic.Table, ix *search.Index, sc Semantic, idfPower float64, w string, weight float64, group int) []search.Term {
	if on, _ := e.semanticParts(ix == e.tools); !on || sc.Expand <= 0 || sc.ExpandTerms <= 0 {
		return nil
	}
	if ix.DF(w) > sc.ExpandMaxDF {
		return nil
	}
	nb := e.candidates(t, ix).neighbours(w, sc.ExpandTerms, float32(sc.ExpandMinSim))
	if len(nb) == 0 {
		return nil
	}
	n := float64(max(ix.Stats().Chunks, 1))
	if idfPower <= 0 {
		idfPower = 1
	}
	idf := func(df int) float64 { return math.Pow(math.Log(1+(n-float64(df)+0.5)/(float64(df)+0.5)), idfPower) }
	own := ix.DF(w)
	out := make([]search.Term, 0, len(nb))
	for _, x := range nb {
		wt := weight * sc.Expand * float64(x.Sim)
		if own > 0 {
			wt *= min(1, idf(own)/idf(max(ix.DF(x.Term), 1)))
		}
		out = append(out, search.Term{Text: x.Term, Weight: wt, Group: group})
	}
	return out
}

// queryVector pools the query words at their weights; nil when the table
// has none of them.
func queryVector(t *semantic.Table, words []string, weights []float64) []float32 {
	p := t.NewPool()
	for i, w := range words {
		p.Add(w, float32(weights[i]))
	}
	return p.Unit()
}

// anchors returns the query words that ix has and the table lacks.
func anchors(t *semantic.Table, ix *search.Index, words []string) []search.Term {
	var out []search.Term
	for i, w := range words {
		if t.Index(w) < 0 && ix.DF(w) > 0 {
			out = append(out, search.Term{Text: w, Weight: 1, Group: i})
		}
	}
	return out
}

// A blender blends the cosines of one tool query's vector with the
// tools into lexical hits (see Semantic.Fuse). The cosines are computed
// once, so that blending both passes of a search costs one scan.
type blender struct {
	ix     *search.Index
	c      *semCands
	sc     Semantic
	filter func(*search.Entry) bool
	q      *semantic.Query
	cos    []float32 // by row of c.space; 0 for a tool without an anchor
}

// toolBlender returns the blender of a tool query's words, or nil when the
// blended retriever is off or the table has none of the words.
func (e *Engine) toolBlender(t *semantic.Table, words []toolWord, filter func(*search.Entry) bool) *blender {
	sc := e.scoring.ToolsSemantic
	if _, on := e.semanticParts(true); !on || sc.Fuse <= 0 {
		return nil
	}
	terms := make([]string, len(words))
	weights := make([]float64, len(words))
	for i, w := range words {
		terms[i], weights[i] = w.term, w.weight
	}
	c := e.candidates(t, e.tools)
	q := c.space.Query(queryVector(t, terms, weights))
	if q == nil {
		return nil
	}
	b := &blender{ix: e.tools, c: c, sc: sc, filter: filter, q: q, cos: c.space.Cosines(q, nil)}
	if anchor := anchors(t, e.tools, terms); len(anchor) > 0 {
		// Only the tools that hold an anchor keep their cosine.
		ah, _ := e.tools.Search(search.Query{Terms: anchor, Filter: filter, Limit: c.space.Len() + 1})
		kept := make([]float32, len(b.cos))
		for _, h := range ah {
			if r, ok := c.row[h.Entry]; ok {
				kept[r] = b.cos[r]
			}
		}
		b.cos = kept
	}
	return b
}

// fuse returns hits with Fuse × their best score × max(cosine, 0) added to
// each, in no particular order; hits is left as it was. With FuseAll a
// tool that no query word matched enters on its cosine alone when its
// cosine as pooled (before the common directions are taken out, so that
// the bar means the same in a catalog of any size) is at least
// FuseMinSim, from the rows of the blender's generation: none when the
// index has changed since.
func (b *blender) fuse(hits []search.Hit) []search.Hit {
	maxBM := 0.0
	for _, h := range hits {
		maxBM = max(maxBM, h.Score)
	}
	if maxBM == 0 {
		maxBM = 1
	}
	w := b.sc.Fuse * maxBM
	inHits := make([]bool, len(b.cos))
	out := make([]search.Hit, len(hits), len(hits)+8)
	for i, h := range hits {
		out[i] = h
		if r, ok := b.c.row[h.Entry]; ok {
			inHits[r] = true
			out[i].Score += w * float64(max(b.cos[r], 0))
		}
	}
	if b.sc.FuseAll && b.ix.Generation() == b.c.gen {
		for r, x := range b.cos {
			if !inHits[r] && x > 0 && float64(b.c.space.RawCosine(r, b.q, x)) >= b.sc.FuseMinSim && (b.filter == nil || b.filter(b.c.ents[r])) {
				out = append(out, search.Hit{Entry: b.c.ents[r], Score: w * float64(x)})
			}
		}
	}
	return out
}

// standing returns how far each hit's cosine with the query stands out
// from the cosines of the catalog's tools that pass the filter: its
// distance above their median in robust standard deviations (1.4826 times
// the median absolute deviation), so that a topic a third of the catalog
// shares still stands out, and that distance itself (gap). The cosines are
// judged both in the catalog's space and as pooled, since a topic that
// common is among the directions the space takes out, and the larger of
// each counts. A tool without a cosine (no vector, or no anchor of a
// query that names one; see toolBlender) is left out and gets 0, as does a
// hit of another generation. When fewer than minStanding tools with a
// cosine pass the filter, the one nearest the query stands out infinitely
// if its cosine is at least FuseMinSim, and the others not at all.
func (b *blender) standing(hits []search.Hit) (z, gap []float64) {
	var space, raw []float64
	for r, x := range b.cos {
		if x != 0 && (b.filter == nil || b.filter(b.c.ents[r])) {
			space = append(space, float64(x))
			raw = append(raw, float64(b.c.space.RawCosine(r, b.q, x)))
		}
	}
	z, gap = make([]float64, len(hits)), make([]float64, len(hits))
	if len(space) < minStanding {
		// Too few to stand out from: the nearest tool stands out when
		// it is near enough to enter the blend on its own (FuseMinSim).
		near, at := b.sc.FuseMinSim, -1
		for r, x := range b.cos {
			if raw := float64(b.c.space.RawCosine(r, b.q, x)); x != 0 && raw >= near && (b.filter == nil || b.filter(b.c.ents[r])) {
				near, at = raw, r
			}
		}
		for i, h := range hits {
			if r, ok := b.c.row[h.Entry]; ok && r == at {
				z[i], gap[i] = math.Inf(1), math.Inf(1)
			}
		}
		return z, gap
	}
	ms, ss := robust(space)
	mr, sr := robust(raw)
	for i, h := range hits {
		r, ok := b.c.row[h.Entry]
		if !ok || b.cos[r] == 0 {
			continue
		}
		gs := float64(b.cos[r]) - ms
		gr := float64(b.c.space.RawCosine(r, b.q, b.cos[r])) - mr
		gap[i] = max(gs, gr)
		z[i] = math.Inf(-1)
		if ss > 0 {
			z[i] = gs / ss
		}
		if sr > 0 {
			z[i] = max(z[i], gr/sr)
		}
		if math.IsInf(z[i], -1) {
			z[i] = 0
		}
	}
	return z, gap
}

// minStanding is the fewest tools a cosine can stand out from: in fewer,
// their median and its deviation say little.
const minStanding = 5

// robust returns the median of xs and 1.4826 times their median absolute
// deviation, a standard deviation that a cluster of outliers does not
// inflate; xs is reordered, and then overwritten.
func robust(xs []float64) (median, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	median = middle(xs)
	for i, x := range xs {
		xs[i] = math.Abs(x - median)
	}
	return median, 1.4826 * middle(xs)
}

// middle returns the median of xs, reordering them: a selection in
// linear time, as a catalog's cosines are recounted for every query.
func middle(xs []float64) float64 {
	n := len(xs)
	m := nth(xs, n/2)
	if n%2 == 1 {
		return m
	}
	// The element below the middle is the largest of those before it.
	return (slices.Max(xs[:n/2]) + m) / 2
}

// nth reorders xs so that xs[k] is the element that sorting would put
// there, everything before it no greater and everything after it no
// smaller (Hoare's selection), and returns it.
func nth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// The median of three keeps sorted runs linear.
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// sortHits orders hits best first.
func sortHits(hits []search.Hit) {
	slices.SortStableFunc(hits, func(x, y search.Hit) int { return cmp.Compare(y.Score, x.Score) })
}

// bestHits moves the k best of hits to its front, best first, and returns
// them: k passes, for the one or two tools feedback reads.
func bestHits(hits []search.Hit, k int) []search.Hit {
	k = min(k, len(hits))
	for i := range k {
		b := i
		for j := i + 1; j < len(hits); j++ {
			if hits[j].Score > hits[b].Score {
				b = j
			}
		}
		hits[i], hits[b] = hits[b], hits[i]
	}
	return hits[:k]
}

// expandDocs adds to a docs query's terms the neighbours of its words.
func (e *Engine) expandDocs(t *semantic.Table, terms []search.Term) []search.Term {
	sc := e.scoring.DocsSemantic
	out := terms
	for _, x := range terms {
		if x.Weight == 1 { // a query word, not a typo expansion
			out = append(out, e.expand(t, e.docs, sc, 1, x.Text, 1, x.Group)...)
		}
	}
	return out
}
