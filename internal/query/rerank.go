package query

import (
	"cmp"
	"slices"
	"strings"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/search"
)

// curlyQuotes turns typographic double quotes into plain ones.
var curlyQuotes = strings.NewReplacer("“", `"`, "”", `"`, "„", `"`)

// parseQuery splits a user query into its text and its quoted phrases.
// It never fails: an unbalanced quote is just a character, and curly
// quotes count as quotes.
func parseQuery(q string) (text string, phrases []string) {
	if strings.ContainsAny(q, "“”„") {
		q = curlyQuotes.Replace(q)
	}
	if strings.Count(q, `"`) < 2 {
		return strings.ReplaceAll(q, `"`, " "), nil
	}
	parts := strings.Split(q, `"`)
	for i, p := range parts {
		// Odd parts are inside quotes; a last odd part is unterminated.
		if i%2 == 1 && i < len(parts)-1 && strings.TrimSpace(p) != "" {
			phrases = append(phrases, p)
		}
	}
	return strings.ReplaceAll(q, `"`, " "), phrases
}

// phraseTerms analyses each phrase into one term per position (the first
// token there: identifier parts share their whole's position), with ""
// for a position a stop word leaves empty between two terms. Phrases of
// fewer than two terms constrain nothing beyond the ordinary match.
func phraseTerms(an *analysis.Analyzer, phrases []string) [][]string {
	var out [][]string
	for _, p := range phrases {
		var ts []string
		last, terms := -1, 0
		for _, t := range an.Analyze(p) {
			if t.Pos == last {
				continue
			}
			for gap := t.Pos - last - 1; gap > 0 && last >= 0; gap-- {
				ts = append(ts, "")
			}
			last = t.Pos
			ts = append(ts, t.Term)
			terms++
		}
		if terms >= 2 {
			out = append(out, ts)
		}
	}
	return out
}

// hasPhrase reports whether the analysed text holds the phrase's terms
// at consecutive positions (identifier parts sharing a position count too)
// and, for each "" in the phrase, a position left empty by a stop word.
// Tokens come in position order, so the tokens at each position are found
// through one table of where each position starts.
func hasPhrase(toks []analysis.Token, phrase []string) bool {
	if len(toks) == 0 || len(phrase) == 0 {
		return false
	}
	last := toks[len(toks)-1].Pos
	// The tokens at position p are toks[start[p]:start[p+1]]: start[p]
	// counts the tokens before p.
	start := make([]int32, last+2)
	for _, tok := range toks {
		start[tok.Pos+1]++
	}
	for p := 1; p < len(start); p++ {
		start[p] += start[p-1]
	}
	at := func(pos int, term string) bool {
		if pos > last {
			return false
		}
		held := toks[start[pos]:start[pos+1]]
		if term == "" {
			return len(held) == 0
		}
		for _, tok := range held {
			if tok.Term == term {
				return true
			}
		}
		return false
	}
	for _, tok := range toks {
		if tok.Term != phrase[0] {
			continue
		}
		pos, ok := tok.Pos, true
		for _, term := range phrase[1:] {
			switch {
			case term != "" && at(pos, term):
			case at(pos+1, term):
				pos++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// entryText is the text phrases and proximity are checked against.
func entryText(e *search.Entry) string {
	if len(e.HeadingPath) == 0 {
		return e.Text
	}
	return strings.Join(e.HeadingPath, " ") + "\n" + e.Text
}

// filterPhrases keeps the hits whose text holds every phrase, each within
// one paragraph. Byte probes for the phrase terms rule out most candidates
// and most paragraphs before analysis: only a paragraph with a probe of
// each of a phrase's terms is analysed.
func filterPhrases(an *analysis.Analyzer, hits []search.Hit, phrases [][]string) []search.Hit {
	if len(phrases) == 0 {
		return hits
	}
	need := map[string]bool{}
	for _, p := range phrases {
		for _, t := range p {
			if t != "" {
				need[t] = true
			}
		}
	}
	ps := newProbeSet(need)
	defer ps.release()
	probes := make([][]int, len(phrases))
	for i, p := range phrases {
		probes[i] = ps.probesOf(p)
	}
	out := hits[:0]
	for _, h := range hits {
		text := entryText(h.Entry)
		found := ps.scan(text)
		ok := true
		for i, p := range phrases {
			if !phraseIn(an, text, found, p, probes[i]) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, h)
		}
	}
	return out
}

// phraseIn reports whether a paragraph of text (paragraphs end at a blank
// line) holds the phrase. found are the probe hits in text, by position,
// and probes those of the phrase's terms, its first term's first. Only
// paragraphs with a hit of each probe are looked at, and in them only a
// window from each hit of the first term's probe (see phraseAt).
func phraseIn(an *analysis.Analyzer, text string, found []probeHit, phrase []string, probes []int) bool {
	for start := 0; start < len(text); {
		end := strings.Index(text[start:], "\n\n")
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		for len(found) > 0 && found[0].pos < start {
			found = found[1:]
		}
		in := found
		for i, f := range found {
			if f.pos >= end {
				in = found[:i]
				break
			}
		}
		if hasProbes(in, probes) {
			for _, f := range in {
				if f.term == probes[0] && phraseAt(an, text, start, end, f.pos, phrase) {
					return true
				}
			}
		}
		start = end + 2
	}
	return false
}

// phraseAt reports whether the phrase occurs in text[start:end] starting
// in the word around pos, or anywhere in the window analysed for it. The
// window runs from the white space before pos over a few more words; when
// its words after the first hold fewer positions than the phrase, the rest
// of the paragraph is analysed too. Analysis restarted at white space
// numbers the words as it does over the whole paragraph.
func phraseAt(an *analysis.Analyzer, text string, start, end, pos int, phrase []string) bool {
	ws := pos
	for ws > start && !isASCIISpace(text[ws-1]) {
		ws--
	}
	first := pos // end of the first word
	for first < end && !isASCIISpace(text[first]) {
		first++
	}
	we, words := first, 0
	for we < end && words < len(phrase)+2 {
		for we < end && isASCIISpace(text[we]) {
			we++
		}
		for we < end && !isASCIISpace(text[we]) {
			we++
		}
		words++
	}
	toks := an.Analyze(text[ws:we])
	if hasPhrase(toks, phrase) {
		return true
	}
	if we == end {
		return false
	}
	after, last := 0, -1 // positions of the window after its first word
	for _, t := range toks {
		if t.Start >= first-ws && t.Pos != last {
			after++
			last = t.Pos
		}
	}
	return after < len(phrase) && hasPhrase(an.Analyze(text[ws:end]), phrase)
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// probesOf returns the probes of the phrase's terms in their order, as
// indexes in ps.terms.
func (ps *probeSet) probesOf(phrase []string) []int {
	var out []int
	for _, t := range phrase {
		if j, ok := slices.BinarySearch(ps.terms, t); ok && t != "" {
			out = append(out, j)
		}
	}
	return out
}

// hasProbes reports whether hits hold every one of probes.
func hasProbes(hits []probeHit, probes []int) bool {
	for _, p := range probes {
		if !slices.ContainsFunc(hits, func(h probeHit) bool { return h.term == p }) {
			return false
		}
	}
	return true
}

// Proximity: among the best proximityDepth hits, those where the query's
// words stand close together gain up to proximityWeight of their score.
// On SciFact 0.1 is best (0.2 and 0.3 score lower).
const (
	proximityDepth  = 10
	proximityWeight = 0.1
	proximitySpan   = 200 // bytes at which the boost halves
)

// boostProximity rescores the head of hits (sorted) and re-sorts it.
func boostProximity(hits []search.Hit, ps *probeSet) {
	distinct := len(ps.terms)
	if distinct < 2 {
		return
	}
	n := min(len(hits), proximityDepth)
	for i := range hits[:n] {
		hs, _ := ps.entryScan(hits[i].Entry)
		span, matched := minSpan(hs)
		if matched < 2 {
			continue
		}
		cover := float64(matched) / float64(distinct)
		hits[i].Score *= 1 + proximityWeight*cover*proximitySpan/float64(proximitySpan+span)
	}
	head := hits[:n]
	slices.SortStableFunc(head, func(a, b search.Hit) int { return cmp.Compare(b.Score, a.Score) })
	// Keep the list descending across the boundary of the rescored head.
	if n < len(hits) && n > 0 {
		for i := n; i < len(hits) && hits[i].Score > head[n-1].Score; i++ {
			hits[i].Score = head[n-1].Score
		}
	}
}
