package redact

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// maxPrefixes bounds the literal prefixes enumerated for one regexp.
const maxPrefixes = 256

// anchoring is how a rule's regexp may be run at its keyword occurrences.
type anchoring struct {
	src string // the regexp anchored with \A
	// wordStart is set when the regexp starts with \b: the byte before a
	// keyword occurrence must not be a word character. (Inside the window,
	// which starts at the occurrence, \b always holds: the literal prefixes
	// all start with a word character.)
	wordStart bool
	lead      int // length of the longest literal prefix
	// ident is set when the literal prefixes hold only [\w.-] and spaces.
	ident bool
}

// anchor decides whether every match of re (parsed from src) must begin
// where one of the keywords occurs. Then the regexp need not search a line:
// it can be tried once at each keyword occurrence, which is what makes the
// rules fast. That holds when every literal prefix a match can start with
// begins with a keyword; anything the analysis does not understand makes it
// say no.
func anchor(src string, re *syntax.Regexp, keywords []string) (anchoring, bool) {
	if len(keywords) == 0 {
		return anchoring{}, false
	}
	var a anchoring
	if re.Op == syntax.OpConcat && len(re.Sub) > 1 && re.Sub[0].Op == syntax.OpWordBoundary {
		a.wordStart = true
		rest := *re
		rest.Sub = re.Sub[1:]
		re = &rest
	}
	set, _ := prefixes(re)
	if len(set) == 0 || len(set) > maxPrefixes {
		return anchoring{}, false
	}
	a.ident = true
	for _, p := range set {
		if p == "" || a.wordStart && !isWordByte(p[0]) || !startsWithAny(p, keywords) {
			return anchoring{}, false
		}
		a.lead = max(a.lead, len(p))
		for i := 0; i < len(p); i++ {
			a.ident = a.ident && (isIdentByte(p[i]) || p[i] == ' ')
		}
	}
	a.src = `\A(?:` + src + `)`
	return a, true
}

// startsWithAny reports whether p starts with one of the words.
func startsWithAny(p string, words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(p, w) {
			return true
		}
	}
	return false
}

// prefixes returns lower-cased literal strings such that every match of re
// starts with one of them. complete reports that each match is exactly one
// of them, so that what follows re may extend them.
func prefixes(re *syntax.Regexp) (set []string, complete bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}, true
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpCharClass:
		if c, ok := oneLetter(re.Rune); ok {
			return []string{string(c)}, true
		}
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpQuest:
		set, complete = prefixes(re.Sub[0])
		return append(set, ""), complete
	case syntax.OpPlus:
		set, _ = prefixes(re.Sub[0])
		return set, false
	case syntax.OpAlternate:
		complete = true
		for _, s := range re.Sub {
			sub, c := prefixes(s)
			set = append(set, sub...)
			complete = complete && c
			if len(set) > maxPrefixes {
				return set, false
			}
		}
		return set, complete
	case syntax.OpConcat:
		set = []string{""}
		for _, s := range re.Sub {
			sub, c := prefixes(s)
			if len(set)*len(sub) > maxPrefixes {
				return set, false
			}
			next := make([]string, 0, len(set)*len(sub))
			for _, a := range set {
				for _, b := range sub {
					next = append(next, a+b)
				}
			}
			set = next
			if !c {
				return set, false
			}
		}
		return set, true
	}
	return []string{""}, false
}

// oneLetter reports whether a character class holds a single ASCII byte up
// to case, and returns it in lower case.
func oneLetter(ranges []rune) (byte, bool) {
	var c rune = -1
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			l := unicode.ToLower(r)
			if l >= 0x80 || c >= 0 && l != c {
				return 0, false
			}
			c = l
			if ranges[i+1]-ranges[i] > 2 {
				return 0, false
			}
		}
	}
	return byte(c), c >= 0
}

// assignOps is the assignment operator group of gitleaks' generated
// "name = value" rules.
const assignOps = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// compile sets r.re from src, anchored at the rule's keywords when that is
// sound. For an anchored gitleaks "name = value" rule (template) whose names
// are made of [\w.-], a keyword occurrence is only tried when an assignment
// operator follows it closely: the rest of the name, at most 20 more name
// bytes and 3 spaces or quotes may stand between them.
func (r *rule) compile(src string, template bool) error {
	r.src = src
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return fmt.Errorf("parse regex: %w", err)
	}
	if a, ok := anchor(src, tree, r.keywords); ok {
		if re, err := regexp.Compile(a.src); err == nil {
			r.re, r.anchored, r.wordStart = re, true, a.wordStart
			if template && a.ident && r.pre == nil {
				r.pre = assignmentWithin(a.lead+24, valueMin(tree, r.group))
			}
			return nil
		}
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return fmt.Errorf("compile regex: %w", err)
	}
	r.re = re
	return nil
}

// stopBytes end the value of a "name = value" rule.
const stopBytes = " \t\r\n\f\"'`"

// valueMin returns how many bytes at least the secret of a gitleaks
// "name = value" rule takes, if the secret can hold none of stopBytes, or 0.
// The secret is capture group 1 unless group says otherwise.
func valueMin(re *syntax.Regexp, group int) int {
	if group == 0 {
		group = 1
	}
	c := findCapture(re, group)
	if c == nil || mayMatchAny(c, stopBytes) {
		return 0
	}
	return minRunes(c)
}

// findCapture returns the capture group numbered n in re, or nil.
func findCapture(re *syntax.Regexp, n int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && re.Cap == n {
		return re
	}
	for _, s := range re.Sub {
		if c := findCapture(s, n); c != nil {
			return c
		}
	}
	return nil
}

// mayMatchAny reports whether re might match a rune of chars.
func mayMatchAny(re *syntax.Regexp, chars string) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if strings.ContainsRune(chars, r) {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, c := range chars {
				if re.Rune[i] <= c && c <= re.Rune[i+1] {
					return true
				}
			}
		}
		return false
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, s := range re.Sub {
		if mayMatchAny(s, chars) {
			return true
		}
	}
	return false
}

// minRunes returns the fewest runes a match of re holds.
func minRunes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minRunes(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minRunes(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minRunes(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := minRunes(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // star, quest, empty and zero-width operators
}

// assignmentWithin returns a keyword test for gitleaks' "name = value"
// rules: an assignment operator must follow the keyword within limit bytes
// of name characters, spaces and quotes, and within the few operator,
// quote and space bytes after it a run of at least value bytes that are
// not stopBytes must start.
func assignmentWithin(limit, value int) func(s string, start, end int) bool {
	return func(s string, _, end int) bool {
		stop := min(len(s), end+limit)
		for i := end; i < stop; i++ {
			switch c := s[i]; {
			case c == '=' || c == '>' || c == ':' || c == '|' || c == '?' || c == ',':
				return valueAfter(s, i+1, value)
			case isIdentByte(c) || c == ' ' || c == '\t' || c == '\'' || c == '"' ||
				c == '\r' || c == '\f' || c == '\v':
			default:
				return false
			}
		}
		return false
	}
}

// valueAfter reports whether a run of at least n bytes that are not
// stopBytes starts within 9 bytes after s[:i]: up to 3 more operator bytes
// and 5 quotes, spaces or '=' may precede a value.
func valueAfter(s string, i, n int) bool {
	start := i // of the current run
	for j := i; j < len(s); j++ {
		if strings.IndexByte(stopBytes, s[j]) >= 0 {
			if start = j + 1; start > i+9 {
				return false
			}
			continue
		}
		if j+1-start >= n {
			return true
		}
	}
	return false
}
