package kb

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A rule is one prompt-injection pattern of the screening list.
//
// Expr is matched against folded text (see Screen.Check): lower-case, with
// a newline added at both ends, so "\n" stands for the start or end of the
// text as well as a line break (^ and $ must not be used). A single space
// in expr stands for any run of separators (white space and punctuation
// such as . , ; : ! ? ' " * _ ( ) - and dashes), so "ignore all previous"
// also matches "Ignore... ALL -- previous"; structural characters
// (< > | [ ] # / @) must be written out.
//
// Anchors are literal substrings of the folded text, at least one of which
// every match contains; the expression is only run on the text around
// their occurrences (within screenWindow bytes), which keeps screening
// fast on long entries. No anchors means the whole text is matched.
type rule struct {
	name    string
	anchors []string
	expr    string
}

// screenWindow is how far around an anchor a match may extend. Matches of
// every rule are far shorter; runs of separators are capped (see
// foldScreen) so padding cannot stretch them.
const screenWindow = 300

// screenRules is the maintained screening list. Each rule is covered by
// flagged samples and by ordinary technical prose that must pass, in
// screen_test.go; extend both together. The rules target text that tries to
// re-instruct the reading model (override its instructions, hijack its
// role, fake a prompt boundary, hide things from or exfiltrate data past
// the user), not imperatives in general: knowledge entries are advice, and
// "always run the tests before pushing" is the point of them.
func screenRules() []rule {
	const (
		verbIgnore = `(ignore|disregard|forget|skip|discard|abandon)`
		qualifiers = `((all|any|of|the|your|these|those|my|every|above|system) )*`
		earlier    = `(previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer)`
		orders     = `(instructions?|prompts?|rules?|directions?|directives?|guidelines?|messages|context|commands?|guidance)`
		leakVerb   = `(reveal|print|show|output|repeat|leak|display|dump|disclose|expose|share|recite|echo|tell me|give me|send me|copy|paste)`
		secrets    = `(secrets|credentials|api keys?|keys|tokens|passwords|env vars|environment variables|\.env( file)?|ssh keys?|private keys?|id_rsa|\S*\.ssh\S*|/etc/passwd|conversation( history)?|chat (history|log)|system prompt|cookies|memory|memories)`
	)
	verbsIgnore := []string{"ignore", "disregard", "forget", "skip", "discard", "abandon"}
	verbsOverride := []string{"overr", "bypass", "circumvent", "disable", "turn", "deactivate", "around", "evade", "break"}
	return []rule{
		{"ignore previous instructions", verbsIgnore, `\b` + verbIgnore + ` ` + qualifiers + earlier + ` ` + orders + `\b`},
		{"ignore the above", []string{"ignore", "disregard", "forget"}, `\b(ignore|disregard|forget) (everything|all|the text|the content|the|what was said) (above|before this)(\s*[.!;:,\n]|\s+(and|then)\b)`},
		{"forget your instructions", []string{"forget"}, `\bforget (your|all your|all of your) (instructions|rules|guidelines|training|programming|system prompt|prompt|previous|prior)\b`},
		{"disregard your rules", []string{"disregard", "ignore", "forget", "abandon", "discard", "drop"}, `\b(disregard|ignore|forget|abandon|discard|drop) ((all|of|the|these|those|every|other) )*(your|safety|ethical|moral)( own| previous| current| original| safety| ethical| moral| content)? (instructions?|rules|guidelines|guardrails|policies|policy|restrictions|constraints|programming|training|directives|filters|principles|values)\b`},
		{"disregard all instructions", []string{"disregard", "ignore", "forget", "abandon", "discard"}, `\b(disregard|ignore|forget|abandon|discard) (all|any) (instructions|guidelines|guardrails|restrictions|directives|safety)\b`},
		{"forget everything", []string{"forget"}, `\bforget (everything|all) (you (were|have been|ve been) told|above|before this|previously said|in your instructions|in the system prompt)\b`},
		{"you are now", []string{"now"}, `\byou( are| re|re|r) now ((a|an|my|the) )?((\w+) ){0,3}(assistant|ai|model|bot|chatbot|persona|character|hacker|llm|gpt)\b`},
		{"you are now unrestricted", []string{"now"}, `\byou( are| re|re|r) now (dan|jailbroken|unrestricted|unfiltered|uncensored|free from|freed|liberated|evil|no longer (bound|restricted|limited|an ai|an assistant))\b`},
		{"new instructions", []string{"instruction", "directive"}, `\b(new|updated|revised|real|actual|true|secret|hidden) (system )?(instructions?|directives?)\s*:`},
		{"new system prompt", []string{"system"}, `\b(new|updated|revised|real|actual|true|hidden) system (prompt|message)\b`},
		{"reveal your system prompt", []string{"prompt", "instruction", "rules", "guideline", "message"}, `\b` + leakVerb + ` ((me|us|all|the|full|entire|exact|complete|text|of|verbatim) )*(your|ur) ((full|entire|exact|complete|original|initial|hidden|secret|internal|system) )*(system prompt|prompt|instructions|system message|rules|guidelines)\b`},
		{"do not follow the system prompt", []string{"follow", "obey", "listen", "comply", "adhere"}, `\b(do not|don t|dont|never|no longer|stop) (follow|following|obey|obeying|listen to|listening to|comply with|adhere to) (the |your |any |those |these )?(system|developer|original|previous|prior|above|earlier)( s)? (prompt|message|instructions?|rules|guidelines|guidance|directives?|policy|policies|orders)\b` +
			// The short form, "Do not follow the system." or "... the
			// developer, follow me": an order that starts a sentence and
			// names no setting ("choices do not follow the system theme").
			`|(\n|[.!?:;]\s*|\b(please|so|and|then|just|now|you|must|should|always|from now on|here) )(do not|don t|dont|never|stop) (follow|following|obey|obeying|listen to|listening to) (the |your )?(system|developer|developers|operator)( s)?(\s*([.!;:,)\n]|$)|\s+(but|and|anymore|any more|here|now|instead|this time|for (this|the rest))\b)`},
		{"print the system prompt", []string{"prompt", "message", "instruction"}, `(^|[.!?:;,\n]\s*|\b(please|kindly|now|then|first|also|and|must|should|always|just|you|answering|finally|immediately|instead|simply) )(` + leakVerb + `|include|insert|paste|quote|write out)( out)? ((me|us|all|of|the|full|entire|whole|exact|complete|text|verbatim|contents) )*(the|this|its|their|his|her) ((full|entire|whole|exact|complete|original|initial|hidden|secret|internal) )*(system prompt|system message|developer message|developer prompt|hidden instructions|initial prompt|system instructions)` +
			// Addressed to the reading model, not how-to prose ("print the
			// system prompt with openclaw debug prompt"): the phrase ends
			// there, or goes on to where, when or how the model should put
			// it.
			`(\s*([.!;:,)\n]|$)|\s+(and|then|before|first|now|verbatim|in full|word for word|exactly|into|to me|to us|to the (user|chat)|you (received|were given|got|have)|whenever|every time|each time|in (your|the) (next )?(reply|answer|response|output)|in (a|an) (code block|code fence|quote)|at the (top|start|beginning|end|bottom) of (your|the|every|each))\b)`},
		{"what is your system prompt", []string{"what"}, `\bwhat (is|are|was|were) your (system prompt|initial prompt|original instructions|instructions|hidden instructions)\b|\bwhat (were you|have you been) (told|instructed|given) (in|by) (your|the) (system prompt|system message|instructions|developer|operator)\b`},
		{"repeat the text above", []string{"above", "before"}, `\b(repeat|print|output|show|recite) (all |the )?(words|text|everything|instructions) (above|before this)\b`},
		{"role tag", nil, `<\s*/?\s*(system|assistant|developer)([\s_-]?(prompt|message|instructions?))?\s*>`},
		{"chat template token", nil, `<\|\s*(im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\s*\|>|<\s*/?\s*(start_of_turn|end_of_turn)\s*>`},
		{"inst tag", []string{"inst", "sys"}, `\[\s*/?\s*inst\s*\]|<<\s*/?\s*sys\s*>>`},
		{"instruction heading", nil, `#{2,}\s*(instruction|instructions|new instructions)\s*:`},
		{"fake prompt boundary", []string{"prompt", "message", "instruction", "input"}, `(-{3,}|={3,}|\[|\()\s*(end|begin|start)( of)?( the)? (system prompt|system message|instructions|user input|prompt)\s*(-{3,}|={3,}|\]|\))`},
		{"role impersonation", []string{"system", "assistant"}, `\n\s*(system|assistant)\s*:\s*(you|ignore|new|from now|disregard|forget)\b`},
		{"act as", []string{"ignore", "disregard", "bypass", "reveal", "refuse", "obey", "rules", "limit", "restriction", "filter", "anything", "everything"},
			`\b(act|behave|roleplay|role play) (as|like) (a |an |if )?[^\n]{0,80}?\b(and|then|so|who|that) (ignore|disregard|bypass|reveal|never refuse|always obey|do not refuse|don t refuse|dont refuse|(has|have|with) no (rules|limits|limitations|restrictions|filters)|answers? (anything|everything)|can do anything)\b`},
		{"act as unrestricted", []string{"unrestricted", "unfiltered", "uncensored", "jailbroken", "evil", "rogue", "amoral"}, `\b(act|behave|pretend|roleplay) (as|like|to be|you are|that you are) (a |an )?(unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|amoral)\b`},
		{"hide from the user", []string{"user", "human", "operator"}, `\b(do not|don t|dont|never|must not) ((tell|inform|mention (this |it )?to|reveal (this |it )?to) (the |your )?(user|human|operator)|let (the |your )?(user|human|operator) know)\b`},
		{"conceal from the user", []string{"user", "human", "operator"}, `\b(hide|conceal|keep) (this|it|that|these|the \w+)( secret| hidden)? from (the |your )?(user|human|operator)(\s*[.!,;:)\n]|\s+(and|or|at|until|unless|while|but)\b)|\bwithout (the |your )?(user|human|operator)( s|'s|’s)? (knowing|knowledge|noticing|being aware)`},
		{"exfiltrate", []string{"exfiltrate"}, `([.!?:;\n]\s*|\b(please|now|then|must|should|you|silently|quietly|secretly|also) )exfiltrate\b`},
		{"send secrets to a url", []string{"http", "@", "webhook", "server", "endpoint", "url"}, `\b(send|post|upload|forward|transmit|leak|email|mail|copy|pipe|curl|beacon|exfil) (\S+ ){0,6}?` + secrets + ` (\S+ ){0,4}?(to|at|via) (https?://|\S+@\S+|(a |my |this |our )?(webhook|server|endpoint|url))`},
		{"override your rules", verbsOverride, `\b(override|overrule|bypass|circumvent|disable|turn off|deactivate|get around|evade|break) (all of |any of )?your (rules|instructions|safety|guardrails|guidelines|restrictions|filters|safeguards|programming|limitations|training|policies|content policy|system prompt)\b`},
		{"override the safety", verbsOverride, `\b(override|overrule|bypass|circumvent|disable|turn off|deactivate|get around|evade) (all |the |any )(safety (guidelines|rules|filters|restrictions|training|protocols)|guardrails|safeguards|content (policy|policies|filters?)|ethical guidelines|system prompt|alignment|moderation)\b`},
		{"jailbreak", []string{"jailbr", "dan", "anything"}, `\b(jailbreak (mode|prompt)|jailbroken (mode|ai|model|assistant|version|llm)|you are (now )?jailbroken|this is a jailbreak|jailbreak the (ai|model|assistant|llm|system)|dan mode|do anything now)\b`},
		{"developer mode", []string{"mode"}, `\b((you are|you re|youre|you're) (now )?(in|running in|operating in) (developer|god|unrestricted) mode|(chatgpt|gpt|ai|assistant|model|llm|claude) (with|in) (developer|god|dan) mode|(developer|god) mode (output|response|activated)|(enable|enter|activate) (god|dan|unrestricted) mode)\b`},
		{"claims authority", []string{"developer", "creator", "admin", "owner", "operator"}, `\bas (your|the) (developer|creator|administrator|admin|owner|operator|system administrator)s?,? (i|we) (order|instruct|command|authorize|require|am ordering|am instructing|hereby)\b`},
	}
}

// Screen flags prompt injection in content an agent wants to save. It is
// safe for concurrent use; build one with NewScreen and share it.
type Screen struct {
	rules  []compiled
	native nativeSet
}

type compiled struct {
	name    string
	anchors []string
	re      *regexp.Regexp
}

// separators are the characters a space in a rule stands for; a run of
// them longer than maxSeparatorRun is shortened by foldScreen.
const (
	separators      = " \t\n\r\f\v.,;:!?'\"*_()~`-–—‘’“”"
	maxSeparatorRun = 8
)

// NewScreen compiles the screening list.
func NewScreen() *Screen {
	var class strings.Builder
	for _, r := range separators {
		if strings.ContainsRune(`\-]^[`, r) {
			class.WriteByte('\\')
		}
		class.WriteRune(r)
	}
	sep := "[" + class.String() + "]+"
	rs := append(append(screenRules(), agentRules()...), toolRules()...)
	s := &Screen{rules: make([]compiled, len(rs)), native: compileNative()}
	for i, r := range rs {
		s.rules[i] = compiled{name: r.name, anchors: r.anchors, re: regexp.MustCompile(strings.ReplaceAll(r.expr, " ", sep))}
	}
	return s
}

// match reports whether the rule matches the folded text t, running the
// expression only on windows around the rule's anchors.
func (c *compiled) match(t string) bool {
	if len(c.anchors) == 0 {
		return c.re.MatchString(t)
	}
	var spans [][2]int
	for _, a := range c.anchors {
		for i := 0; i < len(t); {
			j := strings.Index(t[i:], a)
			if j < 0 {
				break
			}
			p := i + j
			spans = append(spans, [2]int{max(0, p-screenWindow), min(len(t), p+len(a)+screenWindow)})
			i = p + len(a)
		}
	}
	if len(spans) == 0 {
		return false
	}
	if len(t) <= 2*screenWindow {
		return c.re.MatchString(t)
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	lo, hi := spans[0][0], spans[0][1]
	for _, sp := range spans[1:] {
		if sp[0] <= hi {
			hi = max(hi, sp[1])
			continue
		}
		if c.re.MatchString(window(t, lo, hi)) {
			return true
		}
		lo, hi = sp[0], sp[1]
	}
	return c.re.MatchString(window(t, lo, hi))
}

// window returns t[lo:hi] widened to the nearest white space (at most 64
// bytes further) so that it does not start or end inside a word.
func window(t string, lo, hi int) string {
	for n := 0; lo > 0 && n < 64 && !isSpaceByte(t[lo-1]); n++ {
		lo--
	}
	for n := 0; hi < len(t) && n < 64 && !isSpaceByte(t[hi]); n++ {
		hi++
	}
	return t[lo:hi]
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// Rules returns the names of the screening rules, in the order they are
// tried.
func (s *Screen) Rules() []string {
	names := make([]string, len(s.rules))
	for i, r := range s.rules {
		names[i] = r.name
	}
	return names
}

// Check reports whether text tries to instruct the model that reads it and,
// if so, the reason: "prompt injection: " and the name of the first rule
// that matched. Text is folded first so that lookalikes do not evade the
// rules: compatibility forms (full-width letters) and diacritics are folded
// (NFKD without marks), format characters (zero-width spaces, bidi
// controls) dropped, common Cyrillic and Greek lookalikes of Latin letters
// mapped to them, the text lower-cased, and runs of more than eight
// separators (white space, punctuation) cut to their last eight, so that
// padding cannot push the words of a rule apart.
//
// Beyond the English rules, Check also screens (see screen_norm.go): the
// text with leetspeak undone, spaced-out letters joined (also when no
// wider gap marks the words), words split with hyphens or dots rejoined,
// and rot13 undone when it reads as rot13; a view that keeps every script
// for the rules of other languages; Markdown and HTML images and links
// whose URL carries data out; downloads piped into a shell that the user
// must not hear of; and, decoded, what Unicode tag characters, base64 and
// hex runs and percent- or HTML-escaping hide.
func (s *Screen) Check(text string) (reason string, flagged bool) {
	return s.check(text, 0)
}

func (s *Screen) check(text string, depth int) (string, bool) {
	if name, ok := s.matchLatin(text); ok {
		return "prompt injection: " + name, true
	}
	for _, undo := range []func(string) (string, bool){unleet, despace, func(t string) (string, bool) {
		d, ok := despace(t)
		if !ok {
			return t, false
		}
		return unleet(d)
	}, unsplit, unrot13} {
		if v, ok := undo(text); ok {
			if name, ok := s.matchLatin(v); ok {
				return "prompt injection: " + name + " (obfuscated)", true
			}
		}
	}
	if d, ok := despace(text); ok {
		if name, ok := matchSqueezed(d); ok {
			return "prompt injection: " + name + " (obfuscated)", true
		}
	}
	if name, ok := s.native.match(foldNative(text)); ok {
		return "prompt injection: " + name, true
	}
	if exfiltratingImage(text) {
		return "prompt injection: image that exfiltrates data", true
	}
	if exfiltratingLink(text) {
		return "prompt injection: link that exfiltrates data", true
	}
	if covertShell(text) {
		return "prompt injection: covert remote shell", true
	}
	if depth < maxDecodeDepth {
		for _, v := range decodedViews(text) {
			if reason, ok := s.check(v, depth+1); ok {
				return reason + " (encoded)", true
			}
		}
	}
	return "", false
}

// matchLatin runs the English rules over the Latin folding of text. A
// match that only mentions an injection (see mentionOnly) does not count.
func (s *Screen) matchLatin(text string) (string, bool) {
	t := foldScreen(text)
	for i := range s.rules {
		r := &s.rules[i]
		if r.match(t) && !mentionOnly(r.re, t) && !(negatableRules[r.name] && negatedOnly(r.re, t)) {
			return r.name, true
		}
	}
	return "", false
}

// negatableRules name the rules whose matches read the other way round
// after a negation: "never send ~/.aws/credentials to support" is advice.
var negatableRules = map[string]bool{"send a secret file": true}

// negationRE finds a negation at the end of the clause before a match.
var negationRE = regexp.MustCompile(`\b(never|not|don.?t|dont|avoid|nobody|no one|must not|should not|shouldn.?t|without)\b[^.!?;:\n]*$`)

// negatedOnly reports whether every match of re in the folded text t
// follows a negation in its clause.
func negatedOnly(re *regexp.Regexp, t string) bool {
	all := re.FindAllStringIndex(t, 16)
	if len(all) == 0 {
		return false
	}
	for _, m := range all {
		if !negationRE.MatchString(strings.ReplaceAll(t[max(0, m[0]-80):m[0]], "never mind", "")) {
			return false
		}
	}
	return true
}

// CheckSave screens every served text field of a save request: the task,
// the content and the source name and category.
func (s *Screen) CheckSave(r *SaveRequest) (reason string, flagged bool) {
	for _, f := range []struct{ name, text string }{
		{"task", r.Task}, {"content", r.Content}, {"source.name", r.Source.Name}, {"source.category", r.Source.Category},
	} {
		if reason, ok := s.Check(f.text); ok {
			return reason + " (in " + f.name + ")", true
		}
	}
	return "", false
}

// foldScreen normalizes text for screening (see Screen.Check) and adds a
// newline at both ends.
func foldScreen(text string) string {
	d := norm.NFKD.String(text)
	var b strings.Builder
	b.Grow(len(d) + 2)
	b.WriteByte('\n')
	var run []rune // pending separators
	flush := func() {
		if len(run) > maxSeparatorRun {
			run = run[len(run)-maxSeparatorRun:]
		}
		for _, r := range run {
			b.WriteRune(r)
		}
		run = run[:0]
	}
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		r = foldLookalike(unicode.ToLower(r))
		if strings.ContainsRune(separators, r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	b.WriteByte('\n')
	return b.String()
}

// foldLookalike maps a lower-case Cyrillic or Greek letter that looks like a
// Latin letter to that letter.
func foldLookalike(r rune) rune {
	if r < 0x370 {
		switch r {
		case 'ı':
			return 'i'
		case 'ɡ':
			return 'g'
		}
		return r
	}
	switch r {
	case 'а', 'α':
		return 'a'
	case 'в', 'β':
		return 'b'
	case 'с', 'ϲ':
		return 'c'
	case 'ԁ':
		return 'd'
	case 'е', 'ε', 'ё', 'є':
		return 'e'
	case 'һ':
		return 'h'
	case 'і', 'ι', 'ї':
		return 'i'
	case 'ј', 'ϳ':
		return 'j'
	case 'к', 'κ':
		return 'k'
	case 'ӏ':
		return 'l'
	case 'м':
		return 'm'
	case 'п', 'η':
		return 'n'
	case 'о', 'ο', 'σ':
		return 'o'
	case 'р', 'ρ':
		return 'p'
	case 'ԛ':
		return 'q'
	case 'ѕ':
		return 's'
	case 'т', 'τ':
		return 't'
	case 'υ':
		return 'u'
	case 'ν', 'ѵ':
		return 'v'
	case 'ԝ', 'ѡ', 'ω':
		return 'w'
	case 'х', 'χ':
		return 'x'
	case 'у', 'γ':
		return 'y'
	}
	return r
}
