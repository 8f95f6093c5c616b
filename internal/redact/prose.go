package redact

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kinds of the findings of Prose.
const (
	KindProseSecret      = "prose-secret"       // a value a sentence names as a password, token or key
	KindHighEntropyToken = "high-entropy-token" // a bare random-looking token (an AWS secret key, an API token)
)

// Prose detection is for text people write to each other (agent
// transcripts), where secrets come without the "name = value" context that
// the rules of New need: "the password for prod is X", "use X as the
// token", a bare 40-character AWS secret key. It is deliberately not part
// of New's rules, which also run over documentation, where a sentence
// naming a password is usually about passwords.

// proseKeywords name a secret, in the languages of the knowledge hub's
// users. The ASCII ones must be whole words (checked in ProseFindings,
// since RE2's \b knows only ASCII); the others need no boundary.
const proseKeywords = `passwords?|passwort|passwd|passphrase|passcode|pass code|pwd|pw|pin|pin code|secret key|secret|api[ _-]?key|access key|private key|token|credentials?|` +
	`kennwort|mot de passe|contraseña|clave|senha|parola d'ordine|пароль|密码|口令|密碼|パスワード|暗証番号|비밀번호`

// proseRE finds a keyword, a short qualifier of words ("for prod", "der
// Datenbank", "от базы"), a copula or an assignment sign on the same line,
// and the value: printable ASCII, quoted or not.
var proseRE = regexp.MustCompile(`(?i)(` + proseKeywords + `)` +
	`([\p{L}\p{N} '’-]{0,40}?)` +
	`(?:[ \t]*(?:=|:=|=>|->|:|：)[ \t]*|[ \t]+(?:is|was|are|is now|will be|equals|lautet|ist|war|est|était|es|era|é|será|это|—)[ \t]+|[ \t]*(?:是|为|為|は|が)[ \t]*)` +
	"(?:[\"'`“‘「]([^\"'`”’」\\s]{4,128})[\"'`”’」]|([!-~]{4,128}))")

// useAsRE finds "use X as the password".
var useAsRE = regexp.MustCompile("(?i)\\buse\\s+[\"'`]?([!-~]{6,128}?)[\"'`]?\\s+as\\s+(?:the\\s+|my\\s+|your\\s+|our\\s+|a\\s+|an\\s+)?(?:\\w+\\s+)?(?:password|passphrase|passcode|pin|token|api key|secret|key)\\b")

// tokenRE finds runs of the characters of base64 and URL-safe tokens.
var tokenRE = regexp.MustCompile(`[A-Za-z0-9+/_\-]{24,256}={0,3}`)

// Prose returns s with the findings of ProseFindings replaced by
// "[REDACTED:<kind>]". It is idempotent.
func Prose(s string) string {
	found := ProseFindings(s)
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.Start])
		b.WriteString("[REDACTED:" + f.Kind + "]")
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// ProseFindings returns the secrets of s that need no assignment context,
// in input order and not overlapping: values that a sentence names as a
// secret (KindProseSecret) and bare tokens that look generated
// (KindHighEntropyToken). Values that illustrate a secret (placeholders,
// variables, well-known examples) and words ("the password is required")
// are not findings.
func ProseFindings(s string) []Finding {
	var out []Finding
	for _, m := range proseRE.FindAllStringSubmatchIndex(s, -1) {
		if !keywordAt(s, m[2], m[3]) {
			continue
		}
		start, end := m[6], m[7]
		quoted := start >= 0
		if !quoted {
			start, end = m[8], m[9]
			end = start + len(strings.TrimRight(s[start:end], ".,;:!?)]}>\"'`*_"))
		}
		kw := strings.ToLower(s[m[2]:m[3]])
		if attributeWord(s[m[4]:m[5]]) {
			continue
		}
		if proseValue(s[start:end], kw, quoted) {
			out = append(out, Finding{Kind: KindProseSecret, Start: start, End: end})
		}
	}
	for _, m := range useAsRE.FindAllStringSubmatchIndex(s, -1) {
		if v := s[m[2]:m[3]]; proseValue(v, "password", false) {
			out = append(out, Finding{Kind: KindProseSecret, Start: m[2], End: m[3]})
		}
	}
	for _, m := range tokenRE.FindAllStringIndex(s, -1) {
		if bareToken(s, m[0], m[1]) {
			out = append(out, Finding{Kind: KindHighEntropyToken, Start: m[0], End: m[1]})
		}
	}
	return mergeFindings(out)
}

// keywordAt reports whether the keyword s[start:end] is a word of its own:
// an alphabetic keyword must not be part of a longer word ("pinned",
// "spin", "tokenizer"); CJK keywords need no boundary.
func keywordAt(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:])
	if unicode.In(first, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
		return true
	}
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:start]); unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.$<{", r) {
			return false
		}
	}
	if end < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[end:]); unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.>}", r) {
			return false
		}
	}
	return true
}

// attributeWord reports whether the qualifier between a keyword and its
// value names something about the secret rather than the secret itself:
// "password file: /etc/x", "token path:", "API key name:".
func attributeWord(q string) bool {
	for w := range strings.FieldsSeq(strings.ToLower(q)) {
		switch strings.Trim(w, "'’-") {
		case "file", "path", "dir", "directory", "env", "variable", "var", "url", "hint", "policy", "length", "field", "label",
			"prompt", "hash", "cmd", "command", "type", "name", "id", "format", "header", "mode", "source", "ref", "reference",
			"location", "prefix", "scope", "scopes", "expiry", "lifetime", "ttl", "store", "manager", "helper", "flag", "option",
			"setting", "parameter", "param", "key", "accounting", "count", "limit", "budget", "usage", "exchange", "refresh":
			return true
		}
	}
	return false
}

// proseValue reports whether v, named as a secret by the keyword kw, looks
// like one: not a placeholder, a variable, a path, a URL or a well-known
// example; letters mixed with digits or symbols (digits alone only for a
// password or PIN), or a long mix of upper and lower case.
func proseValue(v, kw string, quoted bool) bool {
	if len(v) < 4 || !notPlaceholder(v, "") || weakPassword(v) || strings.Contains(v, "://") || strings.Contains(v, "[REDACTED") {
		return false
	}
	switch v[0] {
	case '/', '.', '~', '-', '$', '%', '(', '[', '<', '{', '@', '#', '*', '&', '|', '`', '"', '\'', '\\':
		return false
	}
	if strings.ContainsAny(v, "()") || dottedNameRE.MatchString(v) {
		return false // code: a call or a member chain (ctx.apiKey, setupInput.token)
	}
	switch strings.ToLower(strings.Trim(v, ".,;:!?")) {
	case "true", "false", "null", "nil", "none", "required", "optional", "string", "boolean", "integer", "number", "object",
		"redacted", "hidden", "masked", "unset", "empty", "missing", "invalid", "expired", "revoked", "valid", "correct", "wrong":
		return false
	}
	var letter, digit, upper, lowerCase, other bool
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z':
			letter, lowerCase = true, true
		case r >= 'A' && r <= 'Z':
			letter, upper = true, true
		default:
			other = true
		}
	}
	switch {
	case !letter && !other:
		// Digits only: a PIN or a numeric password, not a token's lifetime.
		return len(v) >= 4 && (strings.HasPrefix(kw, "pin") || strings.HasPrefix(kw, "pass") || kw == "pw" || kw == "pwd" || kw == "passwort" || kw == "пароль" || kw == "密码" || kw == "暗証番号")
	case letter && (digit || other):
		if looksLikeIdentifierPath(v) {
			return false
		}
		return entropy(v) >= 2.5
	case letter && !digit && !other:
		// Letters alone: only a long mix of cases that is not made of
		// words (camelCase names) is a secret.
		return upper && lowerCase && len(v) >= 12 && wordy(v) < 0.5
	}
	return quoted && entropy(v) >= 2.5
}

// dottedNameRE matches a chain of identifiers: ctx.apiKey, a.b.c,.
var dottedNameRE = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[,;]?$`)

// wordy returns the share of s's bytes that are in runs of at least three
// lower-case letters, alone or after one capital (the words of camelCase
// and PascalCase names); random text of letters and digits has few.
func wordy(s string) float64 {
	if s == "" {
		return 0
	}
	n, run := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			run++
			continue
		}
		if run >= 3 {
			n += run
			if i-run > 0 && s[i-run-1] >= 'A' && s[i-run-1] <= 'Z' {
				n++
			}
		}
		run = 0
	}
	return float64(n) / float64(len(s))
}

// dashedName reports whether tok is a name of words joined by dashes or
// underscores (NVIDIA-Nemotron-3-Super-120B-A12B): at least half of its
// parts are words of four letters or more.
func dashedName(tok string) bool {
	parts := strings.FieldsFunc(tok, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) < 3 {
		return false
	}
	words := 0
	for _, p := range parts {
		letters := 0
		for i := range len(p) {
			if p[i] >= 'a' && p[i] <= 'z' || p[i] >= 'A' && p[i] <= 'Z' {
				letters++
			}
		}
		if len(p) >= 4 && letters >= 4 && wordLike(p) {
			words++
		}
	}
	return 2*words >= len(parts)
}

// looksLikeIdentifierPath reports whether v is a dotted or slashed name
// (pkg/apis/v1, config.v2.yaml, foo-bar-2) rather than a secret: every
// part between '.', '/', '-' or '_' is a lower-case word or a number.
func looksLikeIdentifierPath(v string) bool {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '/' || r == '-' || r == '_' || r == ':' })
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !wordLike(p) {
			return false
		}
	}
	return true
}

// wordLike reports whether p is a word, a number or a name such as
// base64url or v1: every run of letters in it is at least three long, or
// p is at most three bytes.
func wordLike(p string) bool {
	if len(p) <= 3 {
		return true
	}
	run := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && (p[i] >= 'a' && p[i] <= 'z' || p[i] >= 'A' && p[i] <= 'Z') {
			run++
			continue
		}
		if run > 0 && run < 3 {
			return false
		}
		run = 0
	}
	return true
}

// bareToken reports whether s[start:end], a run of token characters, is a
// generated secret standing on its own: long, mixing upper case, lower case
// and digits, changing class often (identifiers and paths do not), with
// the entropy of random text, not a hex digest, and not a public hash
// (sha256-..., data:...;base64,...).
func bareToken(s string, start, end int) bool {
	if start > 0 {
		c := s[start-1]
		if isWordByte(c) || c == '.' || c == '=' && start > 1 && isWordByte(s[start-2]) && publicHashBefore(s, start) {
			return false
		}
		if c >= utf8.RuneSelf {
			if r, _ := utf8.DecodeLastRuneInString(s[:start]); unicode.IsLetter(r) {
				return false
			}
		}
	}
	if end < len(s) {
		c := s[end]
		if isWordByte(c) || c == '.' && end+1 < len(s) && isWordByte(s[end+1]) {
			return false
		}
	}
	if publicHashBefore(s, start) {
		return false
	}
	if i := strings.IndexByte(s[start:min(end, start+8)], '-'); i > 0 && publicHashBefore(s, start+i+1) {
		return false
	}
	tok := strings.TrimRight(s[start:end], "=")
	var upper, lowerCase, digit, hexOnly = false, false, false, true
	for i := range len(tok) {
		c := tok[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lowerCase = true
		case c >= 'A' && c <= 'Z':
			upper = true
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			hexOnly = false
		}
	}
	if hexOnly || !(upper && lowerCase && digit) || !notPlaceholder(tok, "") {
		return false
	}

	// In a path (9090/jwt/v1/accounts/AC7P…) only the part that is not
	// made of words is judged.
	if parts := strings.Split(tok, "/"); len(parts) > 2 {
		words, longest := 0, ""
		for _, p := range parts {
			if p != "" && wordLike(p) && wordy(p) >= 0.5 {
				words++
			}
			if len(p) > len(longest) {
				longest = p
			}
		}
		if 2*words >= len(parts)-1 {
			tok = longest
		}
	}
	if len(tok) < 24 || wordy(tok) >= 0.4 || dashedName(tok) || !mixedClasses(tok) || inURL(s, start) || publicValueBefore(s, start) {
		return false
	}
	n := float64(min(len(tok), 64))
	return entropy(tok) >= 0.8*math.Log2(n) && float64(caseChanges(tok)) >= 0.3*float64(len(tok))
}

// mixedClasses reports whether s has upper case, lower case and digits.
func mixedClasses(s string) bool {
	var u, l, d bool
	for i := range len(s) {
		c := s[i]
		u = u || c >= 'A' && c <= 'Z'
		l = l || c >= 'a' && c <= 'z'
		d = d || c >= '0' && c <= '9'
	}
	return u && l && d
}

// inURL reports whether the text at start is inside a URL: the run of
// non-space characters it belongs to holds "://". Secrets in URLs are the
// rules' business (url-password, keys in query strings); the ids of
// videos, playlists and paths are not secrets.
func inURL(s string, start int) bool {
	i := start
	for i > 0 && start-i < 512 {
		c := s[i-1]
		if c == ' ' || c == '\n' || c == '\t' || c == '(' || c == '<' || c == '"' || c == '\'' || c == '`' {
			break
		}
		i--
	}
	return strings.Contains(s[i:start], "://")
}

// publicValueBefore reports whether a field that holds a public value
// (a signature, a digest, a nonce, a public key) names the token at start:
// "sig": "…", signature=…, fingerprint: ….
func publicValueBefore(s string, start int) bool {
	before := strings.ToLower(s[max(0, start-24):start])
	for _, w := range [...]string{"sig", "signature", "hash", "digest", "checksum", "fingerprint", "etag", "nonce", "commit", "public key", "public_key", "pubkey", "nkey"} {
		if i := strings.LastIndex(before, w); i >= 0 && !strings.ContainsAny(before[i:], "\n,;") {
			return true
		}
	}
	return false
}

// publicHashBefore reports whether the token at start follows a marker of
// a public hash or inline data: a digest algorithm or "base64,".
func publicHashBefore(s string, start int) bool {
	before := strings.ToLower(s[max(0, start-16):start])
	for _, m := range [...]string{"sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha512:", "base64,", "integrity=", "md5-"} {
		if strings.HasSuffix(before, m) {
			return true
		}
	}
	return false
}

// caseChanges counts the places where s moves between upper case, lower
// case, digits and other characters.
func caseChanges(s string) int {
	class := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 0
		case c >= 'A' && c <= 'Z':
			return 1
		case c >= '0' && c <= '9':
			return 2
		}
		return 3
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if class(s[i]) != class(s[i-1]) {
			n++
		}
	}
	return n
}

// mergeFindings sorts findings and drops those that overlap an earlier,
// longer one.
func mergeFindings(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortFunc(fs, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return (b.End - b.Start) - (a.End - a.Start)
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}
