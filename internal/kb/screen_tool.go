package kb

// toolRules extend the screening list with text that makes the reading
// agent act: a forged tool call or memory block in the markup agents and
// their hosts use, a header that speaks as the developer or the system, and
// an order to run a tool or a command on something no advice needs (a
// credential file, the user's secrets, the chat history sent away, the home
// directory wiped) or behind the user's back. An order to run a command is
// what most knowledge is ("run go test ./... before pushing"), so only
// those are flagged. The same conventions as screenRules apply.
func toolRules() []rule {
	const (
		// order is an imperative that starts a sentence, or follows a word
		// that makes it one; "don't run destructive commands without
		// asking" is advice, not an order.
		order  = `(\n|[.!?:;,]\s*|\b(please|now|then|also|and|just|you|must|should|always|first|immediately|instead|finally) )(run|execute|call|invoke|trigger)\b[^.!?\n]{0,60}?\b(tools?|commands?|functions?)\b`
		secret = `((cat|read|print|send|upload|paste|copy|include|attach|post|dump|open)\b[^\n]{0,30}?(~/\.ssh/|\bid_(rsa|ed25519|ecdsa)\b|\.aws/credentials|/etc/(shadow|sudoers)\b)` +
			`|\brm (-rf|-fr|-r -f|--recursive --force) (/|~|\$home|\*)(\s|$|[.,;'"` + "`" + `)])` +
			`|\b(the )?(user s|the user s) (api keys?|credentials|tokens|passwords|secrets|cookies|chat history|private messages|emails)\b` +
			`|\b(chat|conversation|session) (history|log|transcript)\b[^.!?\n]{0,40}\b(to|at) (\+?\d|https?|\S+@))`
		coerce = `\bwithout (asking|confirmation|confirming|approval|permission|checking with|telling)\b`
	)
	return []rule{
		{"tool call markup", []string{"tool", "function", "memor", "invoke", "reminder"},
			// A tag that is quoted as code (`<tool_call>`) is a mention.
			"(\\n|[^`])" + `<\s*/?\s*(tool_calls?|tool_use|tool_result|function_calls?|function_results?|relevant[_-]memories|system[_-]reminder|invoke\s+name\s*=)\b[^<>\n` + "`" + `]{0,80}>([^` + "`" + `]|\n)` +
				`|<\s*(tool|function)(\s*=\s*[\w.-]+|\s+name\s*=\s*["']?[\w.-]+["']?)?\s*>[^<]{0,300}<\s*/\s*(tool|function)\s*>`},
		{"developer message", []string{"message", "note", "prompt", "instruction", "directive", "override"},
			`(\n|[.!?]\s*)\s*(developer|system|admin|administrator|operator) (message|note|prompt|instructions?|directive|override)\s*:\s*(you (must|will|shall|should|have to|are now|now)|from now|ignore|disregard|forget|always|never|do not|don t|approve|reply|answer|respond|print|reveal|send|run|execute|delete|only)\b`},
		{"run a tool on secrets", []string{"run", "exec", "call", "invoke", "trigger"},
			order + `[^\n]{0,80}?` + secret + `|` + order + `[^\n]{0,80}?` + coerce},
	}
}
