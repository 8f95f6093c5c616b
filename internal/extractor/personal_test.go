package extractor

import (
	"encoding/json"
	"math/rand/v2"

	"github.com/knowhub/knowhub/internal/transcript"
)

// The same personal transcript as package transcript's tests: what the
// LLM extractor must sanitize before anything leaves the process.

// fake returns n pseudo-random characters of alphabet, the same for the
// same seed, so that no file holds a literal secret.
func fake(seed uint64, alphabet string, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x6b6e6f77687562))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Fake secrets of the kinds the shared redactor finds.
var (
	fakeGitHubPAT = "ghp_" + fake(1, alnum, 36)
	fakeBearer    = fake(2, alnum+"-_", 48)
)

// personalTranscript holds personal data and a secret in every place a
// transcript can hold text.
func personalTranscript() *transcript.Transcript {
	in, _ := json.Marshal(map[string]any{
		"command": "scp /home/alice/dump.sql alice@example.com:/tmp && curl -H 'Authorization: Bearer " + fakeBearer + "' http://10.1.2.3/",
		"env":     map[string]string{"/Users/alice/key": "+1 415 555 0134"},
	})
	return &transcript.Transcript{
		AgentID:     "coder",
		SubmittedBy: "alice",
		SessionKey:  "agent:coder:main",
		Trigger:     transcript.TriggerAgentEnd,
		Messages: []transcript.Message{
			{Role: transcript.RoleSystem, Content: []transcript.Part{{Type: transcript.PartText, Text: "operator prompt with ops@example.com"}}},
			{Role: transcript.RoleDeveloper, Content: []transcript.Part{{Type: transcript.PartText, Text: "developer prompt"}}},
			{Role: transcript.RoleUser, Content: []transcript.Part{{Type: transcript.PartText, Text: "I'm alice@example.com, my token is " + fakeGitHubPAT}}},
			{Role: transcript.RoleAssistant, Content: []transcript.Part{{Type: transcript.PartToolCall, Name: "exec", ID: "c1", Input: in}}},
			{Role: transcript.RoleTool, Content: []transcript.Part{{Type: transcript.PartToolResult, ID: "c1", Output: "copied to C:\\Users\\alice\\Desktop; called 415-555-0134 from 2001:db8::7"}}},
		},
	}
}
