package search

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Expansion is a vocabulary term close to a query term.
type Expansion struct {
	Term  string
	Edits int
	DF    int
}

// Fuzzy returns up to limit vocabulary terms within maxEdits edits
// (insertions, deletions, substitutions and adjacent transpositions) of
// term, sharing its first rune, most frequent first. The term itself is not
// returned.
func (ix *Index) Fuzzy(term string, maxEdits, limit int) []Expansion {
	if term == "" {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	first, _ := utf8.DecodeRuneInString(term)
	qr := []rune(term)
	var out []Expansion
	var buf distBuf
	seen := map[string]bool{}
	for l := len(term) - 2*maxEdits; l <= len(term)+2*maxEdits; l++ {
		if l <= 0 {
			continue
		}
		for cand := range ix.vocabOf(vocabKey{first: term[0], n: l}) {
			if r, _ := utf8.DecodeRuneInString(cand); r != first || cand == term {
				continue
			}
			d := buf.distance(qr, cand, maxEdits)
			if d > maxEdits || seen[cand] {
				continue
			}
			if pl := ix.list(cand); pl != nil && pl.n() > 0 {
				seen[cand] = true
				out = append(out, Expansion{Term: cand, Edits: d, DF: pl.n()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Edits != out[j].Edits {
			return out[i].Edits < out[j].Edits
		}
		if out[i].DF != out[j].DF {
			return out[i].DF > out[j].DF
		}
		return out[i].Term < out[j].Term
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// DF returns the number of live entries holding term.
func (ix *Index) DF(term string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if pl := ix.list(term); pl != nil {
		return pl.n()
	}
	return 0
}

type distBuf struct {
	b          []rune
	prev2, row []int
	prev       []int
}

// distance is the optimal string alignment distance between a and b,
// or max+1 as soon as it must exceed max.
func (d *distBuf) distance(a []rune, bs string, max int) int {
	d.b = d.b[:0]
	for _, r := range bs {
		d.b = append(d.b, r)
	}
	b := d.b
	if abs(len(a)-len(b)) > max {
		return max + 1
	}
	n := len(b) + 1
	if cap(d.row) < n {
		d.prev2, d.prev, d.row = make([]int, n), make([]int, n), make([]int, n)
	}
	prev2, prev, row := d.prev2[:n], d.prev[:n], d.row[:n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		row[0] = i
		best := row[0]
		for j := 1; j < n; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, row[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			row[j] = v
			best = min(best, v)
		}
		if best > max {
			return max + 1
		}
		prev2, prev, row = prev, row, prev2
	}
	return prev[n-1]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Related returns up to limit vocabulary terms of term's word family,
// most frequent first: terms that start with the same minRelatedPrefix
// runes, where the shorter of the two is, but for at most its last rune,
// a prefix of the other, and that are at most maxRelatedExtra bytes longer
// than term. They pair forms the stemmer leaves apart: extensions (tour,
// tourism), clipped forms (repositori, repo), derivations (rental, rent)
// and siblings (financi, financ).
func (ix *Index) Related(term string, limit int) []Expansion {
	head := runePrefix(term, minRelatedPrefix)
	if head == "" {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []Expansion
	for l := len(head); l <= len(term)+maxRelatedExtra; l++ {
		for cand := range ix.vocabOf(vocabKey{first: term[0], n: l}) {
			if cand == term || !strings.HasPrefix(cand, head) || !sameFamily(term, cand) {
				continue
			}
			pl := ix.list(cand)
			if pl == nil || pl.n() == 0 || slices.ContainsFunc(out, func(x Expansion) bool { return x.Term == cand }) {
				continue // removed, or listed twice in vocab after churn
			}
			out = append(out, Expansion{Term: cand, DF: pl.n()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DF != out[j].DF {
			return out[i].DF > out[j].DF
		}
		return out[i].Term < out[j].Term
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Word families: a shared head of minRelatedPrefix runes, and a related
// term at most maxRelatedExtra bytes longer than the query term.
const (
	minRelatedPrefix = 4
	maxRelatedExtra  = 5
)

// runePrefix returns the first n runes of s, or "" when s is shorter.
func runePrefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	if n == 0 {
		return s
	}
	return ""
}

// sameFamily reports whether the shorter of a and b differs from their
// common prefix by at most its last rune.
func sameFamily(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for n < len(a) && a[n] == b[n] {
		n++
	}
	for n < len(a) && !utf8.RuneStart(a[n]) {
		n-- // back to the start of the rune where they differ
	}
	return utf8.RuneCountInString(a[n:]) <= 1
}
