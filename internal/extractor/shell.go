package extractor

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// command is a shell command line as the rules see it.
type command struct {
	line string   // as run
	show string   // for entries: without a leading cd and trailing output plumbing
	toks []string // fields of the main segment, quotes removed
	exe  string   // the program that does the work, wrappers (npx, sudo, python -m) skipped
	sub  string   // its subcommand, if its first argument is a word (docker <sub>, npm run <sub>)
}

// exitRE finds the exit code in a tool's output, as agent runtimes report
// it: "Exit code 1", "Exit code: 1", "(Command exited with code 1)",
// "exit status 1", "exitCode": 1, "returncode": 1.
var exitRE = regexp.MustCompile(`(?i)(?:\bexit(?:ed)?(?: with)?[ _]?(?:code|status)|\bexitcode|\breturn ?code)"?\s*[:=]?\s*(-?\d{1,3})\b`)

// timeoutRE finds a runtime's note that a command was killed for taking
// too long.
var timeoutRE = regexp.MustCompile(`(?i)\b(?:timed out|timeout exceeded|killed after \d+)`)

// failRE finds the failure markers of tools themselves (npm, pnpm,
// compilers, git, BuildKit, the shell) in output that carries no exit code.
// Markers that programs also write to their logs ("Error:", tracebacks)
// are left out: a command that prints a log is not a command that failed.
var failRE = regexp.MustCompile(`(?m)^\s*(?:npm ERR!|ERR_PNPM|ERROR:|error(?:\[\w+\])?:|fatal:|\S*: command not found|zsh:\d+: command not found)`)

// edgeLines returns the first two and the last three lines of s, where
// runtimes put exit codes and timeout notes.
func edgeLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) <= 5 {
		return strings.Join(lines, "\n")
	}
	return strings.Join(append(lines[:2:2], lines[len(lines)-3:]...), "\n")
}

// exitCode returns the exit code reported in output, or -1.
func exitCode(output string) int {
	ms := exitRE.FindAllStringSubmatch(edgeLines(output), -1)
	if len(ms) == 0 {
		return -1
	}
	n, err := strconv.Atoi(ms[len(ms)-1][1])
	if err != nil {
		return -1
	}
	return n
}

// failed reports whether a tool result says the call failed: the error
// flag, a non-zero exit code, a timeout note, or, when no exit code is
// reported, failure markers at the start of a line.
func failed(isError bool, output string) bool {
	if isError {
		return true
	}
	code := exitCode(output)
	if code > 0 || code < -1 {
		return true
	}
	if timeoutRE.MatchString(edgeLines(output)) {
		return true
	}
	return code == -1 && failRE.MatchString(output)
}

// parseCommand splits a command line into its main segment's fields and
// finds the program that does the work.
func parseCommand(line string) command {
	line = strings.TrimSpace(line)
	c := command{line: line, show: showCommand(line)}
	segs := segments(line)
	for len(segs) > 1 && isSetup(segs[0]) {
		segs = segs[1:]
	}
	if len(segs) == 0 {
		return c
	}
	c.toks = segs[0]
	toks := c.toks
	for len(toks) > 0 && (isAssignment(toks[0]) || slices.Contains([]string{"sudo", "time", "env", "nice", "nohup", "command", "exec"}, toks[0])) {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return c
	}
	exe := path.Base(toks[0])
	rest := toks[1:]
	skipFlags := func() {
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			rest = rest[1:]
		}
	}
	switch {
	case exe == "npx" || exe == "bunx" || exe == "pnpx":
		skipFlags()
		if len(rest) > 0 {
			exe, rest = path.Base(rest[0]), rest[1:]
		}
	case (exe == "pnpm" || exe == "yarn" || exe == "npm" || exe == "bun") && len(rest) > 0 && slices.Contains([]string{"exec", "dlx", "x"}, rest[0]),
		(exe == "uv" || exe == "poetry" || exe == "pipenv") && len(rest) > 0 && rest[0] == "run",
		exe == "bundle" && len(rest) > 0 && rest[0] == "exec":
		rest = rest[1:]
		skipFlags()
		if len(rest) > 0 {
			exe, rest = path.Base(rest[0]), rest[1:]
		}
	case strings.HasPrefix(exe, "python") && len(rest) > 1 && rest[0] == "-m":
		exe, rest = rest[1], rest[2:]
	}
	c.exe = exe
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		takes := valueFlag(rest[0])
		rest = rest[1:]
		if takes && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			rest = rest[1:]
		}
	}
	if len(rest) > 0 && subRE.MatchString(rest[0]) {
		c.sub = rest[0]
		if slices.Contains([]string{"npm", "pnpm", "yarn", "bun"}, exe) && (c.sub == "run" || c.sub == "run-script") && len(rest) > 1 {
			c.sub = rest[1]
		}
	}
	return c
}

// subRE matches a subcommand: a plain word. A first argument that is a
// path, a URL or a file name is not one (curl <url>, python manage.py).
var subRE = regexp.MustCompile(`^[a-z][a-z0-9_:-]*$`)

// valueFlag reports whether a flag that comes before a subcommand takes
// the next field as its value (kubectl -n ns get, git -C dir status, pnpm
// --filter pkg add).
func valueFlag(f string) bool {
	if strings.Contains(f, "=") {
		return false
	}
	switch f {
	case "-n", "--namespace", "--context", "--kubeconfig", "-C", "-f", "--file", "-p", "--project",
		"--profile", "--region", "-c", "--config", "-H", "--host", "--filter", "-F", "-w", "--workdir",
		"--cwd", "--prefix", "--dir", "--chdir", "-m", "--manifest-path", "-L", "--log-level", "-s", "--subscription":
		return true
	}
	return false
}

// isSetup reports whether a segment only prepares the shell (cd, export,
// source, set), so that the next segment is the main one.
func isSetup(seg []string) bool {
	if len(seg) == 0 {
		return true
	}
	switch seg[0] {
	case "cd", "pushd", "export", "source", ".", "set", "unset":
		return true
	}
	return isAssignment(seg[0]) && len(seg) == 1
}

// isAssignment reports whether tok is NAME=value.
func isAssignment(tok string) bool {
	i := strings.IndexByte(tok, '=')
	if i <= 0 {
		return false
	}
	for j := range i {
		c := tok[j]
		if !(isWordByte(c)) {
			return false
		}
	}
	return !isDigit(tok[0])
}

// segments splits a command line at &&, ||, ;, | and newlines outside
// quotes and splits each segment into fields, quotes removed.
func segments(line string) [][]string {
	var (
		segs  [][]string
		cur   []string
		tok   strings.Builder
		inTok bool
		quote byte
	)
	endTok := func() {
		if inTok {
			cur = append(cur, tok.String())
			tok.Reset()
			inTok = false
		}
	}
	endSeg := func() {
		endTok()
		if len(cur) > 0 {
			segs = append(segs, cur)
		}
		cur = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				tok.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inTok = c, true
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				tok.WriteByte(line[i])
				inTok = true
			}
		case c == ' ' || c == '\t':
			endTok()
		case c == ';' || c == '\n' || c == '|' || c == '&' && i+1 < len(line) && line[i+1] == '&':
			if (c == '|' || c == '&') && i+1 < len(line) && line[i+1] == c {
				i++
			}
			endSeg()
		default:
			tok.WriteByte(c)
			inTok = true
		}
	}
	endSeg()
	return segs
}

// plumbingRE matches output plumbing at the end of a command line, which
// entries leave out: 2>&1, | tail -n 20, | head -50, | cat, | less.
var plumbingRE = regexp.MustCompile(`(?:\s*(?:2>&1|\|\s*(?:tail|head)(?:\s+-n)?(?:\s+-?\d+)?|\|\s*(?:cat|less|more)))+\s*$`)

// cdPrefixRE matches a leading "cd dir &&".
var cdPrefixRE = regexp.MustCompile(`^cd\s+\S+\s*&&\s*`)

// showCommand returns a command line as entries quote it.
func showCommand(line string) string {
	s := strings.Join(strings.Fields(line), " ")
	s = cdPrefixRE.ReplaceAllString(s, "")
	s = plumbingRE.ReplaceAllString(s, "")
	return s
}

// readOnly reports whether a program only looks at things (files,
// processes, the repository): its runs teach nothing on their own, and its
// non-zero exits usually mean "nothing found" rather than a mistake.
func readOnly(exe string) bool {
	switch exe {
	case "ls", "cat", "head", "tail", "less", "more", "pwd", "echo", "printf", "cd", "which",
		"whereis", "type", "wc", "tree", "file", "stat", "du", "df", "true", "false", "clear",
		"whoami", "date", "sleep", "env", "printenv", "id", "uname", "hostname", "grep", "egrep",
		"rg", "ag", "ack", "find", "fd", "diff", "cmp", "test", "[", "jq", "sed", "awk", "sort",
		"uniq", "cut", "tr", "man", "history", "ps", "top", "lsof", "open", "xdg-open", "code",
		"vim", "nano":
		return true
	}
	return false
}

// trivial reports whether a program is too plain to be worth an entry even
// when a user confirms its output.
func trivial(exe string) bool {
	switch exe {
	case "ls", "cat", "head", "tail", "less", "more", "pwd", "echo", "printf", "cd", "true",
		"false", "clear", "sleep", "date", "whoami", "open", "xdg-open", "code", "vim", "nano":
		return true
	}
	return false
}

// gitReadOnly reports whether a git subcommand only looks.
func gitReadOnly(sub string) bool {
	switch sub {
	case "status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame", "config":
		return true
	}
	return false
}

// infoRE matches subcommands that only look: at the program itself
// (version, help) or at the state of things (kubectl get, docker logs,
// npm ls).
var infoRE = regexp.MustCompile(`^(?:--version|-v|-V|--help|-h|version|help|info|doctor|--list|list|ls|status|show|whoami|get|describe|logs?|inspect|ps|images|top|explain|view|search|outdated|why|audit)$`)

// isReadOnly reports whether c only looks at things.
func (c command) isReadOnly() bool {
	if c.exe == "" || readOnly(c.exe) {
		return true
	}
	if c.exe == "git" && gitReadOnly(c.sub) {
		return true
	}
	return infoRE.MatchString(c.sub) && !(c.sub == "get" && (c.exe == "go" || c.exe == "apt" || c.exe == "apt-get"))
}

// editRE matches shell commands that change files in place.
var editRE = regexp.MustCompile(`(?:^|[\s;&|])(?:sed\s+(?:-\w+\s+)*-i|perl\s+-\w*i|tee\b|patch\b|git\s+apply\b|git\s+checkout\s+--\s)|(?:^|[^\d&>])>>?\s*[^\s&>/]|<<-?\s*['"]?\w+`)

// isEdit reports whether c changes files' content (sed -i, tee, a
// redirect into a file, a heredoc, patch).
func (c command) isEdit() bool { return editRE.MatchString(c.line) }

// flagsAdded returns the fields of b's main segment that a's lacks, in b's
// order, and whether one of them is a flag.
func flagsAdded(a, b command) ([]string, bool) {
	have := map[string]int{}
	for _, t := range a.toks {
		have[t]++
	}
	var added []string
	flag := false
	for _, t := range b.toks {
		if have[t] > 0 {
			have[t]--
			continue
		}
		added = append(added, t)
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			flag = true
		}
	}
	return added, flag
}

// related reports whether b is another attempt at what a tried: the same
// program and subcommand; the same arguments with another program (python
// and python3, npm and pnpm); or a program that a's command or output
// names (npm test runs vitest; docker-compose and docker compose).
func related(a, b command, aOutput string) bool {
	if a.exe == "" || b.exe == "" {
		return false
	}
	if a.exe == b.exe {
		return a.sub == b.sub || a.sub == "" || b.sub == ""
	}
	if len(a.toks) > 1 && slices.Equal(a.toks[1:], b.toks[1:]) {
		return true
	}
	if len(b.exe) < 3 {
		return false
	}
	out := aOutput
	if len(out) > 8000 {
		out = out[:4000] + "\n" + out[len(out)-4000:]
	}
	return containsWord(a.line, b.exe) || containsWord(out, b.exe)
}
