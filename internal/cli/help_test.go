package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// noServer is a NATS URL where nothing listens: help, version and usage
// errors must not need a server.
const noServer = "nats://127.0.0.1:1"

func TestHelpAndVersionNeedNoServer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in stdout
		not  []string // not in stdout
	}{
		{[]string{"--help"}, []string{"knowhub up [DIR ...]", "knowhub COMMAND -h"}, nil},
		{[]string{"help", "search"}, []string{"usage: knowhub search", "-top-k"}, nil},
		{[]string{"--version"}, []string{"knowhub ", "go1."}, nil},
		{[]string{"version"}, []string{"knowhub "}, nil},
		{[]string{"search", "-h"}, []string{"-repo", "-nats-url"}, []string{"-content"}},
		{[]string{"kb", "-h"}, []string{"knowhub kb save", "knowhub kb review"}, nil},
		{[]string{"kb", "search", "-h"}, []string{"-min-score", "-types"}, []string{"-content", "-transcript", "-owner"}},
		{[]string{"kb", "save", "--help"}, []string{"-content", "-types"}, []string{"-min-score", "-format"}},
		{[]string{"kb", "replay", "-h"}, []string{"usage: knowhub kb replay"}, []string{"-task"}},
		{[]string{"tools", "-h"}, []string{"knowhub tools add", "knowhub tools search"}, nil},
		{[]string{"tools", "rm", "-h"}, []string{"knowhub tools rm NAME"}, []string{"-limit"}},
		{[]string{"tools", "search", "-h"}, []string{"-limit", "-instance"}, nil},
		{[]string{"worker", "-h"}, []string{"knowhub worker watcher|chunker"}, nil},
		{[]string{"worker", "query", "-h"}, []string{"-http"}, []string{"-metrics"}},
		{[]string{"worker", "indexer", "-h"}, []string{"-metrics"}, []string{"-http"}},
		{[]string{"reindex", "-h"}, []string{"-rescan", "-json"}, nil},
		{[]string{"extract", "-h"}, []string{"-replay", "-json"}, nil},
		{[]string{"up", "-h"}, []string{"-nats-listen", "-data"}, nil},
		{[]string{"eval", "-h"}, []string{"knowhub eval --sets SETS_DIR", "-semantic"}, []string{"-nats-url"}},
	} {
		name := strings.Join(tc.args, " ")
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append(tc.args, "--nats-url", noServer), &out, &errOut)
		if code != 0 {
			t.Errorf("knowhub %s: exit %d, stderr %q", name, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("knowhub %s: stdout lacks %q:\n%s", name, w, out.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out.String(), w) {
				t.Errorf("knowhub %s: stdout has %q, a flag of another command:\n%s", name, w, out.String())
			}
		}
	}
}

func TestUsageErrorsAreShortAndNeedNoServer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--bogus", "x"}, "flag provided but not defined: -bogus"},
		{[]string{"kb", "search", "--content", "x", "q"}, "flag provided but not defined: -content"},
		{[]string{"kb", "frob"}, `unknown kb subcommand "frob"`},
		{[]string{"tools", "frob"}, `unknown tools subcommand "frob"`},
		{[]string{"tools", "search", "--top-k", "3", "q"}, "flag provided but not defined: -top-k"},
		{[]string{"worker", "frob"}, `unknown stage "frob"`},
		{[]string{"stats", "--top-k=3"}, "flag provided but not defined: -top-k"},
		{[]string{"kb", "replay", "extra"}, `unexpected argument "extra"`},
	} {
		name := strings.Join(tc.args, " ")
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append(tc.args, "--nats-url", noServer), &out, &errOut)
		if code != 2 {
			t.Errorf("knowhub %s: exit %d, want 2; stderr %q", name, code, errOut.String())
		}
		msg := errOut.String()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("knowhub %s: stderr lacks %q:\n%s", name, tc.want, msg)
		}
		if n := strings.Count(strings.TrimSpace(msg), "\n") + 1; n > 3 {
			t.Errorf("knowhub %s: %d lines on stderr, want at most 3:\n%s", name, n, msg)
		}
		if strings.Contains(msg, "connect") || strings.Contains(msg, "no servers") {
			t.Errorf("knowhub %s: tried to connect:\n%s", name, msg)
		}
	}
}

// -h lists the command's own flags first and the flags every command
// shares (configuration, logging, the NATS connection) under a heading of
// their own.
func TestHelpListsTheCommandsFlagsFirst(t *testing.T) {
	for _, args := range [][]string{{"search", "-h"}, {"kb", "save", "-h"}, {"reindex", "-h"}, {"tools", "search", "-h"}} {
		var out bytes.Buffer
		if code := Main(t.Context(), args, &out, &bytes.Buffer{}); code != 0 {
			t.Fatalf("knowhub %s: exit %d", strings.Join(args, " "), code)
		}
		help := out.String()
		heading := strings.Index(help, "configuration and connection flags")
		if heading < 0 {
			t.Errorf("knowhub %s: no heading for the shared flags:\n%s", strings.Join(args, " "), help)
			continue
		}
		own, shared := help[:heading], help[heading:]
		for _, f := range []string{"-nats-url", "-config", "-log-level", "-nats-creds"} {
			if strings.Contains(own, "  "+f+" ") || !strings.Contains(shared, "  "+f+" ") {
				t.Errorf("knowhub %s: %s is not listed under the shared heading:\n%s", strings.Join(args, " "), f, help)
			}
		}
		if !strings.Contains(own, "  -json") {
			t.Errorf("knowhub %s: -json is not among the command's own flags:\n%s", strings.Join(args, " "), help)
		}
	}
}

// Matched words are bold on a terminal and unmarked elsewhere: never the
// literal **word** of the Markdown the snippet is made as.
func TestSearchHighlighting(t *testing.T) {
	resp := &contract.SearchResponse{Query: "fallback", Total: 1, Hits: []contract.SearchHit{{Repo: "docs", Path: "a.md", Snippet: "set the **fallback** chain"}}}
	for _, ansi := range []bool{false, true} {
		var out bytes.Buffer
		printHits(&out, resp, ansi)
		want := "set the fallback chain"
		if ansi {
			want = "set the \x1b[1mfallback\x1b[22m chain"
		}
		if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "**") {
			t.Errorf("ansi %v: %q, want it to hold %q", ansi, out.String(), want)
		}
	}
	// Not a terminal: plain, whatever the environment says.
	if ansiStyles(&bytes.Buffer{}, func(string) (string, bool) { return "", false }) {
		t.Error("a buffer is taken for a terminal")
	}
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	for _, tc := range []struct {
		vars map[string]string
		want bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, true},
		{map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
		{map[string]string{"TERM": "xterm", "NO_COLOR": ""}, true},
		{map[string]string{"TERM": "dumb"}, false},
	} {
		if got := stylesWanted(env(tc.vars)); got != tc.want {
			t.Errorf("styles with %v: %v, want %v", tc.vars, got, tc.want)
		}
	}
}

// knowhub health exits 0 on a 200 and 1, with the status and body, on
// anything else.
func TestHealth(t *testing.T) {
	ready := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ready {
			http.Error(w, `{"ready":false,"reason":"no space left on device"}`, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"ready":true}`)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := Main(t.Context(), []string{"health", srv.URL + "/readyz"}, &out, &errOut); code != 0 {
		t.Errorf("ready: exit %d: %s", code, errOut.String())
	}
	ready = false
	errOut.Reset()
	if code := Main(t.Context(), []string{"health", srv.URL + "/readyz"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "503") || !strings.Contains(errOut.String(), "no space left") {
		t.Errorf("not ready: exit %d: %s", code, errOut.String())
	}
	if code := Main(t.Context(), []string{"health", "ftp://x"}, &out, &errOut); code != 2 {
		t.Errorf("a URL that is not http: exit %d", code)
	}
}

// The embedder stage without an endpoint says what to configure, and
// connects to nothing.
func TestEmbedderWithoutAnEndpoint(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(t.Context(), []string{"worker", "embedder", "--nats-url", noServer}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "the embedder needs semantic.embeddings.url and model") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}
