package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/contract"
)

// The lang filter of a docs search reaches the engine from every edge:
// only the pages in that language come back, each hit says its language,
// and a tag that names no language is a 400-class error.
func TestSearchLangFilterOnEveryEdge(t *testing.T) {
	const token = "lang-secret-1"
	node, srv := startDocs(t, token, map[string]string{
		"gateway.md":    "# Gateway token\n\nTo configure the gateway token, open the settings file and set `gateway.auth.token`. The gateway reads it when it starts.\n",
		"gateway-zh.md": "# 网关令牌\n\n要配置网关令牌（gateway token），请打开设置文件并设置 `gateway.auth.token`。网关启动时会读取它。\n",
		"gateway-fr.md": "# Jeton de la passerelle\n\nPour configurer le jeton de la passerelle (gateway token), ouvrez le fichier de configuration et définissez `gateway.auth.token`. La passerelle le lit quand elle démarre.\n",
	})
	const query = "gateway token"
	only := func(t *testing.T, edge string, hits []contract.SearchHit) {
		t.Helper()
		if len(hits) == 0 {
			t.Fatalf("%s: no hit", edge)
		}
		for _, h := range hits {
			if h.Path != "gateway-zh.md" || h.Lang != "zh" {
				t.Errorf("%s: hit %s in %q, want only gateway-zh.md in zh", edge, h.Path, h.Lang)
			}
		}
	}

	t.Run("nats", func(t *testing.T) {
		resp, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query, Lang: "zh-CN"})
		if err != nil {
			t.Fatal(err)
		}
		only(t, "nats", resp.Hits)
		all, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query})
		if err != nil || len(all.Hits) != 3 {
			t.Errorf("without lang: %v, %d hits, want the 3 pages", err, len(all.Hits))
		}
		if _, err := (&api.Remote{NC: srv.NC}).SearchDocs(t.Context(), contract.SearchRequest{Query: query, Lang: "chinese"}); err == nil ||
			!strings.Contains(err.Error(), `"chinese" is not a language tag`) {
			t.Errorf("nats, bad lang: %v", err)
		}
	})

	get := func(t *testing.T, lang string) (int, contract.SearchResponse) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+node.HTTPAddr()+"/api/docs/search?lang="+lang+"&q="+url.QueryEscape(query), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var resp contract.SearchResponse
		_ = json.NewDecoder(res.Body).Decode(&resp)
		return res.StatusCode, resp
	}
	t.Run("http", func(t *testing.T) {
		code, resp := get(t, "zh")
		if code != http.StatusOK {
			t.Fatal(code)
		}
		only(t, "http", resp.Hits)
		if code, _ := get(t, "chinese"); code != http.StatusBadRequest {
			t.Errorf("http, bad lang: %d", code)
		}
	})

	for name, ops := range map[string]api.Ops{"in process": node.API.MCPOps(), "over nats": &api.Remote{NC: srv.NC}} {
		t.Run("mcp "+name, func(t *testing.T) {
			res := callTool(t, connect(t, ops), api.ToolSearchDocs, map[string]any{"query": query, "lang": "zh"})
			if res.IsError {
				t.Fatalf("error: %v", texts(t, res))
			}
			all := strings.Join(texts(t, res), "\n")
			if !strings.Contains(all, "gateway-zh.md") || strings.Contains(all, "gateway-fr.md") || strings.Contains(all, "core:gateway.md") {
				t.Errorf("want only gateway-zh.md:\n%s", all)
			}
		})
	}
}
