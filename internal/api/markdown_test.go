package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// installMD is a section an agent must receive as written: a fenced code
// block with its language, inline code, a link and a table.
const installMD = "Start the node with `knowhub up`; see [the guide](https://example.com/guide).\n\n" +
	"```bash\nknowhub up --data ./data\n```\n\n" +
	"| flag | meaning |\n| --- | --- |\n| `--data` | the data directory |"

// startDocs runs a node over one core repository holding files, with
// the HTTP API on behind token; it returns the node and its NATS server.
func startDocs(t *testing.T, token string, files map[string]string) (*app.Node, *natstest.Server) {
	t.Helper()
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.HTTP.Tokens = []config.Token{{Name: "agent", Token: token}}
	cfg.Watcher.DebounceMS = 20
	cfg.Repositories = []config.Repository{{Name: "core", Path: dir, Priority: 10, Type: contract.RepoCore, Glob: config.DefaultGlob}}
	node, _ := runDocsNode(t, srv, cfg)
	return node, srv
}

func TestSearchKeepsMarkdownOnEveryEdge(t *testing.T) {
	const token = "md-secret-1"
	node, srv := startDocs(t, token, map[string]string{
		"install.md": "# Install\n\n## Start\n\n" + installMD + "\n\n## Other\n\nUnrelated prose about pricing.\n",
	})
	const query = "start the node data directory"
	intact := func(t *testing.T, edge, got string) {
		t.Helper()
		if !strings.Contains(got, installMD) {
			t.Errorf("%s: the section's Markdown did not arrive intact:\n%s", edge, got)
		}
	}

	t.Run("nats", func(t *testing.T) {
		resp, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query, Content: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Hits) == 0 {
			t.Fatal("no hit")
		}
		intact(t, "nats", resp.Hits[0].Content)
		if strings.Contains(resp.Hits[0].Snippet, "```") {
			t.Errorf("the snippet for humans carries Markdown: %q", resp.Hits[0].Snippet)
		}
	})

	t.Run("http", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+node.HTTPAddr()+"/api/docs/search?content=1&q="+url.QueryEscape(query), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var resp contract.SearchResponse
		if err := json.NewDecoder(res.Body).Decode(&resp); err != nil {
			t.Fatalf("%s: %v", res.Status, err)
		}
		if len(resp.Hits) == 0 {
			t.Fatalf("%s: no hit", res.Status)
		}
		intact(t, "http", resp.Hits[0].Content)
	})

	for name, ops := range map[string]api.Ops{"in process": node.API.MCPOps(), "over nats": &api.Remote{NC: srv.NC}} {
		t.Run("mcp "+name, func(t *testing.T) {
			cs := connect(t, ops)
			res := callTool(t, cs, api.ToolSearchDocs, map[string]any{"query": query})
			if res.IsError {
				t.Fatalf("error: %v", texts(t, res))
			}
			intact(t, "mcp", texts(t, res)[0])
		})
	}

	t.Run("mcp over http", func(t *testing.T) {
		cs, err := connectHTTP(t, node.HTTPAddr(), token)
		if err != nil {
			t.Fatal(err)
		}
		intact(t, "mcp over http", texts(t, callTool(t, cs, api.ToolSearchDocs, map[string]any{"query": query}))[0])
	})
}
