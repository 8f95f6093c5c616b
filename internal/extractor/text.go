package extractor

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fenceRE matches a fenced code block.
var fenceRE = regexp.MustCompile("(?s)```.*?(?:```|$)")

// ansiRE matches terminal escape sequences.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// harnessRE matches what agent runtimes insert into user messages: a
// channel envelope at the start ("[Telegram Maria +2m 2026-03-02 10:42]")
// and tagged blocks such as Claude Code's system reminders and slash
// command echoes.
var harnessRE = regexp.MustCompile(`(?s)^\s*\[[^\]\n]{1,120}\]\s*|<(?:system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|user-prompt-submit-hook|ide_selection|ide_opened_file)>.*?</(?:system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|user-prompt-submit-hook|ide_selection|ide_opened_file)>`)

// sentences splits prose into sentences: code blocks, quoted lines and
// what runtimes insert are left out, lines are split at '.', '!' or '?'
// followed by a space. Sentences keep their final punctuation.
func sentences(text string) []string {
	text = harnessRE.ReplaceAllString(text, "\n")
	text = fenceRE.ReplaceAllString(text, "\n")
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ">") || strings.HasPrefix(line, "$ ") {
			continue
		}
		start := 0
		for i := 0; i < len(line)-1; i++ {
			if (line[i] == '.' || line[i] == '!' || line[i] == '?') && line[i+1] == ' ' {
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// clip shortens s to at most n bytes at a word boundary, adding "…".
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > n/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

// sentence makes s read as a sentence: trimmed, the first letter
// upper-case unless the first word is a name from code (go.sum, npm_config,
// v2), ending in '.', '!' or '?'.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	first, _, _ := strings.Cut(s, " ")
	if r, n := utf8.DecodeRuneInString(s); unicode.IsLower(r) && !strings.ContainsAny(first, "./_@`0123456789") {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	return terminate(s)
}

// terminate makes s end like a sentence, in '.', '!', '?' or, when it was
// cut short, '…'.
func terminate(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, "…") {
		return s
	}
	switch s[len(s)-1] {
	case '.', '!', '?', '`', ')', '"':
		if strings.HasSuffix(s, "`") || strings.HasSuffix(s, ")") || strings.HasSuffix(s, `"`) {
			return s + "."
		}
		return s
	case ',', ';', ':':
		return s[:len(s)-1] + "."
	}
	return s + "."
}

// words returns the lower-case words of s (letters and digits).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// containsWord reports whether s contains w as a whole word (not inside a
// longer word of letters, digits and '_'), case-insensitively: "docker" is
// a word of "docker-compose up".
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	ls, lw := strings.ToLower(s), strings.ToLower(w)
	for i := 0; ; {
		j := strings.Index(ls[i:], lw)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(lw)
		before := at == 0 || !isWordByte(ls[at-1])
		after := end == len(ls) || !isWordByte(ls[end])
		if before && after {
			return true
		}
		i = at + 1
	}
}

// errorLineRE finds the line of an output that says what went wrong.
var errorLineRE = regexp.MustCompile(`(?i)error|err!|fatal|failed|failure|denied|not found|cannot|can't|could not|unable|unknown|invalid|refused|timed out|no such|enoent|eacces|eaddrinuse|panic|exception|mismatch|not supported|unsupported|incompatible|conflict|rejected|missing`)

// wrapperLineRE matches the lines a runtime adds around a command's output.
var wrapperLineRE = regexp.MustCompile(`(?i)^\(?(?:command )?(?:exit(?:ed)?(?: with)? ?(?:code|status)|wall time|output:|process exited)`)

// buildStepRE matches the step prefix of BuildKit's output ("#7 0.412 ").
var buildStepRE = regexp.MustCompile(`^#\d+\s+(?:\d+\.\d+\s+)?`)

// errorLine returns the line of a failed command's output that best says
// what went wrong, clipped: the first line with an error word, else the
// last line with text.
func errorLine(output string) string {
	output = ansiRE.ReplaceAllString(output, "")
	var doc map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(output)), &doc) == nil {
		for _, k := range []string{"error", "message", "detail", "msg"} {
			if v, ok := doc[k].(string); ok && strings.TrimSpace(v) != "" {
				return clip(v, 160)
			}
		}
	}
	var last string
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || wrapperLineRE.MatchString(line) {
			continue
		}
		line = buildStepRE.ReplaceAllString(line, "")
		if errorLineRE.MatchString(line) {
			return clip(strings.Trim(line, "() "), 160)
		}
		last = line
	}
	return clip(last, 160)
}

// significant reports whether w can tie a plan step to a command: words
// too short or too common cannot.
func significant(w string) bool {
	if len(w) < 3 {
		return false
	}
	switch w {
	case "the", "and", "then", "with", "for", "from", "into", "that", "this", "using", "use",
		"run", "make", "sure", "step", "first", "next", "finally", "new", "all", "check", "our",
		"its", "out", "are", "was", "has", "not", "you", "your", "them", "they", "any", "each",
		"once", "again", "also", "there", "here", "when", "after", "before", "latest":
		return false
	}
	return true
}

// overlap counts the significant words of a that match a word of b: equal,
// sharing a prefix of at least five letters (migrate, migrations), or
// inside a long word of b (load in elasticloadbalancing).
func overlap(a, b []string) int {
	n := 0
	for _, x := range a {
		if !significant(x) {
			continue
		}
		for _, y := range b {
			if x == y || len(x) >= 5 && len(y) >= 5 && x[:5] == y[:5] || len(x) >= 4 && len(y) >= 8 && strings.Contains(y, x) {
				n++
				break
			}
		}
	}
	return n
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordByte reports whether c is an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}
