package app

import (
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/kb"
)

// TestKnowledgeSaveDefaultsToTokenScopes checks that a scoped token's save
// without a scopes field stays within the token's scopes: the writer finds
// it, a token of another organization neither finds nor reads it.
func TestKnowledgeSaveDefaultsToTokenScopes(t *testing.T) {
	a := startKBAPI(t)
	for _, scopes := range []any{nil, []string{}} {
		body := map[string]any{
			"task": "rotating the beta signing key", "content": "Rotate the beta signing key with make rotate-key before the release freeze.",
			"types": []string{"strategy"}, "score": 4,
		}
		if scopes != nil {
			body["scopes"] = scopes
			body["content"] = "Run make rotate-key twice in beta: the first run only stages the new key."
		}
		s := a.save(bobToken, body)
		if s.ID == "" || s.State != kb.StateActive {
			t.Fatalf("save reply %+v", s)
		}
		// The search waits for the save (min_seq), so the record is there.
		if r := a.search(bobToken, "rotate beta signing key", s.Seq, ""); !slices.Contains(ids(r), s.ID) {
			t.Errorf("scopes %v: bob does not find his own entry: %v", scopes, ids(r))
		}
		var got kb.Entry
		if code := a.do("GET", "/api/knowledge/"+s.ID, bobToken, nil, &got); code != 200 || !slices.Equal(got.Scopes, []string{"org:beta"}) {
			t.Errorf("scopes %v: bob's entry has scopes %v (%d), want [org:beta]", scopes, got.Scopes, code)
		}
		if r := a.search(aliceToken, "rotate beta signing key", s.Seq, ""); slices.Contains(ids(r), s.ID) {
			t.Errorf("scopes %v: alice (org:acme) found bob's (org:beta) entry", scopes)
		}
		if code := a.do("GET", "/api/knowledge/"+s.ID, aliceToken, nil, nil); code != 404 {
			t.Errorf("scopes %v: alice reading bob's entry: %d, want 404", scopes, code)
		}
	}
}
