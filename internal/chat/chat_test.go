package chat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestComplete(t *testing.T) {
	var got Request
	var auth string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"`+"```json\\n{\\\"ok\\\":true}\\n```"+`"}}]}`)
	}))
	t.Cleanup(s.Close)
	c := New(Config{BaseURL: s.URL + "/v1/", Model: "m", APIKey: "k"})
	content, err := c.Complete(context.Background(), []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}})
	if err != nil || content != `{"ok":true}` {
		t.Fatalf("Complete = %q, %v", content, err)
	}
	if auth != "Bearer k" || got.Model != "m" || got.ResponseFormat.Type != "json_object" || got.Stream || len(got.Messages) != 2 {
		t.Errorf("request: auth %q, %+v", auth, got)
	}
}

func TestCompleteErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"status", "", "HTTP 500: upstream [clean]"},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"no"}}]}`, "model refused: no [clean]"},
		{"empty", `{"choices":[{"message":{"content":" "}}]}`, "empty content"},
		{"no choices", `{"choices":[]}`, "no choices"},
		{"not json", `<html>`, "decode chat completion"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.body == "" {
					http.Error(w, "upstream", http.StatusInternalServerError)
					return
				}
				io.WriteString(w, c.body)
			}))
			t.Cleanup(s.Close)
			cl := New(Config{BaseURL: s.URL, Model: "m", Clean: func(s string) string { return strings.TrimSpace(s) + " [clean]" }})
			if _, err := cl.Complete(context.Background(), nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestCompleteTimeout(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	_, err := New(Config{BaseURL: s.URL, Model: "m", Timeout: 50 * time.Millisecond}).Complete(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "post chat completion") {
		t.Errorf("err = %v, want a timeout", err)
	}
}

func TestValidate(t *testing.T) {
	if err := (Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "m"}).Validate(); err != nil {
		t.Error(err)
	}
	err := Config{BaseURL: "localhost", Timeout: -1}.Validate()
	for _, w := range []string{"base_url", "model: required", "timeout"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want %q", err, w)
		}
	}
}
