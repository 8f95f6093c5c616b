package app

import (
	"testing"

	"github.com/knowhub/knowhub/internal/kb"
)

type updateReply struct {
	ID      string         `json:"id"`
	Seq     uint64         `json:"seq"`
	Evolved []kb.Evolution `json:"evolved"`
	Error   string         `json:"error"`
}

// vote records feedback on id through the KnowHub plugin's endpoint.
func (a *kbAPI) vote(token, id string, helpful bool) updateReply {
	a.t.Helper()
	field := "add_helpful_case"
	if !helpful {
		field = "add_harmful_case"
	}
	var r updateReply
	if code := a.do("PUT", "/api/knowledge/"+id, token, map[string]any{field: map[string]any{"task": "deploy", "outcome": "it broke"}}, &r); code != 200 {
		a.t.Fatalf("feedback on %s: %d %s", id, code, r.Error)
	}
	return r
}

// Knowledge evolves through feedback: repeated harmful reports retire an
// entry into the review queue, from which review can bring it back; a
// partly right entry is replaced by its revision; linked near duplicates
// are merged with their feedback.
func TestKnowledgeEvolves(t *testing.T) {
	a := startKBAPI(t)

	// Retired by three harmful votes.
	bad := a.save(aliceToken, map[string]any{"task": "restart the api", "content": "Restart the api pods with kubectl delete pod --all in production.",
		"types": []string{"strategy"}, "scopes": []string{"org:acme"}})
	a.search(aliceToken, "restart api pods", bad.Seq, "") // indexed: feedback finds it
	var last updateReply
	for i := range 3 {
		last = a.vote(aliceToken, bad.ID, false)
		if retired := len(last.Evolved) > 0; retired != (i == 2) {
			t.Fatalf("harmful vote %d: evolved %+v", i+1, last.Evolved)
		}
	}
	if e := last.Evolved[0]; e.Action != kb.EvolvedRetired || e.ID != bad.ID {
		t.Errorf("third harmful vote evolved %+v, want %s retired", e, bad.ID)
	}
	if r := a.search(aliceToken, "restart api pods", last.Seq, ""); len(r.Results) != 0 {
		t.Errorf("a retired entry is served: %v", ids(r))
	}
	var review struct {
		Entries []kb.Entry `json:"entries"`
	}
	if code := a.do("GET", "/api/knowledge/review", adminToken, nil, &review); code != 200 || len(review.Entries) != 1 || review.Entries[0].State != kb.StateRetired {
		t.Fatalf("review queue: %d %+v, want the retired entry", code, review.Entries)
	}
	var rel updateReply
	if code := a.do("POST", "/api/knowledge/"+bad.ID+"/release", adminToken, map[string]any{}, &rel); code != 200 {
		t.Fatalf("release of the retired entry: %d %s", code, rel.Error)
	}
	if r := a.search(aliceToken, "restart api pods", rel.Seq, ""); len(r.Results) != 1 {
		t.Errorf("a released entry is not served again: %v", ids(r))
	}

	// A partly right entry is revised: the revision replaces it.
	old := a.save(aliceToken, map[string]any{"task": "deploy on fridays", "content": "Deploy any time with the deploy script.",
		"types": []string{"strategy"}, "scopes": []string{"org:acme"}})
	a.search(aliceToken, "deploy script", old.Seq, "")
	var rev updateReply
	if code := a.do("POST", "/api/knowledge/"+old.ID+"/revise", aliceToken, map[string]any{
		"content": "Deploy with the deploy script, but not on Friday afternoons: the on-call rota is thin.", "reason": "partly right"}, &rev); code != 200 {
		t.Fatalf("revise: %d %s", code, rev.Error)
	}
	if len(rev.Evolved) != 1 || rev.Evolved[0].Action != kb.EvolvedRevised || rev.Evolved[0].Into == "" {
		t.Fatalf("revise evolved %+v", rev.Evolved)
	}
	newID := rev.Evolved[0].Into
	if r := a.search(aliceToken, "deploy script friday", rev.Seq, ""); len(r.Results) != 1 || r.Results[0].ID != newID || r.Results[0].Revises != old.ID {
		t.Errorf("after the revision search shows %v, want only %s revising %s", ids(r), newID, old.ID)
	}
	var oldNow kb.Entry
	if a.do("GET", "/api/knowledge/"+old.ID, aliceToken, nil, &oldNow); oldNow.State != kb.StateSuperseded || oldNow.SupersededBy != newID {
		t.Errorf("revised entry is %s by %q, want superseded by %s", oldNow.State, oldNow.SupersededBy, newID)
	}
	// Another tenant cannot revise what it cannot see.
	if code := a.do("POST", "/api/knowledge/"+newID+"/revise", bobToken, map[string]any{"content": "Deploy whenever."}, nil); code != 404 {
		t.Errorf("revision by another tenant: %d, want 404", code)
	}

	// Linked near duplicates (saved by different owners) merge with their
	// feedback when one of them gets feedback.
	first := a.save(aliceToken, map[string]any{"task": "package manager", "content": "Always use pnpm in this monorepo, never npm or yarn.",
		"types": []string{"user_profile"}, "scopes": []string{"org:acme"}, "owner": "alice"})
	a.search(aliceToken, "pnpm", first.Seq, "")
	a.vote(aliceToken, first.ID, true)
	second := a.save(aliceToken, map[string]any{"task": "package manager", "content": "Always use pnpm in this monorepo: never use npm or yarn.",
		"types": []string{"user_profile"}, "scopes": []string{"org:acme"}, "owner": "carol"})
	if second.Duplicate != kb.DuplicateNear {
		t.Fatalf("second save %+v, want a linked near duplicate", second)
	}
	a.search(aliceToken, "pnpm", second.Seq, "")
	merged := a.vote(aliceToken, second.ID, true)
	if len(merged.Evolved) != 1 || merged.Evolved[0].Action != kb.EvolvedMerged {
		t.Fatalf("feedback on a linked near duplicate evolved %+v, want a merge", merged.Evolved)
	}
	into := merged.Evolved[0].Into
	r := a.search(aliceToken, "pnpm monorepo", merged.Seq, "")
	if len(r.Results) != 1 || r.Results[0].ID != into || r.Results[0].Eval.Helpful != 2 || len(r.Results[0].MergedFrom) != 1 {
		t.Errorf("after the merge search shows %+v, want one entry with both helpful votes", r.Results)
	}
}
