package redact

import (
	"fmt"
	"strings"
)

// ownRules returns the rules gitleaks lacks or keeps too narrow for us.
func ownRules() ([]*rule, error) {
	specs := []struct {
		id, regex string
		kind      string // the finding kind when it is not id
		keywords  []string
		group     int
		prio      int
		pre       func(s string, start, end int) bool
		check     func(secret, match string) bool
	}{
		{
			// gitleaks only knows keys carrying the "T3BlbkFJ" marker;
			// older and third-party "sk-" keys have none.
			id:       "openai-api-key",
			regex:    `\bsk-[A-Za-z0-9_-]{20,}`,
			keywords: []string{"sk-"},
			prio:     prioLoose,
			check:    randomLooking,
		},
		{
			// gitleaks wants exactly 93 characters and "AA"; OAuth tokens
			// (sk-ant-oat01-...) and truncated pastes are still secrets.
			id:       "anthropic-api-key",
			regex:    `\bsk-ant-[A-Za-z0-9_-]{20,}`,
			keywords: []string{"sk-ant-"},
			prio:     prioSpecific,
			check:    randomLooking,
		},
		// gitleaks' gcp, stripe and jwt rules want a quote, a space or ';'
		// after the secret; in URLs and lists "&", "," or ")" follow.
		{
			id:       "gcp-api-key",
			regex:    `\bAIza[\w-]{35}\b`,
			keywords: []string{"aiza"},
			prio:     prioLoose,
			check:    randomLooking,
		},
		{
			id:       "stripe-key",
			regex:    `\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,99}\b`,
			keywords: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
			prio:     prioLoose,
			check:    randomLooking,
		},
		{
			id:       "jwt",
			regex:    `\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*`,
			keywords: []string{"eyj"},
			prio:     prioLoose,
			check:    notPlaceholder,
		},
		{
			id:       "openrouter-api-key",
			regex:    `\bsk-or-v1-[a-f0-9]{64}\b`,
			keywords: []string{"sk-or-v1-"},
			prio:     prioSpecific,
			check:    notPlaceholder,
		},
		{
			// Assignments, and sentences: "the AWS secret key is X."
			id: "aws-secret-key",
			regex: `(?i)(?:aws[ _]?secret(?:[ _]?access)?(?:[ _]?key)?|secret[ _]?access[ _]?key)(?:[ \t\w.-]{0,20}?)["']?[ \t]*` +
				`(?:=|:=|=>|:|\bis\b|\bwas\b)[ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`,
			keywords: []string{"aws_secret", "awssecret", "aws secret", "secret_access", "secretaccess", "secret access"},
			group:    1,
			prio:     prioSpecific,
			check:    randomLooking,
		},
		{
			// gitleaks' generic rule only takes [\w.=-] values; quoted
			// passwords hold symbols too.
			id: "generic-secret",
			regex: `(?i)(?:password|passwd|passphrase|pwd)[\w.-]{0,20}["']?[ \t]*(?:=|:=|=>|:)[ \t]*` +
				`["']([^"'\s]{8,64})["']`,
			keywords: []string{"password", "passwd", "passphrase", "pwd"},
			group:    1,
			prio:     prioGeneric,
			check:    strongPassword,
		},
		{
			// Unquoted passwords: "password: X", "DB_PASSWORD=X", "the
			// db password for prod is X." The value is judged as prose
			// detection judges one, so "the password is stored in Vault"
			// and "password: <your password>" stay.
			id: "password-value",
			regex: `(?i)(?:password|passwd|passphrase|pwd)(?:[ \t]+(?:for|of|on)(?:[ \t]+[\w.@-]+){1,3}?)?` +
				`(?:[ \t]*(?:=|:=|=>|:)[ \t]*|[ \t]+(?:is|was|is now|will be)[ \t]+)` +
				"[\"'`]?([^\\s\"'`]{6,64}?)[\"'`]?[.,;:!?)\\]]*(?:\\s|$)",
			kind:     "generic-secret",
			keywords: []string{"password", "passwd", "passphrase", "pwd"},
			group:    1,
			prio:     prioGeneric,
			pre:      passwordNext,
			check:    passwordValue,
		},
		{
			id:       "bearer-token",
			regex:    `(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{10,}=*)`,
			keywords: []string{"bearer"},
			group:    1,
			prio:     prioLoose,
			check:    randomLooking,
		},
		{
			id:       "url-password",
			regex:    `\b[A-Za-z][A-Za-z0-9+.-]{0,30}://([^\s:/?#@\[\]"'<>]*):([^\s@/?#"'<>\[\]]+)@[^\s@/?#"'<>]`,
			keywords: []string{"://"},
			group:    2,
			prio:     prioLoose,
			pre:      userinfoAfter,
			check:    realPassword,
		},
	}
	// The OpenClaw doc-engine plugin's four default secretPatterns, which
	// its users expect caught: any value of these shapes, however
	// unrealistic ("sk-abcdefghijklmnopqrstuvwxyz1234567890"), unless it is
	// plainly an illustration (elided, templated, masked, worded).
	for _, d := range []struct{ id, kind, regex, keyword string }{
		{"openai-key-shape", "openai-api-key", `\bsk-[a-zA-Z0-9]{20,}`, "sk-"},
		{"gcp-key-shape", "gcp-api-key", `\bAIza[a-zA-Z0-9_-]{35}`, "aiza"},
		{"github-pat-shape", "github-pat", `\bghp_[a-zA-Z0-9]{36}`, "ghp_"},
		{"slack-bot-token-shape", "slack-token", `\bxoxb-[a-zA-Z0-9-]+`, "xoxb-"},
	} {
		specs = append(specs, struct {
			id, regex string
			kind      string
			keywords  []string
			group     int
			prio      int
			pre       func(s string, start, end int) bool
			check     func(secret, match string) bool
		}{id: d.id, kind: d.kind, regex: d.regex, keywords: []string{d.keyword}, prio: prioGeneric, check: notIllustration})
	}
	var rules []*rule
	for _, s := range specs {
		kind := s.kind
		if kind == "" {
			kind = s.id
		}
		r := &rule{
			id:       "knowhub:" + s.id,
			kind:     kind,
			group:    s.group,
			keywords: s.keywords,
			prio:     s.prio,
			pre:      s.pre,
			check:    s.check,
		}
		if err := r.compile(s.regex, false); err != nil {
			return nil, fmt.Errorf("rule %s: %w", s.id, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// userinfoAfter reports whether the "://" at s[start:end] is followed by a
// userinfo part: an '@' before the authority ends.
func userinfoAfter(s string, _, end int) bool {
	for i := end; i < len(s) && i < end+1024; i++ {
		switch s[i] {
		case '@':
			return true
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
			return false
		}
	}
	return false
}

// notPlaceholder rejects values that illustrate a secret's shape: elided
// ("sk-..."), templated ("<key>", "${KEY}", "{{ key }}", "%KEY%"), masked
// ("xxxxx", "*****"), counted ("123456789", "abcdef") or worded
// ("your-token-here"). Values longer than 64 bytes (PEM blocks, JWTs) are
// only checked for elision, templates and long masks: they hold short runs
// ("AAAAA" in an OpenSSH key) and words by chance.
func notPlaceholder(secret, _ string) bool {
	if elided(secret) {
		return false
	}
	if len(secret) > 64 {
		return maskRun(secret) < 8
	}
	if sameRun(secret) >= 5 || stepRun(secret) >= 6 {
		return false
	}
	return !worded(secret)
}

// elided reports whether a value is elided ("sk-...") or templated.
func elided(secret string) bool {
	return strings.Contains(secret, "...") || strings.Contains(secret, "…") ||
		strings.ContainsAny(secret, "<>{}") || varRef(secret)
}

// worded reports whether a value says it is not a real one.
func worded(secret string) bool {
	low := strings.ToLower(secret)
	for _, w := range [...]string{
		"your", "example", "placeholder", "redacted", "changeme", "change_me",
		"replace", "insert", "dummy", "sample", "here", "todo", "fixme",
	} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// notIllustration is notPlaceholder without the counted and repeated
// runs: a value shaped like a key is taken for one even when it spells
// the alphabet, unless it is elided, templated, masked or worded.
func notIllustration(secret, _ string) bool {
	return !elided(secret) && maskRun(secret) < 5 && !worded(secret)
}

// maskRun returns the length of the longest run of 'x', 'X', '*' or '#'.
func maskRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'x', 'X', '*', '#':
			run++
			best = max(best, run)
		default:
			run = 0
		}
	}
	return best
}

// varRef reports whether s refers to a variable: $NAME, ${...}, $(...) or
// %NAME%.
func varRef(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		c, d := s[i], s[i+1]
		switch {
		case c == '$' && (d == '{' || d == '(' || d == '_' || d >= 'A' && d <= 'Z'):
			return true
		case c == '%' && (d == '_' || d >= 'A' && d <= 'Z') && strings.IndexByte(s[i+1:], '%') > 0:
			return true
		}
	}
	return false
}

// sameRun returns the length of the longest run of one repeated letter,
// digit, '*' or '#' in s, compared case-insensitively.
func sameRun(s string) int {
	best, run := 0, 0
	var prev byte
	for i := 0; i < len(s); i++ {
		c := lower(s[i])
		if !(isWordByte(c) && c != '_' || c == '*' || c == '#') {
			run, prev = 0, 0
			continue
		}
		if c == prev {
			run++
		} else {
			run, prev = 1, c
		}
		best = max(best, run)
	}
	return best
}

// stepRun returns the length of the longest run of letters or digits in s
// that each follow the previous one in the alphabet, up or down.
func stepRun(s string) int {
	best, run, dir := 1, 1, 0
	for i := 1; i < len(s); i++ {
		a, b := lower(s[i-1]), lower(s[i])
		d := int(b) - int(a)
		same := isWordByte(a) && isWordByte(b) && a != '_' && b != '_' &&
			(a <= '9') == (b <= '9') && (d == 1 || d == -1)
		switch {
		case same && d == dir:
			run++
		case same:
			run, dir = 2, d
		default:
			run, dir = 1, 0
		}
		best = max(best, run)
	}
	if len(s) == 0 {
		return 0
	}
	return best
}

// randomLooking accepts a value that is not a placeholder and looks
// generated: letters mixed with digits, or a long mix of upper and lower
// case, with enough entropy.
func randomLooking(secret, match string) bool {
	if !notPlaceholder(secret, match) {
		return false
	}
	var upper, lowerCase, digit bool
	for i := 0; i < len(secret); i++ {
		c := secret[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lowerCase = true
		case c >= 'A' && c <= 'Z':
			upper = true
		}
	}
	h := entropy(secret)
	if digit {
		return (upper || lowerCase) && h >= 3.2
	}
	return upper && lowerCase && len(secret) >= 24 && h >= 4
}

// strongPassword accepts a quoted password that is not a placeholder, not a
// well-known example and mixes letters with digits or symbols.
func strongPassword(secret, match string) bool {
	if !notPlaceholder(secret, match) || weakPassword(secret) {
		return false
	}
	// A setting named after a password need not hold one: passwordFile,
	// password_env, passwordPolicy, minPasswordLength...
	name := strings.ToLower(match[:strings.IndexAny(match, "=:")])
	for _, w := range [...]string{
		"file", "path", "dir", "env", "var", "url", "hint", "policy", "length",
		"field", "label", "prompt", "hash", "cmd", "command", "type", "name",
	} {
		if strings.Contains(name, w) {
			return false
		}
	}
	if strings.HasPrefix(secret, "/") || strings.HasPrefix(secret, "./") || strings.HasPrefix(secret, "~/") {
		return false
	}
	var letter, other bool
	for i := 0; i < len(secret); i++ {
		c := secret[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			letter = true
		} else {
			other = true
		}
	}
	return letter && other && entropy(secret) >= 3
}

// passwordNext reports whether the password keyword at s[start:end] is
// followed by what can lead to its value: an assignment sign, or a space
// and "is", "was", "will", "for", "of" or "on". Most mentions of a
// password in prose are not, and cost no regexp.
func passwordNext(s string, _, end int) bool {
	i := end
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) {
		return false
	}
	if s[i] == '=' || s[i] == ':' {
		return true
	}
	if i == end {
		return false
	}
	j := i
	for j < len(s) && j-i < 5 && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
		j++
	}
	if j == len(s) || s[j] != ' ' && s[j] != '\t' {
		return false
	}
	switch strings.ToLower(s[i:j]) {
	case "is", "was", "will", "for", "of", "on":
		return true
	}
	return false
}

// passwordValue accepts an unquoted value a sentence or a setting names
// as a password when prose detection would (see proseValue), unless it is
// a YAML tag that fetches the password from elsewhere ("!vault",
// "!secret wifi_password").
func passwordValue(secret, _ string) bool {
	return !strings.HasPrefix(secret, "!") && proseValue(secret, "password", false)
}

// weakPassword reports whether a password is too short, or a word or name
// documentation uses for one.
func weakPassword(p string) bool {
	low := strings.ToLower(strings.Trim(p, "_*-."))
	switch low {
	case "pass", "admin", "root", "test", "guest", "user", "username", "token",
		"none", "null", "empty", "changeme", "changeit", "letmein":
		return true
	}
	return len(low) < 4 || strings.Contains(low, "password") ||
		strings.Contains(low, "passwd") || strings.Contains(low, "secret")
}

// realPassword accepts the password of a URL's userinfo unless it is a
// placeholder, a variable, a well-known example or the user name again.
func realPassword(secret, match string) bool {
	if !notPlaceholder(secret, match) || weakPassword(secret) {
		return false
	}
	user := match[strings.Index(match, "://")+3:]
	user = user[:strings.IndexByte(user, ':')]
	return secret != user
}
