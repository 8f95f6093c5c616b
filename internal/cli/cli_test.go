package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

// run executes the knowhub command against url and returns its output.
func run(t *testing.T, url string, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(t.Context(), append(args, "--nats-url", url), &out, &errOut)
	return out.String() + errOut.String(), code
}

// runStdout is run with stdout alone.
func runStdout(t *testing.T, url string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := Main(t.Context(), append(args, "--nats-url", url), &out, io.Discard)
	return out.String(), code
}

// runKnowhub runs every worker of cfg (its HTTP API off) on srv until the
// test ends, waits until the repositories are indexed, and returns the
// NATS URL to pass the commands.
func runKnowhub(t *testing.T, srv *natstest.Server, cfg *config.Config) string {
	t.Helper()
	cfg.HTTP.Listen = config.HTTPOff
	ctx, cancel := context.WithCancel(context.Background())
	node, err := app.NewNode(ctx, cfg, srv.NC, srv.JS, app.All, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-node.Watcher.Ready()
	<-node.API.Ready()
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	if err := app.WaitCaughtUp(wctx, srv.JS, node.Query.Engine().Revision); err != nil {
		t.Fatal(err)
	}
	select { // replies no longer say the index is being built
	case <-node.Complete():
	case <-wctx.Done():
		t.Fatal("the initial sync is not complete")
	}
	return srv.ClientURL()
}

func TestCommandsAgainstARunningKnowhub(t *testing.T) {
	srv := natstest.Start(t, "")
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "guide.md"), []byte("# Guide\n\n## Fallbacks\n\nConfigure a fallback model chain.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Repositories = []config.Repository{{Name: "docs", Path: docs, Priority: 10, Type: "core", Glob: config.DefaultGlob}}
	url := runKnowhub(t, srv, cfg)

	expect := func(want string, args ...string) string {
		t.Helper()
		out, code := run(t, url, args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("knowhub %s: exit %d, output lacks %q:\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	expect("guide.md  § Guide > Fallbacks", "search", "fallback", "model", "chain")
	expect(`"chunk_id"`, "search", "--json", "--top-k", "1", "fallback")
	// A hit's id reads its section back, and the page reads in order.
	idOut, _ := runStdout(t, url, "search", "--json", "--top-k", "1", "fallback")
	var found struct {
		Hits []struct {
			ChunkID string `json:"chunk_id"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(idOut), &found); err != nil || len(found.Hits) != 1 {
		t.Fatalf("search --json: %v %s", err, idOut)
	}
	expect("§ Guide > Fallbacks  ["+found.Hits[0].ChunkID+"]\nConfigure a fallback model chain.", "read", found.Hits[0].ChunkID)
	expect("docs  guide.md  (1 section on the page)", "read", "--repo", "docs", "--path", "guide.md")
	if out, code := run(t, url, "read", "nosuchsection"); code != 1 || !strings.Contains(out, "not found") {
		t.Errorf("read of an unknown section: exit %d %q", code, out)
	}
	expect("Configure a fallback model chain.\n\nabout ", "search", "--max-tokens", "200", "fallback", "model", "chain")
	for _, budget := range []int{200, 1000, 4000} {
		out, _ := runStdout(t, url, "search", "--json", "--max-tokens", strconv.Itoa(budget), "fallback", "model", "chain")
		var r struct {
			Tokens int `json:"tokens"`
			Hits   []struct {
				Path string `json:"path"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Tokens <= 0 || r.Tokens > budget || len(r.Hits) == 0 || r.Hits[0].Path != "guide.md" {
			t.Errorf("search --max-tokens %d --json: %v, %d tokens, %s", budget, err, r.Tokens, out)
		}
	}
	expect("files     1", "stats")
	expect("guide.md", "search", "--repo", "docs", "fallback")
	if out, code := run(t, url, "search", "--repo", "nosuch", "fallback"); code != 1 || !strings.Contains(out, `no repository "nosuch"`) {
		t.Errorf("search an unknown repository: exit %d %q, want exit 1 naming it", code, out)
	}
	expect("1 file and 0 deletions republished", "reindex", "--wait", "10s")
	expect(`"caught_up": true`, "reindex", "--wait", "10s", "--json")
	// Without a configuration, a rescan asks the running watcher, which
	// knows the repositories it was started with.
	expect("rescanned docs: 1 file published", "reindex", "--rescan", "--wait", "10s")
	expect(`"mode": "rescan"`, "reindex", "--rescan", "--json")
	// A rescan takes the repositories from an OpenClaw config, as up does.
	oc := filepath.Join(t.TempDir(), "openclaw.json")
	os.WriteFile(oc, []byte(`{"plugins":{"entries":{"knowhub":{"config":{"repositories":[{"name":"docs","path":`+strconv.Quote(docs)+`,"priority":10}]}}}}}`), 0o600)
	expect("rescanned: 1 file published", "reindex", "--rescan", "--openclaw", oc, "--wait", "10s")

	catalog := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(catalog, []byte(`[{"name":"Grep","description":"Search file contents with ripgrep.","type":"core"}]`), 0o644)
	expect("1 tool written to the catalog", "tools", "add", catalog)
	natstest.WaitFor(t, 5*time.Second, "tools search to find the added tool", func() bool {
		out, _ := run(t, url, "tools", "search", "grpe")
		return strings.Contains(out, "Grep")
	})
	expect("1 tool removed", "tools", "rm", "Grep")
	// Removing a tool that is not (or no longer) in the catalog fails.
	for _, name := range []string{"Grep", "NoSuchTool"} {
		if out, code := run(t, url, "tools", "rm", name); code != 1 || !strings.Contains(out, "no tool") || !strings.Contains(out, "code 404") {
			t.Errorf("tools rm %s: exit %d %q, want exit 1 and a 404", name, code, out)
		}
	}

	out := expect("active", "kb", "save", "--task", "ci tests", "--content", "Run vitest with --run in CI; watch mode blocks.", "--types", "tool")
	id := strings.Fields(out)[0]
	natstest.WaitFor(t, 5*time.Second, "the saved entry to be searchable", func() bool {
		out, _ := run(t, url, "kb", "search", "vitest", "watch")
		return strings.Contains(out, id)
	})
	// On a node without tokens an entry saved with scopes is found by a
	// search that names none.
	out = expect("active", "kb", "save", "--task", "lint", "--content", "Run eslint with --cache locally; CI lints from scratch.", "--types", "tool", "--scopes", "org:openclaw")
	scoped := strings.Fields(out)[0]
	natstest.WaitFor(t, 5*time.Second, "the scoped entry to be found without scopes", func() bool {
		out, _ := run(t, url, "kb", "search", "eslint", "cache")
		return strings.Contains(out, scoped)
	})
	expect(`"content"`, "kb", "get", id)
	expect("recorded at sequence", "kb", "helpful", id, "--task", "ci", "--outcome", "green")
	expect("nothing is quarantined", "kb", "review")
	if out, code := run(t, url, "kb", "review", "release", id); code != 1 || !strings.Contains(out, "not quarantined") {
		t.Errorf("release of an active entry: exit %d %q, want exit 1 saying it is not quarantined", code, out)
	}

	// Every --json prints one JSON document on stdout and nothing else,
	// whatever the command would print as text.
	for _, args := range [][]string{
		{"search", "--json", "fallback"},
		{"stats", "--json"},
		{"read", "--json", "--repo", "docs", "--path", "guide.md"},
		{"repos", "--json"},
		{"reindex", "--json", "--wait", "10s"},
		{"reindex", "--rescan", "--json", "--wait", "10s"},
		{"tools", "add", "--json", catalog},
		{"tools", "search", "--json", "grep"},
		{"tools", "rm", "--json", "Grep"},
		{"kb", "search", "--json", "vitest"},
		{"kb", "helpful", "--json", id},
		{"kb", "review", "--json"},
		{"kb", "replay", "--json"},
		{"extract", "--replay", "--dry-run", "--json"},
	} {
		stdout, code := runStdout(t, url, args...)
		dec := json.NewDecoder(strings.NewReader(stdout))
		var v any
		if err := dec.Decode(&v); code != 0 || err != nil {
			t.Errorf("knowhub %s: exit %d, stdout is not JSON (%v):\n%s", strings.Join(args, " "), code, err, stdout)
			continue
		}
		if rest, _ := io.ReadAll(dec.Buffered()); strings.TrimSpace(string(rest)) != "" || dec.More() {
			t.Errorf("knowhub %s: stdout holds more than one JSON document:\n%s", strings.Join(args, " "), stdout)
		}
		if v == nil {
			t.Errorf("knowhub %s: prints null", strings.Join(args, " "))
		}
	}
	// A dry run without --json reads as text.
	if out, code := runStdout(t, url, "extract", "--replay", "--dry-run"); code != 0 || strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("extract --replay --dry-run: exit %d, prints JSON unasked:\n%s", code, out)
	}

	// Usage errors exit 2 with a message.
	if out, code := run(t, url, "search"); code != 2 || !strings.Contains(out, "missing query") {
		t.Errorf("search without a query: exit %d %q", code, out)
	}
	if out, code := run(t, url, "frobnicate"); code != 2 || !strings.Contains(out, "unknown command") {
		t.Errorf("unknown command: exit %d %q", code, out)
	}
}

func TestRescanWithoutAWatcherSaysWhatToDo(t *testing.T) {
	srv := natstest.Start(t, "")
	out, code := run(t, srv.ClientURL(), "reindex", "--rescan")
	if code != 1 || !strings.Contains(out, "no watcher is running") || !strings.Contains(out, "--config") {
		t.Errorf("reindex --rescan with no watcher: exit %d %q, want exit 1 saying to start one or pass --config", code, out)
	}
}

// The examples the README uses work as it says: the sample catalog is
// added and searched, and the sample transcript yields knowledge.
func TestExamplesWork(t *testing.T) {
	srv := natstest.Start(t, "")
	url := runKnowhub(t, srv, config.Default())
	if out, code := run(t, url, "tools", "add", "../../examples/tools.json"); code != 0 || !strings.Contains(out, "12 tools written") {
		t.Fatalf("tools add examples/tools.json: exit %d: %s", code, out)
	}
	natstest.WaitFor(t, 10*time.Second, "the sample catalog to be searchable", func() bool {
		out, _ := runStdout(t, url, "tools", "search", "open a ticket for a bug")
		first, _, _ := strings.Cut(out, "\n")
		return strings.Contains(first, "github_create_issue")
	})
	if out, code := run(t, url, "extract", "../../examples/transcript.json"); code != 0 || !strings.Contains(out, "stored") {
		t.Fatalf("extract examples/transcript.json: exit %d: %s", code, out)
	}
	var out string
	natstest.WaitFor(t, 15*time.Second, "the sample transcript's knowledge to be searchable", func() bool {
		out, _ = runStdout(t, url, "kb", "search", "--scopes", "agent:coder", "vitest hangs in watch mode")
		return strings.Contains(out, "vitest run")
	})
	dry, code := runStdout(t, url, "extract", "--replay", "--dry-run")
	if code != 0 || !strings.Contains(dry, "release branch") {
		t.Errorf("extract --replay --dry-run: exit %d, the remembered fact is missing:\n%s", code, dry)
	}
}
