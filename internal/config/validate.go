package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/lang"
)

// Validate checks the whole configuration and returns every problem found,
// joined with errors.Join, each a *FieldError naming its field. It touches
// no file system: whether paths exist is for CheckPaths and the components
// that open them.
func (c *Config) Validate() error {
	var e errs
	if c.DataDir == "" {
		e.add("dataDir", "required")
	}
	c.NATS.validate(&e)
	c.HTTP.validate(&e)
	validateRepositories(&e, c.Repositories)
	c.Redaction.validate(&e)

	e.stage("chunker", c.Chunker.Validate())
	e.stage("watcher", c.Watcher.Validate())
	e.stage("query", c.Query.Validate())

	e.stage("extractor", c.Extractor.Config.Validate())
	c.Extractor.LLM.validate(&e, "extractor.llm")
	c.Knowledge.Evolution.LLM.validate(&e, "knowledge.evolution.llm")
	c.Semantic.Embeddings.validate(&e)
	return e.err()
}

// validate checks an endpoint that is set (a BaseURL); key prefixes the
// keys of its problems.
func (l LLM) validate(e *errs, key string) {
	if l.BaseURL == "" {
		return
	}
	if u, err := url.Parse(l.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.add(key+".baseURL", "%q is not an http(s) URL", l.BaseURL)
	}
	if l.Model == "" {
		e.add(key+".model", "required with a baseURL")
	}
	if l.TimeoutSeconds < 1 {
		e.add(key+".timeoutSeconds", "must be at least 1")
	}
}

// envName is the shape of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (m Embeddings) validate(e *errs) {
	if m.URL == "" {
		return
	}
	const at = "semantic.embeddings."
	if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.add(at+"url", "%q is not an http(s) URL", m.URL)
	}
	if strings.TrimSpace(m.Model) == "" {
		e.add(at+"model", "required with a url")
	}
	if m.APIKeyEnv != "" && !envName.MatchString(m.APIKeyEnv) {
		e.add(at+"apiKeyEnv", "%q is not an environment variable's name (give the name, not the key)", m.APIKeyEnv)
	}
	if m.Dimensions < 0 || m.Dimensions > contract.MaxEmbeddingDims {
		e.add(at+"dimensions", "must be between 0 (the model's own) and %d, not %d", contract.MaxEmbeddingDims, m.Dimensions)
	}
	if m.BatchSize < 1 || m.BatchSize > 2048 {
		e.add(at+"batchSize", "must be between 1 and 2048, not %d", m.BatchSize)
	}
	if m.TimeoutSeconds < 1 {
		e.add(at+"timeoutSeconds", "must be at least 1")
	}
	if m.QueryTimeoutMs < 1 {
		e.add(at+"queryTimeoutMs", "must be at least 1")
	}
	if m.Weight < 0 || m.Weight > 1 {
		e.add(at+"weight", "must be between 0 and 1, not %g", m.Weight)
	}
}

func (n NATS) validate(e *errs) {
	switch n.EmbeddedAuth {
	case EmbeddedAuthToken, EmbeddedAuthNone:
	default:
		e.add("nats.embeddedAuth", "must be %q or %q, not %q", EmbeddedAuthToken, EmbeddedAuthNone, n.EmbeddedAuth)
	}
	switch n.Replicas {
	case 1, 3, 5:
	default:
		e.add("nats.replicas", "must be 1, 3 or 5, not %d", n.Replicas)
	}
	if n.Listen == "" {
		e.add("nats.listen", "required")
	} else if err := checkHostPort(n.Listen); err != nil {
		e.add("nats.listen", "%v", err)
	}
	if n.URL == "" {
		e.add("nats.url", "required")
	} else {
		for _, u := range strings.Split(n.URL, ",") {
			if err := checkNATSURL(strings.TrimSpace(u)); err != nil {
				e.add("nats.url", "%v", err)
			}
		}
	}
	var auth []string
	for _, a := range []struct{ name, value string }{
		{"credsFile", n.CredsFile}, {"nkeyFile", n.NKeyFile}, {"token", n.Token}, {"user", n.User},
	} {
		if a.value != "" {
			auth = append(auth, a.name)
		}
	}
	if len(auth) > 1 {
		e.add("nats", "set only one of credsFile, nkeyFile, token and user (found %s)", strings.Join(auth, ", "))
	}
	if n.Password != "" && n.User == "" {
		e.add("nats.password", "requires nats.user")
	}
	checkPair(e, "nats.tlsCert", n.TLSCert, "nats.tlsKey", n.TLSKey)
	switch {
	case n.MaxPayload <= 0:
		e.add("nats.maxPayload", "must be positive")
	case n.MaxPayload > MaxNATSPayload:
		e.add("nats.maxPayload", "must be at most %d (64 MiB)", MaxNATSPayload)
	case n.BufferLimit < n.MaxPayload:
		e.add("nats.bufferLimit", "must be at least nats.maxPayload (%d)", n.MaxPayload)
	}
}

// checkNATSURL accepts what nats.go accepts in a server list: a URL with a
// nats, tls, ws or wss scheme, or a bare host:port. A URL may carry
// credentials, so an error shows it only in redacted form.
func checkNATSURL(s string) error {
	if s == "" {
		return fmt.Errorf("empty server in list")
	}
	if !strings.Contains(s, "://") {
		s = "nats://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("a server is not a valid URL")
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("%q: scheme must be nats, tls, ws or wss", u.Redacted())
	}
	if u.Host == "" {
		return fmt.Errorf("%q: missing host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return fmt.Errorf("%q: port must be a number from 0 to 65535", u.Redacted())
		}
	}
	return nil
}

func (h HTTP) validate(e *errs) {
	if h.Enabled() {
		if err := checkHostPort(h.Listen); err != nil {
			e.add("http.listen", "%v (or \"off\" to disable)", err)
		}
	}
	checkPair(e, "http.tlsCert", h.TLSCert, "http.tlsKey", h.TLSKey)
	if h.MaxBodyBytes <= 0 {
		e.add("http.maxBodyBytes", "must be positive")
	}
	for i, host := range h.AllowedHosts {
		if !validHostName(host) {
			e.add(fmt.Sprintf("http.allowedHosts[%d]", i), "%q is not a host name such as knowhub.internal (no scheme, port or wildcard)", host)
		}
	}
	seen := make(map[string]int)
	for i, t := range h.Tokens {
		field := fmt.Sprintf("http.tokens[%d]", i)
		switch {
		case t.Token == "":
			e.add(field+".token", "required")
		case isPlaceholder(t.Token):
			// Never echo a token's value.
			e.add(field+".token", "%s is a placeholder, not a secret: %s", tokenName(t), makeToken)
		case strings.ContainsFunc(t.Token, isSpaceOrControl):
			e.add(field+".token", "must not contain spaces or control characters")
		case utf8.RuneCountInString(t.Token) < MinTokenLength:
			e.add(field+".token", "%s is shorter than %d characters: %s", tokenName(t), MinTokenLength, makeToken)
		default:
			if j, dup := seen[t.Token]; dup {
				// Never echo a token's value.
				e.add(field+".token", "same token as http.tokens[%d]", j)
			} else {
				seen[t.Token] = i
			}
		}
		if len(t.Scopes) == 0 {
			e.add(field+".scopes", "must list at least one scope")
		}
		for j, s := range t.Scopes {
			if s == "" {
				e.add(fmt.Sprintf("%s.scopes[%d]", field, j), "must not be empty")
			}
		}
	}
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// MinTokenLength is the shortest bearer token accepted. Sixteen hex
// characters are 64 random bits, out of reach of guessing through an API
// that answers each guess over HTTP; anything shorter is a password.
const MinTokenLength = 16

// makeToken says how to make a token.
const makeToken = "set a random one, such as the output of `openssl rand -hex 24`"

// placeholders are words of example tokens (knowhub.example.json's
// "REPLACE-ME...") that must never protect a running API.
var placeholders = []string{"replace", "changeme", "change-me", "change_me", "placeholder", "example", "your-token", "your_token", "<", ">", "...", "…"}

// isPlaceholder reports whether token is an example's placeholder.
func isPlaceholder(token string) bool {
	lower := strings.ToLower(token)
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// tokenName names a token entry in an error, by its name when it has one.
func tokenName(t Token) string {
	if t.Name == "" {
		return "the token"
	}
	return fmt.Sprintf("the token of %q", t.Name)
}

func validateRepositories(e *errs, repos []Repository) {
	names := make(map[string]int)
	for i, r := range repos {
		field := fmt.Sprintf("repositories[%d]", i)
		switch {
		case r.Name == "":
			e.add(field+".name", "required")
		case len(r.Name) > 64 && contract.ValidRepoName(r.Name[:64]):
			e.add(field+".name", "%q is longer than 64 characters", r.Name)
		case !contract.ValidRepoName(r.Name):
			e.add(field+".name", "%q is not a valid repository name (letters, digits, _ and - only)", r.Name)
		default:
			if j, dup := names[r.Name]; dup {
				e.add(field+".name", "%q is also the name of repositories[%d]", r.Name, j)
			} else {
				names[r.Name] = i
			}
		}
		if r.Path == "" {
			e.add(field+".path", "required")
		}
		if r.Priority < 1 {
			e.add(field+".priority", "must be a number of at least 1 (1 is the most authoritative), not %d", r.Priority)
		}
		if r.Type != contract.RepoCore && r.Type != contract.RepoExtension {
			e.add(field+".type", "must be %q or %q", contract.RepoCore, contract.RepoExtension)
		}
		checkGlob(e, field+".glob", r.Glob)
		for j, g := range r.Exclude {
			checkGlob(e, fmt.Sprintf("%s.exclude[%d]", field, j), g)
		}
		for j, g := range r.Demote {
			checkGlob(e, fmt.Sprintf("%s.demote[%d]", field, j), g)
		}
		if r.Languages != nil && len(r.Languages) == 0 {
			e.add(field+".languages", "must list at least one language; leave it out to index every language")
		}
		for j, t := range r.Languages {
			if _, err := lang.Normalize(t); err != nil {
				e.add(fmt.Sprintf("%s.languages[%d]", field, j), "%v", err)
			}
		}
	}
}

// checkGlob accepts a doublestar pattern relative to a repository root.
func checkGlob(e *errs, field, g string) {
	switch {
	case g == "":
		e.add(field, "must not be empty")
	case !doublestar.ValidatePattern(g):
		e.add(field, "%q is not a valid glob", g)
	case strings.HasPrefix(g, "/"):
		e.add(field, "%q must be relative to the repository root", g)
	}
}

func (r Redaction) validate(e *errs) {
	names := make(map[string]int)
	for i, p := range r.Patterns {
		field := fmt.Sprintf("redaction.patterns[%d]", i)
		if p.Name == "" {
			e.add(field+".name", "required")
		} else if j, dup := names[p.Name]; dup {
			e.add(field+".name", "%q is also the name of redaction.patterns[%d]", p.Name, j)
		} else {
			names[p.Name] = i
		}
		if p.Regex == "" {
			e.add(field+".regex", "required")
		} else if re, err := regexp.Compile(p.Regex); err != nil {
			e.add(field+".regex", "%v", err)
		} else if re.MatchString("") {
			e.add(field+".regex", "matches the empty string, so it would redact everywhere")
		}
		for j, k := range p.Keywords {
			if k == "" {
				e.add(fmt.Sprintf("%s.keywords[%d]", field, j), "must not be empty")
			}
		}
	}
	for i, p := range r.SecretPatterns {
		field := fmt.Sprintf("redaction.secretPatterns[%d]", i)
		if p == "" {
			e.add(field, "must not be empty")
		} else if re, err := regexp.Compile(p); err != nil {
			e.add(field, "%v (Go RE2 syntax: no lookaround or backreferences)", err)
		} else if re.MatchString("") {
			e.add(field, "matches the empty string, so it would redact everywhere")
		}
	}
}

// checkPair reports one of two settings that must be set together.
func checkPair(e *errs, aName, a, bName, b string) {
	switch {
	case a != "" && b == "":
		e.add(aName, "requires %s", bName)
	case a == "" && b != "":
		e.add(bName, "requires %s", aName)
	}
}

// validHostName accepts a DNS name of letters, digits, '-' and '_' in
// dot-separated labels, or an IP address.
func validHostName(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// checkHostPort accepts "host:port" or ":port" with a numeric port.
func checkHostPort(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port must be a number from 0 to 65535", s)
	}
	return nil
}
