package highlight

import (
	"slices"
	"strings"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/search"
)

// PhraseTerms analyses each phrase into one term per position (the first
// token there: identifier parts share their whole's position), with ""
// for a position a stop word leaves empty between two terms. Phrases of
// fewer than two terms constrain nothing beyond the ordinary match.
func PhraseTerms(an *analysis.Analyzer, phrases []string) [][]string {
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

// Phrases checks entries for quoted phrases, each within one paragraph.
// Byte probes for the phrase terms rule out most entries and most
// paragraphs before analysis: only a paragraph with a probe of each of a
// phrase's terms is analysed. It is not safe for concurrent use; Release
// gives it back.
type Phrases struct {
	an      *analysis.Analyzer
	m       *Matcher
	phrases [][]string
	probes  [][]int
}

// NewPhrases prepares the check of phrases, as PhraseTerms returns them.
func NewPhrases(an *analysis.Analyzer, phrases [][]string) *Phrases {
	need := map[string]bool{}
	for _, p := range phrases {
		for _, t := range p {
			if t != "" {
				need[t] = true
			}
		}
	}
	ps := &Phrases{an: an, m: New(need), phrases: phrases, probes: make([][]int, len(phrases))}
	for i, p := range phrases {
		ps.probes[i] = ps.m.probesOf(p)
	}
	return ps
}

// In reports whether the entry's heading path and text hold every phrase.
func (p *Phrases) In(e *search.Entry) bool {
	text := entryText(e)
	found := p.m.scan(text)
	for i, ph := range p.phrases {
		if !phraseIn(p.an, text, found, ph, p.probes[i]) {
			return false
		}
	}
	return true
}

// Release gives the probes back; p may not be used again.
func (p *Phrases) Release() { p.m.Release() }

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
func (ps *Matcher) probesOf(phrase []string) []int {
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
