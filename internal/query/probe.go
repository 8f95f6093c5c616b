package query

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// Snippets and proximity must cost little per hit, so they locate query
// terms with byte probes instead of analysing whole sections: a probe is a
// term's first few bytes, searched in the ASCII-lower-cased text. Stems
// are prefixes of the words they come from ("configur" of "configuring"),
// so a probe finds the word; a false probe costs a little precision in a
// snippet window or a proximity span, never a wrong ranking decision,
// which BM25 already made.

// probeLen is how many leading bytes of a term make its probe.
const probeLen = 4

type probeHit struct {
	pos, end int // byte span of the probe in the text
	term     int // index of the term in probeSet.terms
}

type probeSet struct {
	terms  []string
	probes []string
	// seen caches scans by entry text within one query: proximity and
	// snippets look at the same top hits.
	seen map[string][]probeHit
	buf  []byte
	pb   [][]byte
}

// newProbeSet builds probes for a set of analysed terms, in a stable order.
func newProbeSet(terms map[string]bool) *probeSet {
	ps := &probeSet{}
	for t := range terms {
		ps.terms = append(ps.terms, t)
	}
	sort.Strings(ps.terms)
	for _, t := range ps.terms {
		p := t
		// CJK terms are bigrams: the whole term is the probe.
		if r, _ := utf8.DecodeRuneInString(t); r < 0x2E80 && len(p) > probeLen {
			p = p[:probeLen]
			for !utf8.ValidString(p) {
				p = p[:len(p)-1]
			}
		}
		ps.probes = append(ps.probes, p)
	}
	return ps
}

// scan returns every probe occurrence in text, ordered by position.
func (ps *probeSet) scan(text string) []probeHit {
	if hits, ok := ps.seen[text]; ok {
		return hits
	}
	hits := ps.scanText(text)
	if ps.seen == nil {
		ps.seen = map[string][]probeHit{}
	}
	ps.seen[text] = hits
	return hits
}

func (ps *probeSet) scanText(text string) []probeHit {
	// Lower-case into a buffer reused across the query's texts.
	ps.buf = append(ps.buf[:0], text...)
	for i, c := range ps.buf {
		if 'A' <= c && c <= 'Z' {
			ps.buf[i] = c + 'a' - 'A'
		}
	}
	lower := ps.buf
	if ps.pb == nil {
		for _, p := range ps.probes {
			ps.pb = append(ps.pb, []byte(p))
		}
	}
	var hits []probeHit
	for i, p := range ps.pb {
		if len(p) == 0 {
			continue
		}
		for from := 0; from < len(lower); {
			j := bytes.Index(lower[from:], p)
			if j < 0 {
				break
			}
			j += from
			hits = append(hits, probeHit{pos: j, end: j + len(p), term: i})
			from = j + len(p)
		}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].pos < hits[b].pos })
	return hits
}

// bestWindow returns the [from, to) range of hits, spanning at most
// maxBytes, that holds the most distinct terms (the earliest on ties).
func bestWindow(hits []probeHit, maxBytes int) (from, to, distinct int) {
	count := make([]int, termCount(hits))
	have, lo := 0, 0
	for hi := range hits {
		if count[hits[hi].term] == 0 {
			have++
		}
		count[hits[hi].term]++
		for hits[hi].end-hits[lo].pos > maxBytes {
			count[hits[lo].term]--
			if count[hits[lo].term] == 0 {
				have--
			}
			lo++
		}
		if have > distinct {
			from, to, distinct = lo, hi+1, have
		}
	}
	return from, to, distinct
}

// termCount is one more than the largest term index in hits.
func termCount(hits []probeHit) int {
	n := 0
	for _, h := range hits {
		n = max(n, h.term+1)
	}
	return n
}

// minSpan returns the smallest byte span covering every distinct term
// present in hits, and how many distinct terms that is.
func minSpan(hits []probeHit) (span, distinct int) {
	count := make([]int, termCount(hits))
	want := 0
	for _, h := range hits {
		if count[h.term] == 0 {
			want++
		}
		count[h.term] = 1
	}
	if want < 2 {
		return 0, want
	}
	clear(count)
	have, best, lo := 0, -1, 0
	for hi := range hits {
		if count[hits[hi].term] == 0 {
			have++
		}
		count[hits[hi].term]++
		for have == want {
			if s := hits[hi].end - hits[lo].pos; best < 0 || s < best {
				best = s
			}
			count[hits[lo].term]--
			if count[hits[lo].term] == 0 {
				have--
			}
			lo++
		}
	}
	return best, want
}
