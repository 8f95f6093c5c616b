package app

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// The OpenClaw doc-engine plugin's user-visible behaviour, replayed
// against a real node configured from an openclaw.json that holds the
// plugin's own config block (the fixtures follow its test suite: a core
// docs repository at priority 1, an extension of skills at priority 10).

// conformance is a running node built from testdata/conformance.
type conformance struct {
	t      *testing.T
	srv    *natstest.Server
	base   string
	root   string
	errors []string
}

// Secrets in the doc-engine's test shapes, assembled here so that no
// secret-shaped string sits in the repository.
var (
	fakeOpenAI = "sk-" + "abcdefghijklmnopqrstuvwxyz1234567890"
	fakeGoogle = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
	fakeGitHub = "ghp_" + "abcdefghijklmnopqrstuvwxyz1234567890"
	fakeSlack  = "xoxb-" + "123-456-abcdef"
	fakeCustom = "CUSTOM-" + "ABCDEFGHIJ"
)

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeTestFile(t, filepath.Join(to, rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startConformance(t *testing.T) *conformance {
	root := t.TempDir()
	copyTree(t, "testdata/conformance", root)
	writeTestFile(t, filepath.Join(root, "docs", "keys.md"), "# API keys\n\n## Leaked keys\n\nThe leaked keys were "+
		fakeOpenAI+", "+fakeGoogle+", "+fakeGitHub+", "+fakeSlack+" and "+fakeCustom+".\n")
	// Credential files in a repository whose glob takes every file.
	for _, rel := range []string{".env", ".env.local", "config/.env.production", "credentials.json", "auth-profiles.json"} {
		writeTestFile(t, filepath.Join(root, "creds", rel), "OPENAI_API_KEY=credential-value-"+strings.ReplaceAll(rel, "/", "-")+"\n")
	}
	writeTestFile(t, filepath.Join(root, "creds", "normal.md"), "# Normal\n\nAn ordinary page beside the credential files.\n")
	// Translations, which doc-engine does not index: locale folders, and a
	// page whose text is not in a Latin script.
	for rel, text := range translations {
		writeTestFile(t, filepath.Join(root, "docs", rel), text)
	}
	oc := map[string]any{"plugins": map[string]any{"entries": map[string]any{"doc-engine": map[string]any{"enabled": true, "config": map[string]any{
		"repositories": []map[string]any{
			{"name": "openclaw-docs", "path": "docs", "priority": 1, "type": "core"},
			{"name": "addons", "path": "addons", "priority": 10, "type": "extension", "glob": "**/SKILL.md"},
			{"name": "creds", "path": "creds", "priority": 5, "type": "core", "glob": "**/*"},
		},
		"chunkMaxTokens": 800, "topK": 5, "watchEnabled": true, "watchDebounceMs": 2000,
		"secretPatterns": []string{"CUSTOM-[A-Z]{10}"},
	}}}}}
	data, _ := json.Marshal(oc)
	writeTestFile(t, filepath.Join(root, "openclaw.json"), string(data))
	imp, err := config.LoadOpenClaw(filepath.Join(root, "openclaw.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.ApplyOpenClaw(imp)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t, "")
	node := runNode(t, srv, cfg)
	return &conformance{t: t, srv: srv, base: "http://" + node.HTTPAddr(), root: root}
}

// search asks GET /api/docs/search with the doc-engine tool's parameters.
func (c *conformance) search(query string, params ...string) *contract.SearchResponse {
	c.t.Helper()
	u := c.base + "/api/docs/search?q=" + url.QueryEscape(query)
	for _, p := range params {
		u += "&" + p
	}
	resp, err := http.Get(u)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		c.t.Fatalf("search %q: %d %s", query, resp.StatusCode, data)
	}
	var r contract.SearchResponse
	if err := json.Unmarshal(data, &r); err != nil {
		c.t.Fatal(err)
	}
	if !strings.Contains(string(data), `"hits":[`) {
		c.t.Errorf("search %q: hits is not an array: %s", query, data)
	}
	return &r
}

func (c *conformance) paths(r *contract.SearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Repo+":"+h.Path)
	}
	return out
}

// translations are pages of the docs repository in other languages, all
// about installing OpenClaw with npm.
var translations = map[string]string{
	"zh-CN/getting-started.md":        "# 入门\n\n## 安装\n\n使用 npm 安装 OpenClaw：运行 `npm install -g openclaw`，然后启动网关。\n",
	"ja/getting-started.md":           "# はじめに\n\n## インストール\n\nnpm で OpenClaw をインストールします：`npm install -g openclaw` を実行してから、ゲートウェイを起動します。\n",
	"translations/fr/installation.md": "# Installation\n\nInstallation with npm: run `npm install -g openclaw`, then start the gateway (not yet translated).\n",
	"guides/installation-arabic.md":   "# التثبيت\n\nلتثبيت OpenClaw باستخدام npm، شغّل `npm install -g openclaw` ثم ابدأ البوابة.\n",
}

func TestConformance(t *testing.T) {
	c := startConformance(t)

	t.Run("English only, as doc-engine: locale folders and non-Latin pages are not indexed", func(t *testing.T) {
		for _, h := range c.search("installation npm openclaw install gateway", "top_k=20").Hits {
			if _, ok := translations[h.Path]; ok {
				t.Errorf("hit %s: a translation was indexed", h.Path)
			}
			if h.Lang != "en" && h.Lang != "" {
				t.Errorf("hit %s in %q", h.Path, h.Lang)
			}
		}
	})

	t.Run("indexes docs and finds the installation section first", func(t *testing.T) {
		r := c.search("installation npm openclaw")
		if len(r.Hits) == 0 || r.Hits[0].Path != "getting-started.md" {
			t.Errorf("hits %v, want getting-started.md first", c.paths(r))
		}
	})
	t.Run("results are ranked by relevance, best first", func(t *testing.T) {
		r := c.search("gateway configuration logging")
		found := false
		for i, h := range r.Hits {
			found = found || h.Path == "configuration.md"
			if i > 0 && h.Score > r.Hits[i-1].Score {
				t.Errorf("hit %d scores %v above hit %d's %v", i, h.Score, i-1, r.Hits[i-1].Score)
			}
		}
		if !found {
			t.Errorf("configuration.md not among %v", c.paths(r))
		}
	})
	t.Run("topK limits the results", func(t *testing.T) {
		if r := c.search("model", "top_k=2"); len(r.Hits) != 2 {
			t.Errorf("top_k=2 gave %d hits", len(r.Hits))
		}
	})
	t.Run("repoFilter keeps one repository", func(t *testing.T) {
		r := c.search("cryptocurrency price", "repo=addons")
		if len(r.Hits) == 0 {
			t.Fatal("no hits in addons")
		}
		for _, h := range r.Hits {
			if h.Repo != "addons" {
				t.Errorf("hit from %s with repo=addons", h.Repo)
			}
		}
	})
	t.Run("hits carry repository type and priority", func(t *testing.T) {
		for _, h := range c.search("cryptocurrency price fallback chain").Hits {
			want := map[string]string{"openclaw-docs": "core/1", "addons": "extension/10", "creds": "core/5"}[h.Repo]
			if got := h.RepoType + "/" + itoa(h.Priority); got != want {
				t.Errorf("%s: %s, want %s", h.Repo, got, want)
			}
		}
	})
	t.Run("custom glob indexes only SKILL.md files", func(t *testing.T) {
		for _, h := range c.search("cryptocurrency", "repo=addons", "top_k=20").Hits {
			if !strings.HasSuffix(h.Path, "SKILL.md") {
				t.Errorf("addons hit %s does not match its glob", h.Path)
			}
		}
	})
	t.Run("a near-duplicate at another path loses to the lower priority number", func(t *testing.T) {
		r := c.search("model configuration fallback chain")
		var overlap []string
		for _, h := range r.Hits {
			if h.Path == "overlap.md" || strings.HasPrefix(h.Path, "my-skill/models/") {
				overlap = append(overlap, h.Repo+":"+h.Path)
			}
		}
		if strings.Join(overlap, ",") != "openclaw-docs:overlap.md" {
			t.Errorf("copies among hits %v, want only the core page", overlap)
		}
		if len(r.Shadowed) != 1 || r.Shadowed[0].Repo != "addons" || !strings.Contains(r.Shadowed[0].Reason, "priority 1") {
			t.Errorf("shadowed %+v, want the extension's copy with a priority reason", r.Shadowed)
		}
	})
	t.Run("different sections are both kept", func(t *testing.T) {
		r := c.search("gateway binds logging primary model setup")
		got := strings.Join(c.paths(r), ",")
		if !strings.Contains(got, "openclaw-docs:getting-started.md") || !strings.Contains(got, "openclaw-docs:configuration.md") {
			t.Errorf("hits %s, want both pages", got)
		}
		for _, s := range r.Shadowed {
			if !strings.HasPrefix(s.Path, "my-skill/models/") {
				t.Errorf("distinct section shadowed: %s:%s (%s)", s.Repo, s.Path, s.Reason)
			}
		}
	})
	t.Run("equal scores list the lower priority number first", func(t *testing.T) {
		r := c.search("tiebreak ordering sample")
		if got := strings.Join(c.paths(r)[:min(2, len(r.Hits))], ","); got != "openclaw-docs:tie-beta.md,addons:my-skill/tie/SKILL.md" || r.Hits[0].Score != r.Hits[1].Score {
			t.Errorf("hits %s (scores %v), want the priority-1 page first at an equal score", got, scores(r))
		}
	})
	t.Run("no match returns an empty list", func(t *testing.T) {
		if r := c.search("xyznonexistenttermxyz"); len(r.Hits) != 0 {
			t.Errorf("hits %v", c.paths(r))
		}
	})
	t.Run("stats break down files and chunks per repository", func(t *testing.T) {
		var st contract.StatsResponse
		getJSON(t, c.base+"/api/stats", &st)
		got := map[string]int{}
		for _, r := range st.Repos {
			got[r.Repo] = r.Files
			if r.Chunks < r.Files {
				t.Errorf("%s: %d chunks for %d files", r.Repo, r.Chunks, r.Files)
			}
		}
		if got["openclaw-docs"] != 5 || got["addons"] != 3 || got["creds"] != 1 {
			t.Errorf("files per repository %v, want openclaw-docs 5, addons 3, creds 1", got)
		}
	})
	t.Run("secret patterns are redacted, the defaults and a custom one", func(t *testing.T) {
		r := c.search("leaked keys", "content=1")
		if len(r.Hits) == 0 || r.Hits[0].Path != "keys.md" {
			t.Fatalf("hits %v", c.paths(r))
		}
		text := r.Hits[0].Content
		for _, s := range []string{fakeOpenAI, fakeGoogle, fakeGitHub, fakeSlack, fakeCustom, "sk-", "AIza", "ghp_", "xoxb-", "CUSTOM-"} {
			if strings.Contains(text, s) {
				t.Errorf("section text holds %q: %s", s, text)
			}
		}
		for _, kind := range []string{"openai-api-key", "gcp-api-key", "github-pat", "slack-token", "secret-pattern-1"} {
			if !strings.Contains(text, "[REDACTED:"+kind+"]") {
				t.Errorf("no %s redaction in %q", kind, text)
			}
		}
		assertNotStored(t, c.srv, fakeOpenAI, fakeGoogle, fakeGitHub, fakeSlack, fakeCustom)
	})
	t.Run("files named like credentials are never indexed", func(t *testing.T) {
		r := c.search("credential value openai api key", "repo=creds", "top_k=20")
		for _, h := range r.Hits {
			if h.Path != "normal.md" {
				t.Errorf("credential file %s indexed", h.Path)
			}
		}
		assertNotStored(t, c.srv, "credential-value-")
	})
	t.Run("the search tool hands over the whole section", func(t *testing.T) {
		r := c.search("fallback chain plain model ID", "content=1", "repo=openclaw-docs")
		if len(r.Hits) == 0 || !strings.Contains(r.Hits[0].Content, "minimax/MiniMax-M2.1") && !strings.Contains(r.Hits[0].Content, "plain model ID") {
			t.Errorf("first hit's content %q", firstContent(r))
		}
		nr := searchDocs(t, c.srv.NC, contract.SearchRequest{Query: "cryptocurrency portfolio", Content: true})
		if len(nr.Hits) == 0 || !strings.Contains(nr.Hits[0].Content, "portfolio") {
			t.Errorf("NATS content: %+v", nr.Hits)
		}
	})
	t.Run("an edited file is searchable again", func(t *testing.T) {
		p := filepath.Join(c.root, "docs", "getting-started.md")
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString("\n## Troubleshooting\n\nIf you encounter websocket connection errors, check that the gateway is running.\n")
		f.Close()
		natstest.WaitFor(t, 15*time.Second, "the new section to be found", func() bool {
			r := c.search("troubleshooting websocket connection errors")
			return len(r.Hits) > 0 && r.Hits[0].Path == "getting-started.md"
		})
	})
}

// TestConformanceConfigValidation replays the plugin's config schema:
// priority at least 1, type core or extension, name and path required.
func TestConformanceConfigValidation(t *testing.T) {
	for _, tc := range []struct{ repo, want string }{
		{`{"name":"a","path":"/a","priority":0,"type":"core"}`, "repositories[0].priority: must be a number of at least 1"},
		{`{"name":"a","path":"/a","priority":-3,"type":"core"}`, "repositories[0].priority: must be a number of at least 1"},
		{`{"name":"a","path":"/a","priority":1,"type":"primary"}`, `repositories[0].type: must be "core" or "extension"`},
		{`{"path":"/a","priority":1,"type":"core"}`, "repositories[0].name: required"},
		{`{"name":"a","priority":1,"type":"core"}`, "repositories[0].path: required"},
	} {
		p := filepath.Join(t.TempDir(), "openclaw.json")
		writeTestFile(t, p, `{"plugins":{"entries":{"doc-engine":{"config":{"repositories":[`+tc.repo+`]}}}}}`)
		oc, err := config.LoadOpenClaw(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.ApplyOpenClaw(oc)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.repo, err, tc.want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func scores(r *contract.SearchResponse) []float64 {
	var out []float64
	for _, h := range r.Hits {
		out = append(out, h.Score)
	}
	return out
}

func firstContent(r *contract.SearchResponse) string {
	if len(r.Hits) == 0 {
		return ""
	}
	return r.Hits[0].Content
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// assertNotStored checks that no message of KH_FILES or KH_CHUNKS holds
// any of the strings.
func assertNotStored(t *testing.T, srv *natstest.Server, secrets ...string) {
	t.Helper()
	for _, name := range []string{contract.StreamFiles, contract.StreamChunks} {
		s, err := srv.JS.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
			m, err := s.GetMsg(t.Context(), seq)
			if err != nil {
				continue // removed or replaced
			}
			for _, sec := range secrets {
				if strings.Contains(string(m.Data), sec) {
					t.Errorf("%s message %d holds %q", name, seq, sec)
				}
			}
		}
	}
}
