package redact

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/zricethezav/gitleaks/v8/config"
)

// gitleaksKind returns the short kind knowhub reports for a gitleaks rule:
// the common providers are renamed, other rules keep their id.
func gitleaksKind(id string) string {
	switch id {
	case "anthropic-admin-api-key":
		return "anthropic-api-key"
	case "github-fine-grained-pat":
		return "github-pat"
	case "slack-app-token", "slack-bot-token", "slack-config-access-token",
		"slack-config-refresh-token", "slack-legacy-bot-token", "slack-legacy-token",
		"slack-legacy-workspace-token", "slack-user-token":
		return "slack-token"
	case "slack-webhook-url":
		return "slack-webhook"
	case "aws-access-token":
		return "aws-access-key"
	case "stripe-access-token":
		return "stripe-key"
	case "jwt-base64":
		return "jwt"
	case "generic-api-key":
		return "generic-secret"
	}
	return id
}

// gitleaksPrio returns a gitleaks rule's priority: the rules that guess
// from a keyword and an assignment rank below the provider formats.
func gitleaksPrio(id string) int {
	switch id {
	case "generic-api-key", "curl-auth-header", "curl-auth-user":
		return prioGeneric
	}
	return prioSpecific
}

// gitleaksKeywords replaces the keywords of gitleaks rules whose own are
// shorter than three bytes (which slows the keyword scan down) or occur on
// most lines of prose. The regexps are unchanged.
func gitleaksKeywords(id string) ([]string, bool) {
	switch id {
	case "jwt":
		// "ey" is in "key" and "they"; a JWT's header is base64 of `{"`.
		return []string{"eyj"}, true
	case "vault-service-token":
		// "s." ends half the sentences; the legacy "s.<24 chars>" tokens
		// it was for are not looked for any more.
		return []string{"hvs."}, true
	case "twilio-api-key":
		// SK[0-9a-fA-F]{32}: "sk" and a hex digit.
		return withEach("sk", "0123456789abcdef"), true
	case "azure-ad-client-secret":
		// ...\dQ~...: a digit and "q~".
		return withEach("", "0123456789", "q~"), true
	}
	return nil, false
}

// withEach returns prefix+c+suffix for each byte c of chars.
func withEach(prefix, chars string, suffix ...string) []string {
	var out []string
	for i := 0; i < len(chars); i++ {
		out = append(out, prefix+chars[i:i+1]+strings.Join(suffix, ""))
	}
	return out
}

// gitleaksConfig is the part of gitleaks' TOML configuration we use.
type gitleaksConfig struct {
	Allowlist  *gitleaksAllowlist  `toml:"allowlist"`
	Allowlists []gitleaksAllowlist `toml:"allowlists"`
	Rules      []struct {
		ID          string              `toml:"id"`
		Regex       string              `toml:"regex"`
		Path        string              `toml:"path"`
		SecretGroup int                 `toml:"secretGroup"`
		Entropy     float64             `toml:"entropy"`
		Keywords    []string            `toml:"keywords"`
		SkipReport  bool                `toml:"skipReport"`
		Required    []map[string]any    `toml:"required"`
		Allowlist   *gitleaksAllowlist  `toml:"allowlist"`
		Allowlists  []gitleaksAllowlist `toml:"allowlists"`
	} `toml:"rules"`
}

// gitleaksAllowlist is one [[allowlists]] or [[rules.allowlists]] table.
type gitleaksAllowlist struct {
	Condition   string   `toml:"condition"`
	Commits     []string `toml:"commits"`
	Paths       []string `toml:"paths"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	TargetRules []string `toml:"targetRules"`
}

// defaultRules returns the compiled gitleaks rules followed by ours.
func defaultRules() ([]*rule, error) {
	rules, err := gitleaksRules(config.DefaultConfig)
	if err != nil {
		return nil, fmt.Errorf("gitleaks rules: %w", err)
	}
	own, err := ownRules()
	if err != nil {
		return nil, err
	}
	return append(rules, own...), nil
}

// gitleaksRules compiles the rules of a gitleaks configuration that can be
// applied to text without a file path.
func gitleaksRules(src string) ([]*rule, error) {
	var cfg gitleaksConfig
	if err := toml.Unmarshal([]byte(src), &cfg); err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	var global []*allowlist
	targeted := map[string][]*allowlist{}
	globals := cfg.Allowlists
	if cfg.Allowlist != nil {
		globals = append(globals, *cfg.Allowlist)
	}
	for _, ga := range globals {
		a, err := compileAllowlist(ga)
		if err != nil {
			return nil, fmt.Errorf("global allowlist: %w", err)
		}
		if a == nil {
			continue
		}
		if len(ga.TargetRules) == 0 {
			global = append(global, a)
		}
		for _, id := range ga.TargetRules {
			targeted[id] = append(targeted[id], a)
		}
	}

	var rules []*rule
	for _, gr := range cfg.Rules {
		// Rules bound to a file path, composite rules and helper rules need
		// context a text does not have.
		if gr.Regex == "" || gr.Path != "" || gr.SkipReport || len(gr.Required) > 0 {
			continue
		}
		stripped, n := stripLazyPrefix(gr.Regex)
		stripped = strings.ReplaceAll(stripped, gitleaksEnd, secretEnd)
		r := &rule{
			id:       gr.ID,
			kind:     gitleaksKind(gr.ID),
			group:    gr.SecretGroup,
			entropy:  gr.Entropy,
			stripped: n,
			prio:     gitleaksPrio(gr.ID),
		}
		kws := gr.Keywords
		if k, ok := gitleaksKeywords(gr.ID); ok {
			kws = k
		}
		for _, k := range kws {
			r.keywords = append(r.keywords, strings.ToLower(k))
		}
		r.lines = spanLines(gr.Regex)
		if err := r.compile(stripped, strings.Contains(gr.Regex, assignOps)); err != nil {
			return nil, fmt.Errorf("rule %s: %w", gr.ID, err)
		}
		als := gr.Allowlists
		if gr.Allowlist != nil {
			als = append(als, *gr.Allowlist)
		}
		for _, ga := range als {
			a, err := compileAllowlist(ga)
			if err != nil {
				return nil, fmt.Errorf("rule %s: allowlist: %w", gr.ID, err)
			}
			if a != nil {
				r.allow = append(r.allow, a)
			}
		}
		r.allow = append(r.allow, targeted[gr.ID]...)
		r.allow = append(r.allow, global...)
		r.check = notPlaceholder
		if r.prio == prioGeneric {
			r.check = randomLooking
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// compileAllowlist keeps what of a gitleaks allowlist can apply to text
// alone; it returns nil for one that only lists paths or commits, or that
// needs a path or commit to agree.
func compileAllowlist(ga gitleaksAllowlist) (*allowlist, error) {
	and := strings.EqualFold(ga.Condition, "AND")
	if and && (len(ga.Paths) > 0 || len(ga.Commits) > 0) {
		return nil, nil
	}
	if len(ga.Regexes) == 0 && len(ga.StopWords) == 0 {
		return nil, nil
	}
	a := &allowlist{target: ga.RegexTarget, and: and}
	for _, src := range ga.Regexes {
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("compile %q: %w", src, err)
		}
		a.regexes = append(a.regexes, re)
	}
	for _, w := range ga.StopWords {
		a.stopwords = append(a.stopwords, strings.ToLower(w))
	}
	return a, nil
}

// gitleaksEnd is what most gitleaks rules want after a secret: a quote, a
// space, ';', an escaped newline or the end of the text.
const gitleaksEnd = `(?:[\x60'"\s;]|\\[nr]|$)`

// secretEnd replaces gitleaksEnd: a secret in prose, a list, a call or a
// URL's query is also followed by ',', ')', ']', '}', '>', '<', '&', '|',
// or by a '.' that ends a sentence ("npm_... ." but not "npm_....tgz").
const secretEnd = `(?:[\x60'"\s;,)\]}>&|<]|\.(?:[^\w/]|$)|\\[nr]|$)`

// lazyPrefix is what gitleaks puts in front of its "name = value" rules.
const lazyPrefix = `[\w.-]{0,50}?`

// stripLazyPrefix removes gitleaks' lazy "[\w.-]{0,50}?" from the start of a
// regexp, after a leading "(?i)" or inside a leading "(?i:". Such a prefix
// can change where a match starts but never what the capture groups hold.
// It returns the new source and how many bytes the removed prefixes could
// have matched.
func stripLazyPrefix(src string) (string, int) {
	n := 0
	for {
		i := 0
		if strings.HasPrefix(src, "(?i)") || strings.HasPrefix(src, "(?i:") {
			i = len("(?i)")
		}
		if !strings.HasPrefix(src[i:], lazyPrefix) {
			return src, n
		}
		src = src[:i] + src[i+len(lazyPrefix):]
		n += 50
	}
}

// spanLines returns how many lines after its keyword's line a gitleaks rule
// may match: PEM blocks run to their END line, and the curl and base64 JWT
// rules allow a few continuation lines.
func spanLines(src string) int {
	switch {
	case strings.Contains(src, `[\s\S`) || strings.Contains(src, `(?s`):
		return 200
	case strings.Contains(src, `\r`) || strings.Contains(src, `\n`):
		return 6
	}
	return 0
}
