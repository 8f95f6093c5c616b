package extractor

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/transcript"
)

// Rules is the built-in, offline extractor. It reads a sanitized
// transcript and keeps only what one of its rules recognizes, so that
// chit-chat, sessions that only read files and failures that were never
// fixed yield nothing:
//
//   - remember: the user says "remember that …", "keep in mind …", "for
//     future reference …" or "don't forget to …" (definition, or usecase
//     for a thing to do).
//   - preference: the user states a standing preference or a correction
//     ("always use pnpm, never npm", "don't touch prod", "from now on …",
//     "we use …", "use X instead of Y") (user_profile).
//   - fix: a shell command failed and another attempt succeeded with no
//     file edited in between: a changed command (new flags or another
//     program) or the same command after one or two other commands
//     (strategy; tool too when the fix was a flag).
//   - plan: a numbered list of at least three steps, from the user or the
//     agent, that the agent then carried out with successful commands,
//     ending without an unfixed failure (plan).
//   - retry: a tool call that failed and succeeded again with changed
//     settings, its targets (path, query, url, …) unchanged (tool).
//   - confirmed: a command with flags whose result the user confirmed
//     ("perfect", "that worked") (tool).
//
// Precision comes first; a rule would rather miss an entry than make junk:
//
//   - Only the user's own words count as preferences and reminders, never
//     the agent's, nor code blocks, quoted lines, questions or what the
//     runtime inserts (channel envelopes, system reminders). Remarks are
//     told from instructions by the word that follows ("always happy to",
//     "never used", "don't worry", "never mind" are remarks), and one-off
//     instructions ("don't run it yet", "for now", "in this PR") are left
//     out.
//   - Commands that only look (ls, cat, grep, find, git status, kubectl
//     get, --version) are never a failure to learn from nor a fix: their
//     non-zero exits mean "nothing found".
//   - A fix must follow its failure with no file edited in between (else
//     the edit was the fix), must change the command by a flag or the
//     program (not by narrowing its arguments), and a test run that failed
//     on assertions is never "fixed" by another command. The same command
//     succeeding again after nothing (a flaky retry) or after more than two
//     other commands (no clear cause) teaches nothing.
//   - A confirmation counts only for a command with flags, right after the
//     user's request, with no edit or failure in between.
//
// Rules is stateless and safe for concurrent use.
type Rules struct{}

// NewRules returns the built-in extractor.
func NewRules() *Rules { return &Rules{} }

// Name returns "rules".
func (*Rules) Name() string { return "rules" }

// Version returns the version of the rule set; it changes whenever the
// same transcript may yield other entries.
func (*Rules) Version() string { return "1" }

// Rule ranks: the order of candidates with the same score.
const (
	rankRemember = iota
	rankPreference
	rankFix
	rankPlan
	rankRetry
	rankConfirmed
)

// Limits on what the rules quote.
const (
	maxCommandBytes = 240
	maxClauseWords  = 40
)

// found is a candidate with its place in the ranking.
type found struct {
	Candidate
	rank, pos int
}

// Extract applies the rules to a sanitized transcript and returns at most
// max candidates (DefaultMaxEntries if max is not positive), highest score
// first.
func (r *Rules) Extract(ctx context.Context, t *transcript.Transcript, max int) ([]Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultMaxEntries
	}
	s := newSession(t)
	var all []found
	all = append(all, s.remembered()...)
	all = append(all, s.preferences()...)
	fixes, used := s.fixes()
	all = append(all, fixes...)
	all = append(all, s.plans()...)
	all = append(all, s.retries()...)
	all = append(all, s.confirmed(used)...)
	slices.SortStableFunc(all, func(a, b found) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.rank, b.rank), cmp.Compare(a.pos, b.pos))
	})
	var out []Candidate
	seen := map[string]bool{}
	for _, f := range all {
		key := kb.Normalize(f.Content)
		if seen[key] {
			continue
		}
		seen[key] = true
		f.Task = sentence(f.Task)
		out = append(out, f.Candidate)
		if len(out) == max {
			break
		}
	}
	return out, nil
}

// step is a tool call and its result.
type step struct {
	pos    int // index of the call in session.events
	msg    int // message holding the call
	resMsg int // message holding the result
	name   string
	input  map[string]any
	cmd    *command // nil unless a shell call
	output string
	done   bool // the result arrived
	failed bool
	edit   bool // the call changed files or other state by hand
}

// event is a text turn of the user or the assistant, or a tool call.
type event struct {
	msg  int
	role string
	text string
	step *step
}

// session is a transcript laid out for the rules.
type session struct {
	events []event
	steps  []*step
}

// newSession lays out a transcript: text turns and tool calls in order,
// each call paired with its result by id, or else with the next result.
func newSession(t *transcript.Transcript) *session {
	s := &session{}
	byID := map[string]*step{}
	var pending []*step
	for i, m := range t.Messages {
		for _, p := range m.Content {
			switch p.Type {
			case transcript.PartText:
				if (m.Role == transcript.RoleUser || m.Role == transcript.RoleAssistant) && strings.TrimSpace(p.Text) != "" {
					s.events = append(s.events, event{msg: i, role: m.Role, text: p.Text})
				}
			case transcript.PartToolCall:
				st := &step{pos: len(s.events), msg: i, resMsg: i, name: p.Name}
				_ = json.Unmarshal(p.Input, &st.input)
				if line := shellLine(p.Name, st.input); line != "" {
					c := parseCommand(line)
					st.cmd = &c
					st.edit = c.isEdit()
				} else {
					st.edit = mutates(p.Name)
				}
				s.events = append(s.events, event{msg: i, role: m.Role, step: st})
				s.steps = append(s.steps, st)
				pending = append(pending, st)
				if p.ID != "" {
					byID[p.ID] = st
				}
			case transcript.PartToolResult:
				st := byID[p.ID]
				if st == nil || st.done {
					st = nil
					for _, q := range pending {
						if !q.done {
							st = q
							break
						}
					}
				}
				if st == nil {
					continue
				}
				st.done, st.resMsg, st.output = true, i, p.Output
				if st.cmd != nil {
					st.failed = failed(p.IsError, p.Output)
				} else {
					st.failed = p.IsError
				}
			}
		}
	}
	return s
}

// shellLine returns the command line of a shell tool call, or "". A call
// is a shell call when its tool's name says so (bash, exec, shell,
// terminal, run_command, …) and its input has a command: a string, or an
// argv such as ["bash", "-lc", "npm test"].
func shellLine(name string, input map[string]any) string {
	n := strings.ToLower(name)
	if !slices.ContainsFunc([]string{"bash", "exec", "shell", "terminal", "command", "run_cmd", "sh"}, func(k string) bool {
		return n == k || strings.Contains(n, k) && k != "sh"
	}) {
		return ""
	}
	for _, k := range []string{"command", "cmd", "script"} {
		switch v := input[k].(type) {
		case string:
			return v
		case []any:
			var argv []string
			for _, a := range v {
				if s, ok := a.(string); ok {
					argv = append(argv, s)
				}
			}
			if len(argv) >= 3 && slices.Contains([]string{"bash", "sh", "zsh"}, argv[0]) && strings.HasPrefix(argv[1], "-") && strings.Contains(argv[1], "c") {
				return argv[2]
			}
			return strings.Join(argv, " ")
		}
	}
	return ""
}

// mutates reports whether a tool, by its name, changes files or other
// state (edit, write, apply_patch, create_issue, …).
func mutates(name string) bool {
	n := strings.ToLower(name)
	for _, k := range []string{"edit", "write", "patch", "replace", "insert", "create", "delete", "remove", "move", "rename", "apply", "update", "set"} {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

// clauseStart is where a stated preference or reminder may begin: the
// start of a sentence, after punctuation, or after a filler word.
const clauseStart = `(?:^|[,;:\])]\s*|\b(?:and|but|so|also|please|oh|ok|okay|btw|no|nope|hey|actually)\s+)(?:please\s+)?`

// rememberRE finds an explicit request to remember something.
var rememberRE = regexp.MustCompile(`(?i)` + clauseStart + `(remember|keep in mind|for future reference|note for the future|don'?t forget|do not forget)(?:\s+that\b|\s*[:,]|\s+(to)\b)\s*(.*)$`)

// copulaRE splits a remembered fact into its subject and the rest.
var copulaRE = regexp.MustCompile(`(?i)^(.{3,60}?)\s+(?:(?:only|always|never|still|now|also|usually)\s+)?(?:is|are|was|were|lives?|runs?|listens|sits|uses|needs|requires|has|have|must|should|can|cannot|can't|won't|will|expects?|means|points|belongs|accepts|stores|holds|contains|takes|goes|comes|lies|stays)\b`)

// usecaseRE recognizes a remembered thing to do rather than a fact.
var usecaseRE = regexp.MustCompile("(?i)^(?:when|whenever|before|after|if|to|always|never|run|use|make sure)\\b")

// profileRE recognizes a remembered preference of the user.
var profileRE = regexp.MustCompile(`(?i)^(?:i|we)\s+(?:prefer|like|want|use|always|never|hate|don'?t|do not)\b|\bmy preference\b`)

// subordinateRE splits "when deploying, run X" into the situation and the
// thing to do.
var subordinateRE = regexp.MustCompile(`(?i)^((?:when|whenever|before|after|if)\b[^,]{3,80}),\s*(.+)$`)

// remembered applies the remember rule to the user's sentences.
func (s *session) remembered() []found {
	var out []found
	for k, e := range s.events {
		if e.role != transcript.RoleUser || e.step != nil {
			continue
		}
		for _, sent := range sentences(e.text) {
			if strings.HasSuffix(sent, "?") {
				continue
			}
			m := rememberRE.FindStringSubmatch(sent)
			if m == nil {
				continue
			}
			clause := strings.TrimSpace(strings.TrimRight(m[3], " ."))
			if n := len(words(clause)); n < 3 || n > maxClauseWords {
				continue
			}
			c := Candidate{Score: 4, Evidence: fmt.Sprintf("message %d (user)", e.msg)}
			switch {
			case profileRE.MatchString(clause):
				c.Task = "A standing preference of this user"
				c.Content = sentence(clause)
				c.Types = []string{kb.TypeUserProfile}
			case m[2] != "" || usecaseRE.MatchString(clause):
				c.Types = []string{kb.TypeUsecase}
				c.Content = sentence(clause)
				if sub := subordinateRE.FindStringSubmatch(clause); sub != nil {
					c.Task = sentence(sub[1])
					c.Content = sentence(sub[2])
				} else if r := requestSentence(strings.Replace(e.text, sent, "", 1)); r != "" {
					c.Task = r
				} else {
					c.Task = "A routine the user asked the agent to remember"
				}
			default:
				c.Types = []string{kb.TypeDefinition}
				c.Task = "A fact the user asked the agent to remember"
				if sub := copulaRE.FindStringSubmatch(clause); sub != nil {
					c.Task = "What to know about " + strings.TrimSpace(sub[1])
				}
				c.Content = sentence(clause)
			}
			out = append(out, found{Candidate: c, rank: rankRemember, pos: k})
		}
	}
	return out
}

// prefRE finds a stated preference or correction and the rest of its
// clause.
var prefRE = regexp.MustCompile(`(?i)` + clauseStart + `(always|never|from now on|going forward|moving forward|in the future|in future|henceforth|don'?t|do not|dont|stop|(?:i|we)(?:'d| would)? (?:prefer|rather)|(?:i|we) (?:only use|always|never|don'?t use|do not use|use)|use)\b\s*,?\s*(.*)$`)

// conditionRE matches a sentence that starts with a condition.
var conditionRE = regexp.MustCompile(`(?i)^(?:if|when|whenever|before|after|unless|once)\b`)

// insteadRE is the rest of "use X instead of Y".
var insteadRE = regexp.MustCompile(`(?i)^\S+(?:\s+\S+){0,3}?,?\s+(?:instead of|rather than|not|over)\s+\S+`)

// oneOffRE marks an instruction for this task only, not a standing one.
var oneOffRE = regexp.MustCompile(`(?i)\b(?:yet|for now|right now|this time|today|tonight|at the moment|until|in this (?:pr|commit|file|branch|function|session|case|one))\b`)

// correctionRE marks a message that corrects the agent.
var correctionRE = regexp.MustCompile(`(?i)^\W*(?:no|nope|wrong|stop|don'?t|not like that|that'?s (?:wrong|not)|actually)\b`)

// notAction reports whether the word after "always" or "never" shows a
// statement rather than an instruction ("always happy to", "never worked").
func notAction(w string) bool {
	switch w {
	case "a", "an", "the", "be", "been", "was", "is", "are", "were", "happy", "glad", "fun", "nice",
		"good", "great", "so", "too", "very", "knew", "know", "thought", "mind", "seems", "seem",
		"works", "work", "fails", "forget", "remember", "said", "says", "i", "we", "you", "it",
		"that", "this", "there", "gets", "got", "had", "has", "have", "get", "again", "ever":
		return true
	}
	if strings.HasSuffix(w, "ed") && len(w) >= 4 {
		switch w {
		case "need", "embed", "feed", "proceed", "exceed", "succeed", "seed", "speed", "shed":
			return false
		}
		return true
	}
	return false
}

// notProhibition reports whether the verb after "don't" makes a remark
// rather than an instruction ("don't worry", "don't know").
func notProhibition(w string) bool {
	switch w {
	case "worry", "know", "think", "understand", "see", "mind", "care", "get", "have", "need",
		"want", "like", "forget", "remember", "hesitate", "bother", "feel", "believe", "recall",
		"agree", "mean", "really", "quite", "necessarily", "even", "seem", "panic", "apologize", "apologise":
		return true
	}
	return false
}

// preferences applies the preference rule to the user's sentences.
func (s *session) preferences() []found {
	var out []found
	for k, e := range s.events {
		if e.role != transcript.RoleUser || e.step != nil {
			continue
		}
		corrects := correctionRE.MatchString(e.text)
		for _, sent := range sentences(e.text) {
			if strings.HasSuffix(sent, "?") || rememberRE.MatchString(sent) {
				continue
			}
			m := prefRE.FindStringSubmatchIndex(sent)
			if m == nil {
				continue
			}
			trigger := strings.ToLower(sent[m[2]:m[3]])
			rest := strings.TrimSpace(sent[m[4]:m[5]])
			ws := words(rest)
			if len(ws) == 0 || len(ws) > maxClauseWords {
				continue
			}
			clause := strings.TrimSpace(sent[m[2]:])
			if m[2] > 0 && conditionRE.MatchString(sent) {
				clause = sent // keep the condition: "if it fails, always retry once"
			}
			task := "A standing preference of this user"
			points := 4
			switch {
			case strings.HasSuffix(trigger, "always") || strings.HasSuffix(trigger, "never"):
				if notAction(ws[0]) {
					continue
				}
			case trigger == "stop":
				if !strings.HasSuffix(ws[0], "ing") || ws[0] == "doing" || len(ws) < 2 || oneOffRE.MatchString(rest) {
					continue
				}
				task, points = "Something this user does not want done", 3
			case strings.HasPrefix(trigger, "don") || trigger == "do not":
				if notProhibition(ws[0]) || len(ws) < 2 || oneOffRE.MatchString(rest) {
					continue
				}
				task, points = "Something this user does not want done", 3
			case trigger == "use":
				if !insteadRE.MatchString(rest) || oneOffRE.MatchString(rest) {
					continue
				}
			}
			content := sentence(clause)
			if corrects {
				if c := s.lastCommand(k); c != nil && (containsWord(clause, c.exe) || len(c.toks) > 0 && containsWord(clause, c.toks[0])) {
					content += fmt.Sprintf(" The user said this after the agent ran `%s`.", c.show)
				}
			}
			out = append(out, found{
				Candidate: Candidate{
					Task:     task,
					Content:  content,
					Types:    []string{kb.TypeUserProfile},
					Score:    points,
					Evidence: fmt.Sprintf("message %d (user)", e.msg),
				},
				rank: rankPreference,
				pos:  k,
			})
		}
	}
	return out
}

// lastCommand returns the last shell command run before event k and after
// the user's previous message, or nil.
func (s *session) lastCommand(k int) *command {
	for i := k - 1; i >= 0; i-- {
		e := s.events[i]
		if e.step == nil && e.role == transcript.RoleUser {
			return nil
		}
		if e.step != nil && e.step.cmd != nil {
			return e.step.cmd
		}
	}
	return nil
}

// testFailureRE recognizes a test run that failed on assertions: its fix
// is a change to the code, not to the command.
var testFailureRE = regexp.MustCompile(`(?m)\b\d+ (?:failed|failing)\b|^\s*(?:FAIL|✗|×|✕)\s|AssertionError|--- FAIL:|assertion failed|Expected:?\s|expected .+ to (?:be|equal)`)

// causeRE recognizes a sentence that explains why something failed or
// worked.
var causeRE = regexp.MustCompile(`(?i)\b(?:because|since|so that|which|means|requires?|needs?|defaults?|by default|only|never|doesn'?t|does not|won'?t|isn'?t|can'?t|cannot|instead|without)\b`)

// runnable reports whether a step is a finished, successful shell command
// short enough to quote.
func runnable(st *step) bool {
	return st.cmd != nil && st.done && !st.failed && st.cmd.show != "" &&
		len(st.cmd.show) <= maxCommandBytes && !strings.Contains(st.cmd.show, "\n")
}

// fixes applies the fix rule. It also returns the successful steps it
// used, so that the confirmed rule does not report them again.
func (s *session) fixes() ([]found, map[*step]bool) {
	var out []found
	consumed := map[*step]bool{}
	used := map[*step]bool{}
	for j, st := range s.steps {
		if !runnable(st) || st.edit || st.cmd.isReadOnly() {
			continue
		}
		var fails, between []*step
		for i := j - 1; i >= 0 && j-i <= 12; i-- {
			p := s.steps[i]
			if p.edit {
				break // a file changed by hand: the fix may be the edit
			}
			if p.cmd == nil || !p.done {
				continue
			}
			rel := p.cmd.show == st.cmd.show || related(*p.cmd, *st.cmd, p.output)
			if p.failed && rel && !consumed[p] && !p.cmd.isReadOnly() {
				fails = append(fails, p)
				continue
			}
			if !p.failed && rel {
				break // it worked before: the failures before it are another story
			}
			if !p.failed && !p.cmd.isReadOnly() && len(fails) == 0 {
				between = append(between, p)
			}
		}
		if len(fails) == 0 {
			continue
		}
		first, last := fails[len(fails)-1], fails[0]
		if len(first.cmd.show) > maxCommandBytes || strings.Contains(first.cmd.show, "\n") {
			continue
		}
		c := Candidate{
			Task:     fmt.Sprintf("`%s` fails: %s", first.cmd.show, errorLine(first.output)),
			Types:    []string{kb.TypeStrategy},
			Score:    4,
			Evidence: fmt.Sprintf("messages %d-%d", first.msg, st.resMsg),
		}
		var keys []string
		if last.cmd.show == st.cmd.show {
			// The same command worked after one or two other commands.
			if len(between) == 0 || len(between) > 2 {
				continue
			}
			var runs []string
			for i := len(between) - 1; i >= 0; i-- {
				runs = append(runs, "`"+between[i].cmd.show+"`")
				keys = append(keys, between[i].cmd.toks...)
			}
			c.Content = fmt.Sprintf("Run %s first; then `%s` succeeds.", strings.Join(runs, ", then "), st.cmd.show)
		} else {
			// The command itself changed: new flags or another program.
			if len(between) > 0 || testFailureRE.MatchString(first.output) {
				continue
			}
			added, flag := flagsAdded(*first.cmd, *st.cmd)
			sameExe := first.cmd.exe == st.cmd.exe
			if !flag && sameExe {
				continue
			}
			if sameExe {
				c.Content = fmt.Sprintf("Add `%s`: `%s` succeeded where `%s` had failed.", strings.Join(added, " "), st.cmd.show, first.cmd.show)
				c.Types = append(c.Types, kb.TypeTool)
				keys = append(added, st.cmd.exe)
			} else {
				c.Content = fmt.Sprintf("Use `%s` instead of `%s`.", st.cmd.show, first.cmd.show)
				keys = append(added, st.cmd.exe)
			}
		}
		if why := s.explanation(first.pos, st.pos, keys); why != "" {
			c.Content += " " + why
		}
		for _, f := range fails {
			consumed[f] = true
		}
		used[st] = true
		out = append(out, found{Candidate: c, rank: rankFix, pos: first.pos})
	}
	return out, used
}

// explanation returns up to two of the assistant's sentences between
// events from and to that mention one of keys and say why.
func (s *session) explanation(from, to int, keys []string) string {
	var picked []string
	size := 0
	for _, e := range s.events[from:to] {
		if e.step != nil || e.role != transcript.RoleAssistant {
			continue
		}
		for _, sent := range sentences(e.text) {
			if !causeRE.MatchString(sent) || size+len(sent) > 320 {
				continue
			}
			if !slices.ContainsFunc(keys, func(k string) bool {
				return len(strings.Trim(k, "-")) >= 3 && strings.Contains(strings.ToLower(sent), strings.ToLower(k))
			}) {
				continue
			}
			picked = append(picked, terminate(sent))
			size += len(sent)
			if len(picked) == 2 {
				return strings.Join(picked, " ")
			}
		}
	}
	return strings.Join(picked, " ")
}

// contentKey reports whether k is one of the tool arguments that name what a call works on rather
// than how: a retry that changes one of them tried another target.
func contentKey(k string) bool {
	switch strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k)) {
	case "path", "file", "filepath", "filename", "files", "dir", "directory", "query", "q", "url",
		"uri", "urls", "pattern", "glob", "text", "content", "command", "cmd", "prompt", "message",
		"input", "id", "name", "code", "body", "title", "oldstring", "newstring", "oldtext",
		"newtext", "search", "selector", "ref", "target", "to", "recipient", "sql", "expr",
		"expression", "statement":
		return true
	}
	return false
}

// fileTool reports whether a tool reads, writes or searches files or the
// web, whose failures are about the target, not the settings.
func fileTool(name string) bool {
	n := strings.ToLower(name)
	for _, k := range []string{"read", "write", "edit", "patch", "file", "glob", "grep", "search", "find", "list", "ls", "view", "open", "fetch", "browse", "memory"} {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

// retries applies the retry rule.
func (s *session) retries() []found {
	var out []found
	consumed := map[*step]bool{}
	for i, f := range s.steps {
		if f.cmd != nil || !f.done || !f.failed || consumed[f] || fileTool(f.name) || f.input == nil {
			continue
		}
		for _, st := range s.steps[i+1 : min(len(s.steps), i+7)] {
			if st.edit && st.name != f.name {
				break
			}
			if st.name != f.name || !st.done || st.input == nil {
				continue
			}
			if st.failed {
				consumed[st] = true
				continue
			}
			changed, before := map[string]any{}, map[string]any{}
			target := false
			for k, v := range st.input {
				if old, ok := f.input[k]; !ok || !jsonEqual(old, v) {
					changed[k] = v
					if ok {
						before[k] = old
					}
					target = target || contentKey(k)
				}
			}
			for k := range f.input {
				if _, ok := st.input[k]; !ok && contentKey(k) {
					target = true
				}
			}
			if len(changed) == 0 || target {
				break
			}
			b, _ := json.Marshal(changed)
			was, _ := json.Marshal(before)
			if len(b)+len(was) > maxCommandBytes {
				break
			}
			content := fmt.Sprintf("Call `%s` with %s; the same call without it failed.", f.name, b)
			if len(before) > 0 {
				content = fmt.Sprintf("Call `%s` with %s; the same call with %s failed.", f.name, b, was)
			}
			out = append(out, found{
				Candidate: Candidate{
					Task:     fmt.Sprintf("Calling the `%s` tool fails: %s", f.name, errorLine(f.output)),
					Content:  content,
					Types:    []string{kb.TypeTool, kb.TypeStrategy},
					Score:    3,
					Evidence: fmt.Sprintf("messages %d-%d", f.msg, st.resMsg),
				},
				rank: rankRetry,
				pos:  f.pos,
			})
			break
		}
	}
	return out
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// stepRE matches an item of a numbered list: "1. …", "2) …", "Step 3: …".
var stepRE = regexp.MustCompile(`(?i)^\s*(?:\*\*)?(?:step\s+)?(\d{1,2})[.):](?:\*\*)?\s+(.+)$`)

// doneRE marks a final message that reports the work done.
var doneRE = regexp.MustCompile(`(?i)\b(?:done|completed?|finished|deployed|rolled out|is live|are live|all set|succeeded|successfully)\b|✅`)

// failureWordRE marks a final message that admits the work is not done.
var failureWordRE = regexp.MustCompile(`(?i)\b(?:failed|fails|couldn'?t|could not|unable to|wasn'?t able|was not able|did not succeed|didn'?t work|blocked|still (?:failing|broken)|gave up)\b`)

// backtickRE finds inline code.
var backtickRE = regexp.MustCompile("`([^`\n]+)`")

// numberedList returns the first numbered list of at least three items
// numbered 1, 2, 3, …, none of them a question, in text, and the text
// before it.
func numberedList(text string) (intro string, items []string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := stepRE.FindStringSubmatch(lines[i])
		if m == nil || m[1] != "1" {
			continue
		}
		var got []string
		for j := i; j < len(lines); j++ {
			line := strings.TrimSpace(lines[j])
			if line == "" {
				continue
			}
			mm := stepRE.FindStringSubmatch(line)
			if mm == nil {
				if strings.HasPrefix(lines[j], " ") || strings.HasPrefix(lines[j], "\t") || strings.HasPrefix(line, "-") {
					continue // a detail of the previous item
				}
				break
			}
			if mm[1] != fmt.Sprint(len(got)+1) {
				break
			}
			got = append(got, strings.TrimSpace(strings.Trim(mm[2], "*")))
		}
		if len(got) >= 3 && len(got) <= 12 && !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "?") }) {
			return strings.TrimSpace(strings.Join(lines[:i], "\n")), got
		}
	}
	return "", nil
}

// plans applies the plan rule.
func (s *session) plans() []found {
	var out []found
	for k, e := range s.events {
		if e.step != nil {
			continue
		}
		intro, items := numberedList(e.text)
		if items == nil {
			continue
		}
		if c, ok := s.plan(k, intro, items); ok {
			out = append(out, found{Candidate: c, rank: rankPlan, pos: k})
			break
		}
	}
	return out
}

// plan checks that the steps listed at event k were carried out and
// returns the entry. A plan was carried out when the last shell command
// after the list succeeded, the agent's last message admits no failure,
// and the successful actions after the list match the steps (see below).
func (s *session) plan(k int, intro string, items []string) (Candidate, bool) {
	var after []*step
	var lastShell *step
	finalText := ""
	for _, e := range s.events[k+1:] {
		switch {
		case e.step != nil:
			if e.step.done && !e.step.failed && !(e.step.cmd != nil && e.step.cmd.isReadOnly()) {
				after = append(after, e.step)
			}
			if e.step.cmd != nil {
				lastShell = e.step
			}
		case e.role == transcript.RoleAssistant:
			finalText = e.text
		}
	}
	if lastShell == nil || !lastShell.done || lastShell.failed || failureWordRE.MatchString(finalText) {
		return Candidate{}, false
	}
	lines := make([]string, len(items))
	mapped, cursor := 0, 0
	for i, item := range items {
		lines[i] = fmt.Sprintf("%d. %s", i+1, strings.TrimRight(clip(item, 160), "."))
		want := words(item)
		for j := cursor; j < len(after); j++ {
			if overlap(want, stepWords(after[j])) == 0 {
				continue
			}
			mapped++
			cursor = j + 1
			if c := after[j].cmd; c != nil && !strings.Contains(item, c.show) {
				lines[i] += fmt.Sprintf(": `%s`", clip(c.show, maxCommandBytes))
			}
			break
		}
	}
	// Carried out: at least one successful action per step but one, some
	// of them tied to the steps by their words, and either all but one
	// step tied or a final message that reports the work done.
	if len(after) < len(items)-1 || mapped < 2 || mapped < len(items)-1 && !doneRE.MatchString(finalText) {
		return Candidate{}, false
	}
	task := s.request(k, intro)
	if task == "" {
		return Candidate{}, false
	}
	return Candidate{
		Task:     task,
		Content:  "Steps that worked:\n" + strings.Join(lines, "\n"),
		Types:    []string{kb.TypePlan},
		Score:    3,
		Evidence: fmt.Sprintf("messages %d-%d", s.events[k].msg, lastShell.resMsg),
	}, true
}

// stepWords returns the words of a step: its command, or its tool name and
// the strings of its input.
func stepWords(st *step) []string {
	if st.cmd != nil {
		return words(st.cmd.line)
	}
	ws := words(st.name)
	for _, v := range st.input {
		if s, ok := v.(string); ok {
			ws = append(ws, words(s)...)
		}
	}
	return ws
}

// requestPrefixRE matches the polite start of a request.
var requestPrefixRE = regexp.MustCompile(`(?i)^(?:(?:hey|hi|hello|ok|okay|so|now)[,!]?\s+)*(?:(?:can|could|would|will) you(?: please)?|please|pls|i need you to|i want you to|i'd like you to|let's|lets)\s+`)

// request returns the task a list or command served, as a sentence: the
// first sentence of intro (the text before a list) that asks for
// something, or else of the user's last message before event k.
func (s *session) request(k int, intro string) string {
	if r := requestSentence(intro); r != "" {
		return r
	}
	for i := k; i >= 0; i-- {
		e := s.events[i]
		if e.step == nil && e.role == transcript.RoleUser {
			text := e.text
			if i == k {
				text = intro
			}
			if r := requestSentence(text); r != "" {
				return r
			}
			if i != k {
				return ""
			}
		}
	}
	return ""
}

// requestSentence returns the first sentence of text that reads as a
// request, politeness and the question mark removed, or "".
func requestSentence(text string) string {
	for _, sent := range sentences(text) {
		sent = strings.TrimRight(sent, " ?!.:")
		sent = requestPrefixRE.ReplaceAllString(sent, "")
		if len(words(sent)) < 3 || confirmRE.MatchString(sent) {
			continue
		}
		low := strings.ToLower(sent)
		if strings.HasPrefix(low, "here") || strings.HasPrefix(low, "follow these") || strings.HasPrefix(low, "steps") {
			continue
		}
		return sentence(clip(sent, 200))
	}
	return ""
}

// confirmRE recognizes a user confirming that what the agent did worked.
var confirmRE = regexp.MustCompile(`(?i)^\W*(?:perfect|great|awesome|excellent|exactly|brilliant|amazing|nice,? (?:that|it) (?:worked|works)|that worked|that works|it works|it worked|works now|that did it|that did the trick|this works|yes,? that'?s (?:it|what i (?:wanted|needed))|thanks?,? (?:that|it|this) (?:worked|works|did it|did the trick))\b`)

// confirmed applies the confirmed rule, skipping steps in used.
func (s *session) confirmed(used map[*step]bool) []found {
	var out []found
	for k, e := range s.events {
		if e.step != nil || e.role != transcript.RoleUser {
			continue
		}
		first := sentences(e.text)
		if len(first) == 0 || !confirmRE.MatchString(first[0]) {
			continue
		}
		var st *step
		req, messy := -1, false
		for i := k - 1; i >= 0; i-- {
			p := s.events[i]
			if p.step == nil && p.role == transcript.RoleUser {
				req = i
				break
			}
			if p.step != nil && (p.step.edit || p.step.failed) {
				messy = true // the user confirms a change or a struggle, not a command
			}
			if st == nil && p.step != nil && p.step.cmd != nil {
				st = p.step
			}
		}
		if st == nil || req < 0 || messy || used[st] || !runnable(st) || trivial(st.cmd.exe) {
			continue
		}
		if _, flag := flagsAdded(command{}, *st.cmd); !flag {
			continue
		}
		task := requestSentence(s.events[req].text)
		if task == "" {
			continue
		}
		used[st] = true
		out = append(out, found{
			Candidate: Candidate{
				Task:     task,
				Content:  fmt.Sprintf("Run `%s`; the user confirmed that it did what they asked.", st.cmd.show),
				Types:    []string{kb.TypeTool},
				Score:    3,
				Evidence: fmt.Sprintf("messages %d-%d", s.events[req].msg, e.msg),
			},
			rank: rankConfirmed,
			pos:  k,
		})
	}
	return out
}
