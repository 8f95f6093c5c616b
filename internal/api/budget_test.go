package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/contract"
)

// budgetPages are eight pages of five sections (about 150 tokens each, some
// 6,000 in all) that mention models, fallbacks and providers to different
// degrees; one section is about the fallback model chain.
func budgetPages() map[string]string {
	words := []string{"gateway", "session", "provider", "sandbox", "network", "model", "channel", "plugin", "fallback", "retry"}
	pages := map[string]string{}
	for p := range 8 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Page %d\n\n", p)
		for s := range 5 {
			fmt.Fprintf(&b, "## Topic %d %d\n\n", p, s)
			if p == 3 && s == 2 {
				b.WriteString("Configure the fallback model chain: when the primary model fails, the agent tries each fallback model in order.\n\n")
			}
			for k := range 12 {
				fmt.Fprintf(&b, "The %s of page %d section %d notes item %d about the %s and the %s. ", words[(p+s+k)%len(words)], p, s, k, words[(p*s+k)%len(words)], words[(k+3)%len(words)])
			}
			b.WriteString("\n\n")
		}
		pages[fmt.Sprintf("p%d.md", p)] = b.String()
	}
	return pages
}

// For budgets of 200, 1,000 and 4,000 tokens, a search on every edge that
// takes max_tokens (NATS, HTTP, MCP in process, over NATS and over HTTP)
// stays within the budget and starts with the section an unbudgeted search
// ranks first.
func TestBudgetOnEveryEdge(t *testing.T) {
	const token = "budget-secret-1"
	node, srv := startDocs(t, token, budgetPages())
	const query = "fallback model chain"
	plain, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query})
	if err != nil || len(plain.Hits) == 0 {
		t.Fatalf("unbudgeted search: %v %+v", err, plain)
	}
	best := plain.Hits[0]
	if best.Path != "p3.md" {
		t.Fatalf("the best section is %s %v, want the fallback chain on p3.md", best.Path, best.HeadingPath)
	}
	budgets := []int{200, 1000, 4000}
	within := func(t *testing.T, edge string, budget, tokens int, first string) {
		t.Helper()
		if tokens <= 0 || tokens > budget {
			t.Errorf("%s within %d: the reply holds %d tokens", edge, budget, tokens)
		}
		if first != best.ChunkID {
			t.Errorf("%s within %d: first section %s, want the best %s", edge, budget, first, best.ChunkID)
		}
		if budget == 4000 && tokens <= 1000 {
			t.Errorf("%s within 4000: only %d tokens, the budget is not used", edge, tokens)
		}
		t.Logf("%s within %d: %d tokens", edge, budget, tokens)
	}

	t.Run("nats", func(t *testing.T) {
		for _, budget := range budgets {
			r, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query, MaxTokens: budget})
			if err != nil || len(r.Hits) == 0 {
				t.Fatalf("within %d: %v %+v", budget, err, r)
			}
			within(t, "nats", budget, r.Tokens, r.Hits[0].ChunkID)
		}
	})

	t.Run("http", func(t *testing.T) {
		for _, budget := range budgets {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/api/docs/search?max_tokens=%d&q=%s", node.HTTPAddr(), budget, url.QueryEscape(query)), nil)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r contract.SearchResponse
			err = json.NewDecoder(res.Body).Decode(&r)
			res.Body.Close()
			if err != nil || len(r.Hits) == 0 {
				t.Fatalf("within %d: %s %v %+v", budget, res.Status, err, r)
			}
			within(t, "http", budget, r.Tokens, r.Hits[0].ChunkID)
		}
	})

	mcpEdges := map[string]func(t *testing.T) *mcp.ClientSession{
		"mcp in process": func(t *testing.T) *mcp.ClientSession { return connect(t, node.API.MCPOps()) },
		"mcp over nats":  func(t *testing.T) *mcp.ClientSession { return connect(t, &api.Remote{NC: srv.NC}) },
		"mcp over http": func(t *testing.T) *mcp.ClientSession {
			cs, err := connectHTTP(t, node.HTTPAddr(), token)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		},
	}
	for name, open := range mcpEdges {
		t.Run(name, func(t *testing.T) {
			cs := open(t)
			for _, budget := range budgets {
				res := callTool(t, cs, api.ToolSearchDocs, map[string]any{"query": query, "max_tokens": budget})
				out := structured[api.SearchDocsOutput](t, res)
				if res.IsError || len(out.Hits) == 0 {
					t.Fatalf("within %d: %v", budget, texts(t, res))
				}
				within(t, name, budget, out.Tokens, out.Hits[0].ChunkID)
				if txt := texts(t, res)[0]; !strings.HasPrefix(txt, "[1] core:p3.md § "+strings.Join(best.HeadingPath, " > ")) {
					t.Errorf("%s within %d: the reply starts %.80q, not with the best section", name, budget, txt)
				}
			}
		})
	}
}
