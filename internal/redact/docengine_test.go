package redact

import (
	"strings"
	"testing"
)

// The OpenClaw doc-engine plugin's default secretPatterns catch any value
// of their shapes, however unrealistic; knowhub's built-in rules do too,
// while illustrations stay.
func TestDocEngineDefaultShapes(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	caught := []struct{ in, want string }{
		{"My key is sk-" + "abcdefghijklmnopqrstuvwxyz1234567890", "My key is [REDACTED:openai-api-key]"},
		{"Google key: AIza" + "SyA1234567890abcdefghijklmnopqrstuv", "Google key: [REDACTED:gcp-api-key]"},
		{"Token: ghp_" + "abcdefghijklmnopqrstuvwxyz1234567890", "Token: [REDACTED:github-pat]"},
		{"Slack: xoxb-" + "123-456-abcdef", "Slack: [REDACTED:slack-token]"},
		{"OpenAI: sk-" + "abcdefghijklmnopqrstuvwxyz1234567890 and GitHub: ghp_" + "abcdefghijklmnopqrstuvwxyz1234567890",
			"OpenAI: [REDACTED:openai-api-key] and GitHub: [REDACTED:github-pat]"},
	}
	for _, c := range caught {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	kept := []string{
		"This is just a normal paragraph with no secrets.",
		"OPENAI_API_KEY=sk-... and SLACK_BOT_TOKEN=xoxb-...",
		"token: xoxb-your-bot-token-here",
		"key: sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"ghp_${GITHUB_TOKEN_SUFFIX_PLACEHOLDER_VALUE}",
		"the task-abcdefghijklmnopqrstuvwxyz runner", // sk- inside a word
	}
	for _, s := range kept {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

// A custom pattern (the plugin's "supports custom patterns" case) is added
// to the defaults, which keep working.
func TestCustomPatternAddedToDefaults(t *testing.T) {
	r, err := New([]Pattern{{Name: "secret-pattern-1", Regex: "CUSTOM-[A-Z]{10}"}})
	if err != nil {
		t.Fatal(err)
	}
	got := r.String("My custom key: CUSTOM-ABCDEFGHIJ, Slack: xoxb-" + "123-456-abcdef")
	if want := "My custom key: [REDACTED:secret-pattern-1], Slack: [REDACTED:slack-token]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if strings.Contains(got, "CUSTOM-") {
		t.Error("custom secret survived")
	}
}
