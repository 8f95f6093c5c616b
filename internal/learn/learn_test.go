package learn

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/transcript"
)

// mcpReply is a search_docs reply as knowhub's MCP server prints it.
const mcpReply = "[1] ops:keys.md § Keys > Rotate the signing key (score 7.10)\n" +
	"Rotation replaces the active signing key and keeps the old one valid for the grace period.\n" +
	"```sh\nknowhub keys rotate --grace 24h\n```\n" +
	"[2] ops:tls.md § TLS > Certificates (score 5.20)\n" +
	"Certificates are read from the tls directory at start and reloaded on change, so no restart is needed.\n" +
	"3 of 9 matching sections shown."

// pluginReply is the same reply as the OpenClaw plugin prints it.
const pluginReply = "2 documentation sections for \"x\":\n\n" +
	"[1] ops:keys.md > Keys > Rotate the signing key (score 7.10)\n" +
	"Rotation replaces the active signing key and keeps the old one valid for the grace period.\n\n" +
	"[2] ops:tls.md > TLS > Certificates (score 5.20)\n" +
	"Certificates are read from the tls directory at start and reloaded on change, so no restart is needed."

func call(name, id string, input any) transcript.Part {
	data, _ := json.Marshal(input)
	return transcript.Part{Type: transcript.PartToolCall, Name: name, ID: id, Input: data}
}

func result(id, out string) transcript.Part {
	return transcript.Part{Type: transcript.PartToolResult, ID: id, Output: out}
}

func say(role, text string) transcript.Message {
	return transcript.Message{Role: role, Content: []transcript.Part{{Type: transcript.PartText, Text: text}}}
}

func msgs(parts ...any) *transcript.Transcript {
	t := &transcript.Transcript{Trigger: transcript.TriggerAgentEnd}
	for _, p := range parts {
		switch p := p.(type) {
		case transcript.Message:
			t.Messages = append(t.Messages, p)
		case transcript.Part:
			role := transcript.RoleAssistant
			if p.Type == transcript.PartToolResult {
				role = transcript.RoleTool
			}
			t.Messages = append(t.Messages, transcript.Message{Role: role, Content: []transcript.Part{p}})
		}
	}
	return t
}

func TestEvidence(t *testing.T) {
	search := call("search_docs", "c1", map[string]any{"query": "renew credentials"})
	quote := say(transcript.RoleAssistant, "The docs say rotation replaces the active signing key and keeps the old one valid, so nothing breaks.")
	keys := []string{"ops:keys.md:Keys>Rotate the signing key"}
	cases := []struct {
		name string
		t    *transcript.Transcript
		want []string // repo:path:heading>heading, how
		how  string
	}{
		{"quoted after an MCP search", msgs(search, result("c1", mcpReply), quote), keys, "quoted"},
		{"quoted after a plugin search", msgs(call("semantic_doc_search", "c1", map[string]any{"query": "renew credentials"}),
			result("c1", pluginReply), quote), keys, "quoted"},
		{"ran its command", msgs(search, result("c1", mcpReply),
			call("exec", "c2", map[string]any{"command": "knowhub keys rotate --grace 24h && echo ok"})), keys, "ran"},
		{"read the section", msgs(search, result("c1", mcpReply), call("read_docs", "c2", map[string]any{"id": "abc"}),
			result("c2", "ops:keys.md (4 sections on the page)\n\n§ Keys > Rotate the signing key [id abc]\nRotation replaces...")), keys, "read"},
		{"read its page", msgs(search, result("c1", mcpReply), call("read_docs", "c2", map[string]any{"repo": "ops", "path": "keys.md"}),
			result("c2", "ops:keys.md (2 sections on the page)\n\n§ Keys [id a]\nx\n\n§ Keys > Rotate the signing key [id b]\ny")), keys, "read"},
		{"cited by a helpful entry", msgs(search, result("c1", mcpReply),
			call("kb_search", "k1", map[string]any{"query": "rotate"}),
			result("k1", `<entry n="1" id="kb-7" score="0.9"><task>rotate keys</task><content>See ops:keys.md, then run the rotate command.</content></entry>`),
			call("kb_update", "k2", map[string]any{"knowledge_id": "kb-7", "is_helpful": true})), keys, "cited"},
		// Not evidence.
		{"an entry rated harmful", msgs(search, result("c1", mcpReply),
			call("kb_search", "k1", map[string]any{"query": "rotate"}),
			result("k1", `<entry n="1" id="kb-7" score="0.9"><task>rotate keys</task><content>See ops:keys.md.</content></entry>`),
			call("kb_update", "k2", map[string]any{"knowledge_id": "kb-7", "is_helpful": false})), nil, ""},
		{"a helpful entry citing nothing shown", msgs(search, result("c1", mcpReply),
			call("kb_search", "k1", map[string]any{"query": "rotate"}),
			result("k1", `<entry n="1" id="kb-7" score="0.9"><task>rotate keys</task><content>See ops:other.md.</content></entry>`),
			call("kb_update", "k2", map[string]any{"knowledge_id": "kb-7", "is_helpful": true})), nil, ""},
		{"no use", msgs(search, result("c1", mcpReply), say(transcript.RoleAssistant, "I could not find it.")), nil, ""},
		{"a short quote", msgs(search, result("c1", mcpReply), say(transcript.RoleAssistant, "the active signing key")), nil, ""},
		{"a quote by the user", msgs(search, result("c1", mcpReply), say(transcript.RoleUser, quote.Content[0].Text)), nil, ""},
		{"two sections used", msgs(search, result("c1", mcpReply), quote,
			say(transcript.RoleAssistant, "Certificates are read from the tls directory at start and reloaded on change.")), nil, ""},
		{"an error result", msgs(search, transcript.Part{Type: transcript.PartToolResult, ID: "c1", Output: mcpReply, IsError: true}, quote), nil, ""},
		{"use after the next search", msgs(search, result("c1", mcpReply),
			call("search_docs", "c3", map[string]any{"query": "other"}), result("c3", "No documentation section matches."), quote), nil, ""},
		{"another tool's result", msgs(call("web_search", "c1", map[string]any{"query": "renew credentials"}), result("c1", mcpReply), quote), nil, ""},
		{"no query", msgs(call("search_docs", "c1", map[string]any{"q": "x"}), result("c1", mcpReply), quote), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			how := ""
			for _, u := range Evidence(c.t) {
				got = append(got, u.Repo+":"+u.Path+":"+strings.Join(u.HeadingPath, ">"))
				how = u.How
				if u.Query != "renew credentials" {
					t.Errorf("query %q", u.Query)
				}
			}
			if !slices.Equal(got, c.want) || how != c.how {
				t.Errorf("got %q (%s), want %q (%s)", got, how, c.want, c.how)
			}
		})
	}
}

func TestEvidenceJSONReply(t *testing.T) {
	reply := `{"query":"renew credentials","hits":[{"collection":"docs","repo":"ops","path":"keys.md","heading_path":["Keys","Rotate the signing key"],
"chunk_id":"a","score":7,"content":"Run ` + "`knowhub keys rotate --grace 24h`" + ` to rotate.","seq":1,"priority":1,"repo_type":"core"}],"total":1}`
	tr := msgs(call("docsearch", "", map[string]any{"query": "renew credentials"}), result("", reply),
		call("bash", "", map[string]any{"cmd": "knowhub keys rotate --grace 24h"}))
	uses := Evidence(tr)
	if len(uses) != 1 || uses[0].How != "ran" || uses[0].Path != "keys.md" || strings.Join(uses[0].HeadingPath, ">") != "Keys>Rotate the signing key" {
		t.Fatalf("uses %+v", uses)
	}
}

func TestWords(t *testing.T) {
	an := analysis.New()
	cases := []struct{ query, want string }{
		{"Renew expired credentials", "renew expired credentials"},
		{"how do I renew the credentials?", "renew credentials"},
		{"rate-limit retries", "rate limit retries"},
		{"renew renew RENEW", "renew"},
		// Dropped: secrets, addresses, numbers, placeholders, names,
		// identifiers, random strings.
		{"token ghp_R8x2kQ9vLm3nP7wZ4tY6uB1cD5eF0gH2iJ4k rotate", "token rotate"},
		{"mail alice@example.com about [email] rotation", "mail rotation"},
		{"port 8443 on 10.0.0.1 via https://x.example.com/a", "port via"},
		{"ask Alice Smith about rotation", "ask rotation"},
		{"set KH_TOKEN=abc or kh.tools.t value", "set value"},
		{"xkcdqrst zzzqa bcdfghk renewal", "renewal"},
		{"getUser iPhone AWS renewal", "aws renewal"},
		{"[REDACTED:github-pat] leaked", "leaked"},
		{"one two three four five six seven eight nine ten eleven", "one two three four five six seven eight"},
		{"证书 更新", "证书 更新"},
	}
	for _, c := range cases {
		if got := strings.Join(Words(c.query, an), " "); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

// FuzzWords: whatever the query, Words returns at most MaxLearnedWords
// distinct lower-case words of letters only, 3 to 24 bytes.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"renew expired credentials", "ghp_R8x2kQ9vLm3nP7wZ4tY6uB1cD5eF0gH2iJ4k", "a@b.c [email] 10.0.0.1", "证书 更新 Alice", "rate-limit--x"} {
		f.Add(s)
	}
	an := analysis.New()
	f.Fuzz(func(t *testing.T, q string) {
		words := Words(q, an)
		if len(words) > contract.MaxLearnedWords {
			t.Fatalf("%d words", len(words))
		}
		seen := map[string]bool{}
		for _, w := range words {
			if seen[w] || len(w) < 3 || len(w) > contract.MaxLearnedWordLen || strings.ToLower(w) != w ||
				strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) {
				t.Fatalf("word %q of %q", w, q)
			}
			seen[w] = true
		}
	})
}
