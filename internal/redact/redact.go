// Package redact removes secrets from text before it is chunked and indexed.
// It is pure: no I/O, no NATS.
//
// # Rules
//
// The default rules are gitleaks' maintained rule set: the TOML configuration
// embedded in github.com/zricethezav/gitleaks/v8/config (config.DefaultConfig)
// is parsed with go-toml and compiled once per New. Every gitleaks rule that
// needs no file path is used, with its keywords, entropy threshold and
// allowlists (stopwords included). Its regexps are Go standard library
// syntax; gitleaks only switches to go-re2 (WebAssembly) under a build tag
// this module never sets. gitleaks' importable rule constructors
// (cmd/generate/config/rules) are not used: they import a test-data
// generator whose module is not in go.sum.
//
// Kinds are gitleaks rule ids, except that common providers are renamed:
// openai-api-key, anthropic-api-key, github-pat (classic and fine-grained),
// slack-token, slack-webhook, aws-access-key, gcp-api-key, stripe-key, jwt,
// private-key and generic-secret (gitleaks' generic-api-key). GitHub's other
// tokens keep gitleaks' ids: github-oauth, github-app-token and
// github-refresh-token.
//
// gitleaks' rules want a quote, a space or ';' after a secret; here a
// secret may also be followed by ',', ')', ']', '}', '<', '>', '&', '|'
// or a '.' that ends a sentence (see secretEnd), as in prose, lists and
// URLs.
//
// Our own rules fill what gitleaks lacks or keeps narrow: bearer-token
// ("Authorization: Bearer x", "bearer x"), url-password (scheme://user:pass@host,
// where only the password is redacted), aws-secret-key (assignments and
// "the AWS secret key is x"), openrouter-api-key, quoted passwords with
// symbols, unquoted ones ("password: x", "the db password is x", judged
// as prose detection judges a value) (both generic-secret), and
// looser shapes of OpenAI, Anthropic, Google, Stripe and JWT secrets: gitleaks
// wants exact lengths, or a quote, space or ';' after the secret, so it
// misses "sk-ant-oat01-..." tokens and "?key=AIza...&" in URLs.
//
// Every match must pass the rule's entropy threshold and allowlists and then
// a placeholder check ("sk-...", "xxxx", "<your-key>", "${TOKEN}",
// "your-token-here", "123456789012"), so that pages about secrets come out
// unchanged. Matches of several rules that overlap are merged.
//
// # Speed
//
// One pass over the input finds every occurrence of every rule's keywords,
// ASCII case-insensitively, through a bitset of hashed three-byte prefixes.
// A rule's regexp then runs only where its keywords are:
//
//   - For most rules, every possible match provably begins with one of the
//     rule's keywords (see anchor). Such a rule runs once, anchored, at each
//     occurrence: ordinary prose that mentions "api key" costs one failed
//     attempt instead of a regexp search of the line.
//   - The others search the lines holding a keyword (a few more for rules
//     that span lines, such as PEM blocks), never the whole input.
//   - gitleaks' "[\w.-]{0,50}?" prefix in front of its "name = value" rules
//     is removed before compiling: it moves the start of a match but never
//     the secret, and it makes Go's engine carry fifty threads per byte.
//   - An anchored "name = value" rule skips an occurrence of its name that no
//     assignment operator follows closely.
//
// A few gitleaks rules get other keywords than gitleaks gives them, because
// theirs are shorter than three bytes or occur on most lines ("ey" for jwt,
// "s." for vault-service-token, "sk" for twilio-api-key, "q~" for
// azure-ad-client-secret); see gitleaksKeywords.
package redact

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Pattern is a custom rule from configuration; added to the defaults, never
// replacing them. Name is the finding kind. If Regex has a capturing group
// named "secret" only that group is redacted, otherwise the whole match is.
// Keywords, when given, are a prefilter: the regexp runs only over inputs
// that contain one of them (compared ASCII case-insensitively).
type Pattern struct {
	Name     string   `json:"name"`
	Regex    string   `json:"regex"`
	Keywords []string `json:"keywords,omitempty"`
}

// Finding is one redacted span: Start and End are byte offsets in the input
// given to Redact, and Kind names the rule that matched.
type Finding struct {
	Kind       string
	Start, End int
}

// Redactor replaces secrets in text. It is immutable after New and safe for
// concurrent use.
type Redactor struct {
	rules []*rule
	kw    *keywordIndex
	// always holds the rules without keywords; they run over every input.
	always []int
	kinds  []string
	pool   sync.Pool // *scratch
}

// scratch is the per-call working memory of Redact.
type scratch struct {
	wins  [][]window // per rule, in input order
	used  []int      // rules with at least one window
	cands []candidate
}

// window is a byte range of the input that one rule's regexp runs over.
type window struct{ start, end int }

// candidate is a finding before overlapping ones are merged.
type candidate struct {
	start, end int
	rule       int
}

// New compiles the default rules and the custom patterns. An invalid custom
// pattern is an error that names it.
func New(custom []Pattern) (*Redactor, error) {
	rules, err := defaultRules()
	if err != nil {
		return nil, fmt.Errorf("load default rules: %w", err)
	}
	for i, p := range custom {
		r, err := customRule(p)
		if err != nil {
			return nil, fmt.Errorf("custom pattern %d %q: %w", i, p.Name, err)
		}
		rules = append(rules, r)
	}
	r := &Redactor{rules: rules}
	var kws [][]string
	seen := map[string]bool{}
	for i, ru := range rules {
		kws = append(kws, ru.keywords)
		if len(ru.keywords) == 0 {
			r.always = append(r.always, i)
		}
		if !seen[ru.kind] {
			seen[ru.kind] = true
			r.kinds = append(r.kinds, ru.kind)
		}
	}
	sort.Strings(r.kinds)
	r.kw = newKeywordIndex(kws)
	n := len(rules)
	r.pool.New = func() any { return &scratch{wins: make([][]window, n)} }
	return r, nil
}

// Kinds returns the sorted, distinct kinds that the redactor can report.
func (r *Redactor) Kinds() []string { return slices.Clone(r.kinds) }

// String returns s with every secret replaced, without the findings.
func (r *Redactor) String(s string) string {
	out, _ := r.Redact(s)
	return out
}

// Redact returns s with every secret replaced by "[REDACTED:<kind>]" and the
// replaced spans, in input order and not overlapping. Spans found by several
// rules that overlap are merged into one, named after the longest match. The
// output is valid UTF-8 whenever s is.
func (r *Redactor) Redact(s string) (string, []Finding) {
	if s == "" {
		return s, nil
	}
	sc := r.pool.Get().(*scratch)
	defer r.put(sc)

	r.windows(s, sc)
	for _, ri := range sc.used {
		ru := r.rules[ri]
		for _, w := range sc.wins[ri] {
			sc.cands = ru.find(s, w, ri, sc.cands)
		}
	}
	if len(sc.cands) == 0 {
		return s, nil
	}
	found := r.merge(sc.cands)
	var b strings.Builder
	b.Grow(len(s) + 16*len(found))
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.Start])
		b.WriteString("[REDACTED:")
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String(), found
}

// put resets sc and returns it to the pool.
func (r *Redactor) put(sc *scratch) {
	for _, ri := range sc.used {
		sc.wins[ri] = sc.wins[ri][:0]
	}
	sc.used = sc.used[:0]
	sc.cands = sc.cands[:0]
	r.pool.Put(sc)
}

// windows fills sc with the ranges each rule must be run over: the lines
// holding one of its keywords, widened for rules that span lines.
func (r *Redactor) windows(s string, sc *scratch) {
	add := func(ri int, w window) {
		ws := sc.wins[ri]
		if len(ws) == 0 {
			sc.used = append(sc.used, ri)
		} else if last := &ws[len(ws)-1]; w.start <= last.end {
			last.end = max(last.end, w.end)
			return
		}
		sc.wins[ri] = append(ws, w)
	}
	for _, ri := range r.always {
		add(ri, window{0, len(s)})
	}
	r.kw.scan(s, func(kw, pos int) {
		for _, ri := range r.kw.rules[kw] {
			ru := r.rules[ri]
			ws := sc.wins[ri]
			if n := len(ws); n > 0 {
				if ru.anchored && pos == ws[n-1].start || !ru.anchored && ru.lines == 0 && pos < ws[n-1].end {
					continue // already covered
				}
			}
			if ru.wordStart && pos > 0 && isWordByte(s[pos-1]) {
				continue
			}
			if ru.pre != nil && !ru.pre(s, pos, pos+len(r.kw.words[kw])) {
				continue
			}
			w := ru.window(s, pos)
			if ru.anchored {
				if len(ws) == 0 {
					sc.used = append(sc.used, ri)
				}
				sc.wins[ri] = append(ws, w)
				continue
			}
			add(ri, w)
		}
	})
}

// merge turns candidates into sorted, non-overlapping findings. Overlapping
// candidates become one finding covering all of them, named after the longest
// (on a tie, the rule with the higher priority).
func (r *Redactor) merge(cands []candidate) []Finding {
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return a.end > b.end
	})
	var out []Finding
	cur := cands[0]
	best := cur
	flush := func() {
		out = append(out, Finding{Kind: r.rules[best.rule].kind, Start: cur.start, End: cur.end})
	}
	for _, c := range cands[1:] {
		if c.start >= cur.end {
			flush()
			cur, best = c, c
			continue
		}
		cur.end = max(cur.end, c.end)
		if better(c, best, r.rules) {
			best = c
		}
	}
	flush()
	return out
}

// better reports whether candidate a names a merged span rather than b.
func better(a, b candidate, rules []*rule) bool {
	la, lb := a.end-a.start, b.end-b.start
	if la != lb {
		return la > lb
	}
	return rules[a.rule].prio > rules[b.rule].prio
}

// customRule compiles a configured pattern.
func customRule(p Pattern) (*rule, error) {
	if strings.TrimSpace(p.Name) == "" {
		return nil, errors.New("name is empty")
	}
	if p.Regex == "" {
		return nil, errors.New("regex is empty")
	}
	re, err := regexp.Compile(p.Regex)
	if err != nil {
		return nil, fmt.Errorf("compile regex: %w", err)
	}
	r := &rule{
		id:    p.Name,
		kind:  p.Name,
		prio:  prioCustom,
		whole: true,
	}
	if i := re.SubexpIndex("secret"); i > 0 {
		r.group = i
	}
	for _, k := range p.Keywords {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			r.keywords = append(r.keywords, k)
		}
	}
	if err := r.compile(p.Regex, false); err != nil {
		return nil, err
	}
	return r, nil
}
