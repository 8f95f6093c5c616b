package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/knowhub/knowhub/internal/pii"
	"github.com/knowhub/knowhub/internal/redact"
)

// PrivacyMode says how much of a transcript is kept.
type PrivacyMode string

// Privacy modes. Strict is the default: personal data is replaced before
// anything is persisted or sent to a model. Relaxed keeps content as sent,
// except secrets, which are always redacted.
const (
	Strict  PrivacyMode = "strict"
	Relaxed PrivacyMode = "relaxed"
)

// ParsePrivacyMode reads a configured mode; empty means Strict.
func ParsePrivacyMode(s string) (PrivacyMode, error) {
	switch PrivacyMode(strings.ToLower(strings.TrimSpace(s))) {
	case "", Strict:
		return Strict, nil
	case Relaxed:
		return Relaxed, nil
	}
	return "", fmt.Errorf("unknown privacy mode %q (strict, relaxed)", s)
}

// Placeholders that strict mode puts in place of personal data. Secrets
// become the redactor's "[REDACTED:<kind>]".
const (
	EmailPlaceholder = "[email]"
	PhonePlaceholder = "[phone]"
	IPPlaceholder    = "[ip]"
)

// Redactor replaces secrets in text; *redact.Redactor is one.
type Redactor interface {
	String(s string) string
}

// The patterns of strict mode. Go's regexp has no look-behind, so each
// pattern captures the character before the match (or the start) in its
// first group and the replacement keeps it.
var (
	// homeRE matches a home directory: /Users/<name>, /home/<name>,
	// /var/home/<name>, C:\Users\<name> (also with doubled backslashes, as
	// in JSON or escaped output, or with forward slashes). The path must not
	// follow a word character, '.', '-', '/' or '~', so URL paths such as
	// https://example.com/home/about are left alone; file:// URLs are
	// handled.
	homeRE = regexp.MustCompile(`(^|[^\w.\-/~]|file:///?)((?:/var)?/(?:Users|home)/|[A-Za-z]:(?:\\\\|\\|/)(?:Users|Documents and Settings)(?:\\\\|\\|/))([A-Za-z0-9._-]+)`)
	// emailRE matches an e-mail address with a dotted domain and an
	// alphabetic top-level domain, so "pnpm@8.15.0" is not one.
	emailRE = regexp.MustCompile(`(^|[^\w.%+-])([A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24})\b`)
	// ipv4RE matches a dotted quad of numbers up to 255; the check in
	// replaceIPv4 rejects those that are part of a longer dotted run
	// (version numbers such as 1.2.3.4.5).
	ipv4RE = regexp.MustCompile(`(^|[^\w.])((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})\b`)
	// ipv6RE matches candidate IPv6 addresses, also after a label and a
	// colon (ip:2001:db8::1); replaceIPv6 keeps only those that netip parses and that look like addresses rather than C++ or
	// Rust paths ("a::b") or clock times ("12:30:45").
	ipv6RE = regexp.MustCompile(`(^|[^\w:.]|[A-Za-z]:)((?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?:%[0-9A-Za-z]+)?)`)
	// phoneRE matches phone numbers: international (+ and 8–15 digits,
	// groups separated by spaces, dots or dashes), North American with
	// parentheses or separators, and "tel:" links. Bare digit runs are not
	// phone numbers here: they are ids, timestamps and ports.
	phoneRE = regexp.MustCompile(`(^|[^\w+.\-/])(\+\d{1,3}(?:[ .\-]?\(\d{1,4}\))?(?:[ .\-]?\d{1,5}){2,6}|\(\d{3}\)[ .\-]?\d{3}[ .\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4}|tel:\+?[\d\-.]{7,20})`)
)

// Sanitizer removes secrets and, in strict mode, personal data from
// transcripts and text. It is immutable and safe for concurrent use when
// its redactor is.
type Sanitizer struct {
	red Redactor
}

// NewSanitizer returns a sanitizer that redacts secrets with red. It panics
// if red is nil: a sanitizer that cannot redact secrets must not exist.
func NewSanitizer(red Redactor) *Sanitizer {
	if red == nil {
		panic("extractor: NewSanitizer needs a redactor")
	}
	return &Sanitizer{red: red}
}

// Text sanitizes one text. Secrets are redacted in every mode: those the
// redactor finds, then those without assignment context (redact.Prose). In strict
// mode (and for any mode but Relaxed) home directories become "~" (the rest
// of the path is kept: /home/alice/src/app becomes ~/src/app), e-mail
// addresses become [email], IPv4 and IPv6 addresses [ip] (loopback and
// unspecified addresses are kept; version numbers such as 1.2.3 or 2026.7.1
// are not addresses) and phone numbers [phone]. Text is idempotent.
func (s *Sanitizer) Text(text string, mode PrivacyMode) string {
	if text == "" {
		return text
	}
	text = redact.Prose(s.red.String(text))
	if mode == Relaxed {
		return text
	}
	// Each pattern runs only over text that holds the character it cannot
	// match without.
	if strings.Contains(text, "home") || strings.Contains(text, "Users") || strings.Contains(text, "Documents and Settings") {
		text = replaceHome(text)
	}
	if strings.IndexByte(text, '@') >= 0 {
		text = emailRE.ReplaceAllStringFunc(text, replaceEmail)
	}
	if strings.Contains(text, ":") {
		text = replaceAll(ipv6RE, text, replaceIPv6)
	}
	if strings.IndexByte(text, '.') >= 0 {
		text = replaceAll(ipv4RE, text, replaceIPv4)
	}
	if strings.ContainsAny(text, "+(-.") || strings.Contains(text, "tel:") {
		text = replaceAll(phoneRE, text, replacePhone)
	}
	text = pii.Replace(text, pii.Phones(text), PhonePlaceholder)
	return text
}

// replaceHome replaces the home directories in text by "~", keeping what
// precedes them and the rest of the path. Shared folders (/Users/Shared,
// C:\Users\Public, Default, All Users) are not anybody's home.
func replaceHome(text string) string {
	idx := homeRE.FindAllStringSubmatchIndex(text, -1)
	if idx == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		switch text[m[6]:m[7]] {
		case "Shared", "Public", "Default", "All Users", "Default User":
			continue
		}
		b.WriteString(text[last:m[4]])
		b.WriteByte('~')
		last = m[7]
	}
	b.WriteString(text[last:])
	return b.String()
}

// replaceAll replaces, in each match of re, the second group by what keep
// returns for it; keep sees the text after the match to judge the context.
func replaceAll(re *regexp.Regexp, text string, keep func(m, after string) string) string {
	idx := re.FindAllStringSubmatchIndex(text, -1)
	if idx == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		start, end := m[4], m[5]
		b.WriteString(text[last:start])
		b.WriteString(keep(text[start:end], text[end:]))
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// replaceEmail keeps the first group of an e-mail match and replaces the
// address, except git@host, which is an SSH remote and not a person.
func replaceEmail(m string) string {
	sub := emailRE.FindStringSubmatch(m)
	if strings.HasPrefix(strings.ToLower(sub[2]), "git@") {
		return m
	}
	return sub[1] + EmailPlaceholder
}

// replaceIPv4 replaces an IPv4 address unless it continues as a dotted
// number (1.2.3.4.5) or is loopback or unspecified.
func replaceIPv4(m, after string) string {
	if len(after) >= 2 && after[0] == '.' && isDigit(after[1]) {
		return m
	}
	a, err := netip.ParseAddr(m)
	if err != nil || a.IsLoopback() || a.IsUnspecified() {
		return m
	}
	return IPPlaceholder
}

// replaceIPv6 replaces an IPv6 address. A candidate must parse, must not be
// loopback or unspecified, and must either have at least three groups or
// contain a digit and two groups: "a::b", "std::vec" and the Python slice
// "[::2]" stay. An address followed by more groups (a fingerprint such as
// 43:51:43:a1:b5:fc:8b:b7:0a:3a) stays too.
func replaceIPv6(m, after string) string {
	cand, rest := m, ""
	if _, err := netip.ParseAddr(cand); err != nil {
		if t := strings.TrimRight(cand, ":"); t != cand {
			cand, rest = t, cand[len(t):]
		}
	}
	a, err := netip.ParseAddr(cand)
	if err != nil || !a.Is6() || a.IsLoopback() || a.IsUnspecified() {
		return m
	}
	groups := 0
	for g := range strings.SplitSeq(strings.SplitN(cand, "%", 2)[0], ":") {
		if g != "" {
			groups++
		}
	}
	if groups < 2 || groups < 3 && !strings.ContainsAny(cand, "0123456789") {
		return m
	}
	if rest == "" && len(after) > 0 && (isWordByte(after[0]) || after[0] == ':' ||
		after[0] == '.' && len(after) > 1 && isWordByte(after[1])) {
		return m
	}
	return IPPlaceholder + rest
}

// replacePhone replaces a phone number unless it continues as a longer
// number or has too few or too many digits.
func replacePhone(m, after string) string {
	if len(after) > 0 && (isDigit(after[0]) || isWordByte(after[0])) {
		return m
	}
	if len(after) >= 2 && (after[0] == '.' || after[0] == '-') && isDigit(after[1]) {
		return m
	}
	digits := 0
	for i := range len(m) {
		if isDigit(m[i]) {
			digits++
		}
	}
	if digits < 7 || digits > 15 {
		return m
	}
	return PhonePlaceholder
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordByte reports whether c is an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// Transcript returns a sanitized copy of t: system and developer messages
// are dropped (they hold the operator's prompt, not the session), and every
// text, tool input string and tool output goes through Text. Tool names and
// call ids are kept. Of the attribution, agent_id is kept as sent (it names
// the agent and scopes what is extracted), while submitted_by and
// session_key go through Text too: gateways put e-mail addresses and the
// phone numbers of chat peers there. t is not modified.
func (s *Sanitizer) Transcript(t *Transcript, mode PrivacyMode) *Transcript {
	out := &Transcript{
		AgentID:     t.AgentID,
		SubmittedBy: s.Text(t.SubmittedBy, mode),
		SessionKey:  s.Text(t.SessionKey, mode),
		Trigger:     t.Trigger,
		Scopes:      append([]string(nil), t.Scopes...),
		Messages:    make([]Message, 0, len(t.Messages)),
	}
	for _, m := range t.Messages {
		if m.Role == RoleSystem || m.Role == RoleDeveloper {
			continue
		}
		parts := make([]Part, len(m.Content))
		for i, p := range m.Content {
			p.Text = s.Text(p.Text, mode)
			p.Output = s.Text(p.Output, mode)
			p.Input = s.json(p.Input, mode)
			parts[i] = p
		}
		out.Messages = append(out.Messages, Message{Role: m.Role, Content: parts})
	}
	return out
}

// json sanitizes every string (keys included) of a JSON document. A
// document that does not decode is sanitized as text and kept as a JSON
// string, so nothing unsanitized survives either way.
func (s *Sanitizer) json(raw json.RawMessage, mode PrivacyMode) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b, _ := json.Marshal(s.Text(string(raw), mode))
		return b
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.value(v, mode)); err != nil {
		out, _ := json.Marshal(s.Text(string(raw), mode))
		return out
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// value sanitizes the strings of a decoded JSON value.
func (s *Sanitizer) value(v any, mode PrivacyMode) any {
	switch v := v.(type) {
	case string:
		return s.Text(v, mode)
	case []any:
		for i := range v {
			v[i] = s.value(v[i], mode)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[s.Text(k, mode)] = s.value(x, mode)
		}
		return out
	}
	return v
}

// ID returns the transcript id: a hash of the session key and the messages,
// 32 hex digits. Call it on the sanitized transcript: the same session
// sent twice with the same content gets the same id whatever its trigger,
// agent_id or submitted_by, so it is extracted once.
func ID(t *Transcript) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(t.SessionKey)))
	h.Write(n[:])
	h.Write([]byte(t.SessionKey))
	msgs, err := json.Marshal(t.Messages)
	if err != nil {
		// Messages hold only strings, bools and compact JSON inputs that
		// Parse or the sanitizer produced; they always marshal.
		panic(fmt.Sprintf("extractor: marshal messages: %v", err))
	}
	h.Write(msgs)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
