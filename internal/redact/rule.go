package redact

import (
	"math"
	"regexp"
	"strings"
)

// Rule priorities break ties between overlapping matches of equal length.
const (
	prioGeneric  = 1 // keyword = value guesses: generic-secret, curl headers
	prioLoose    = 2 // shapes that other rules may name better: sk-..., bearer
	prioSpecific = 3 // a provider's own token format
	prioCustom   = 4 // configured by the operator
)

// rule is one compiled detector.
type rule struct {
	id   string // gitleaks rule id, or ours
	kind string // reported in findings and in the replacement text
	re   *regexp.Regexp
	src  string // re's source before anchoring
	// group is the capture group holding the secret; 0 means the first
	// non-empty group, or the whole match if the regexp has none (gitleaks'
	// semantics), unless whole is set.
	group   int
	entropy float64 // a secret must have more Shannon entropy than this
	// keywords are lower case; a rule runs only near one of them.
	keywords []string
	allow    []*allowlist
	// stripped is how many [\w.-] bytes the removed gitleaks prefix could
	// have matched; allowlists that target the match see them again.
	stripped int
	// lines is how many lines after a keyword's line a match may reach.
	lines int
	// whole lets a match reach anywhere after its keyword (custom patterns).
	whole bool
	// anchored rules try re once at each keyword occurrence instead of
	// searching the keyword's lines; re then starts with \A.
	anchored bool
	// wordStart requires a non-word byte before a keyword occurrence.
	wordStart bool
	// pre, if set, is a cheap test of a keyword occurrence at s[start:end];
	// the rule skips the occurrence if it fails.
	pre func(s string, start, end int) bool
	// check, if set, must accept the secret and the whole match.
	check func(secret, match string) bool
	prio  int
}

// allowlist is a gitleaks allowlist reduced to what applies without file
// paths or commits.
type allowlist struct {
	target    string // "" (the secret), "match" or "line"
	and       bool   // all of regexes and stopwords must agree
	regexes   []*regexp.Regexp
	stopwords []string // lower case
}

// window returns the input range the rule must scan for a keyword at pos:
// from pos itself for an anchored rule, otherwise from the start of its line.
func (r *rule) window(s string, pos int) window {
	start := pos
	if !r.anchored {
		if r.whole {
			return window{0, len(s)}
		}
		start = strings.LastIndexByte(s[:pos], '\n') + 1
	}
	if r.whole {
		return window{start, len(s)}
	}
	end := lineEnd(s, pos)
	for i := 0; i < r.lines && end < len(s); i++ {
		end = lineEnd(s, end+1)
	}
	return window{start, end}
}

// lineEnd returns the offset of the first newline at or after pos, or
// len(s).
func lineEnd(s string, pos int) int {
	if i := strings.IndexByte(s[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(s)
}

// find appends the rule's accepted matches inside w to cands.
func (r *rule) find(s string, w window, ri int, cands []candidate) []candidate {
	text := s[w.start:w.end]
	if r.anchored {
		if m := r.re.FindStringSubmatchIndex(text); m != nil {
			cands = r.accept(s, w.start, m, ri, cands)
		}
		return cands
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		cands = r.accept(s, w.start, m, ri, cands)
	}
	return cands
}

// accept appends the match m, relative to s[base:], to cands unless its
// secret fails the rule's entropy, allowlists or check.
func (r *rule) accept(s string, base int, m []int, ri int, cands []candidate) []candidate {
	ss, se, ok := r.secretSpan(m)
	if !ok || se <= ss {
		return cands
	}
	ss, se = base+ss, base+se
	ms, me := base+m[0], base+m[1]
	secret := s[ss:se]
	if r.entropy > 0 && entropy(secret) <= r.entropy {
		return cands
	}
	if r.allowed(s, ms, me, secret) {
		return cands
	}
	if r.check != nil && !r.check(secret, s[ms:me]) {
		return cands
	}
	return append(cands, candidate{start: ss, end: se, rule: ri})
}

// secretSpan picks the secret out of a submatch index slice.
func (r *rule) secretSpan(m []int) (start, end int, ok bool) {
	if r.group > 0 {
		if 2*r.group+1 >= len(m) || m[2*r.group] < 0 {
			return 0, 0, false
		}
		return m[2*r.group], m[2*r.group+1], true
	}
	if !r.whole {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 && m[g+1] > m[g] {
				return m[g], m[g+1], true
			}
		}
	}
	return m[0], m[1], true
}

// allowed reports whether one of the rule's allowlists accepts the match
// s[ms:me] with the given secret.
func (r *rule) allowed(s string, ms, me int, secret string) bool {
	if len(r.allow) == 0 {
		return false
	}
	lower := strings.ToLower(secret)
	for _, a := range r.allow {
		target := secret
		switch a.target {
		case "match":
			start := ms
			for n := 0; n < r.stripped && start > 0 && isIdentByte(s[start-1]); n++ {
				start--
			}
			target = s[start:me]
		case "line":
			target = s[strings.LastIndexByte(s[:ms], '\n')+1 : lineEnd(s, me)]
		}
		if a.allows(target, lower) {
			return true
		}
	}
	return false
}

// allows applies one allowlist to its target and the lower-cased secret.
func (a *allowlist) allows(target, lowerSecret string) bool {
	re := false
	for _, x := range a.regexes {
		if x.MatchString(target) {
			re = true
			break
		}
	}
	stop := false
	for _, w := range a.stopwords {
		if strings.Contains(lowerSecret, w) {
			stop = true
			break
		}
	}
	if a.and {
		return (len(a.regexes) == 0 || re) && (len(a.stopwords) == 0 || stop)
	}
	return re || stop
}

// entropy returns the Shannon entropy of s in bits per character, counted
// over runes as gitleaks does.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	n := 0
	for _, c := range s {
		n++
		if c < 128 {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	h := 0.0
	add := func(count int) {
		if count > 0 {
			p := float64(count) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	for _, c := range ascii {
		add(c)
	}
	for _, c := range other {
		add(c)
	}
	return h
}

// isIdentByte reports whether c is in the class [\w.-].
func isIdentByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '-'
}

// isWordByte reports whether c is in the class \w.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
