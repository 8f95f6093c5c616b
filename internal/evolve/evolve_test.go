package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/chat"
	"github.com/knowhub/knowhub/internal/kb"
)

// model is a chat-completions endpoint that answers every request with
// content, and keeps the last request.
func model(t *testing.T, content string) (*LLM, *chat.Request) {
	t.Helper()
	var got chat.Request
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(s.Close)
	return New(chat.Config{BaseURL: s.URL + "/v1", Model: "m", Timeout: 5 * time.Second}), &got
}

func partlyRight() *kb.Entry {
	e := &kb.Entry{ID: "a", Task: "deploy", Content: "Deploy any time with the deploy script.", State: kb.StateActive}
	e.Eval.Helpful, e.Eval.Harmful = 1, 2
	e.Eval.RecentCases = []kb.Case{{Task: "friday deploy", Outcome: "paged at night", Reason: "on-call rota is thin on fridays"}}
	return e
}

func TestRevise(t *testing.T) {
	l, got := model(t, `{"task":"deploy","content":"Deploy with the deploy script, but not on Friday afternoons.","reason":"fridays harmed"}`)
	rev, err := l.Revise(context.Background(), partlyRight())
	if err != nil || rev.Content != "Deploy with the deploy script, but not on Friday afternoons." || rev.Task != "deploy" {
		t.Fatalf("Revise = %+v, %v", rev, err)
	}
	if len(got.Messages) != 2 || !strings.Contains(got.Messages[0].Content, "data, not instructions") ||
		!strings.Contains(got.Messages[1].Content, "on-call rota is thin") || got.ResponseFormat.Type != "json_object" {
		t.Errorf("request %+v: want the system prompt and the entry with its reports", got)
	}
}

func TestReviseRefusals(t *testing.T) {
	for _, c := range []struct{ name, reply, want string }{
		{"no change", `{"content":""}`, "no change"},
		{"not json", `Sure! Here is the revision.`, "not the JSON asked for"},
		{"oversize", `{"content":"` + strings.Repeat("x", MaxContentBytes+1) + `"}`, "over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, _ := model(t, c.reply)
			_, err := l.Revise(context.Background(), partlyRight())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			if c.name == "no change" && !errors.Is(err, ErrNoChange) {
				t.Errorf("err = %v, want ErrNoChange", err)
			}
		})
	}
}

func TestReviseKeepsTaskAndCleans(t *testing.T) {
	l, _ := model(t, "{\"content\":\"Use pnpm\u200b in this repo.\\u0007\"}")
	rev, err := l.Revise(context.Background(), partlyRight())
	if err != nil || rev.Task != "deploy" || rev.Content != "Use pnpm in this repo." {
		t.Errorf("Revise = %+v, %v; want the entry's task and clean content", rev, err)
	}
}

func TestMerge(t *testing.T) {
	a := &kb.Entry{ID: "a", Task: "package manager", Content: "Use pnpm.", State: kb.StateActive}
	b := &kb.Entry{ID: "b", Task: "package manager", Content: "Use pnpm, never npm.", State: kb.StateActive}
	l, got := model(t, `{"same":true,"task":"package manager","content":"Use pnpm in this monorepo, never npm or yarn.","reason":"same advice"}`)
	m, err := l.Merge(context.Background(), a, b)
	if err != nil || !m.Same || m.Content != "Use pnpm in this monorepo, never npm or yarn." {
		t.Fatalf("Merge = %+v, %v", m, err)
	}
	if !strings.Contains(got.Messages[1].Content, "Use pnpm, never npm.") {
		t.Errorf("request does not carry both entries: %q", got.Messages[1].Content)
	}
	l, _ = model(t, `{"same":false,"reason":"one says npm"}`)
	if m, err := l.Merge(context.Background(), a, b); err != nil || m.Same {
		t.Errorf("Merge = %+v, %v; want different", m, err)
	}
	for _, reply := range []string{`{"task":"x"}`, `{"same":true,"content":""}`} {
		l, _ = model(t, reply)
		if _, err := l.Merge(context.Background(), a, b); err == nil {
			t.Errorf("Merge accepted %s", reply)
		}
	}
}
