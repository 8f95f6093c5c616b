package app

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

// poll waits in the page until the JavaScript expression cond holds.
func poll(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second))(ctx, tg)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", cond, err)
		}
		return nil
	})
}

func (p page) eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// The page as people use it: only the latest search renders, the search
// lives in the URL (bookmarks, back and forward), hits are grouped by
// page and expand to their section, the keyboard works, and a phone-sized
// window does not overflow.
func TestWebPageIsUsable(t *testing.T) {
	srv := natstest.Start(t, "")
	docs := t.TempDir()
	var guide strings.Builder
	guide.WriteString("# Gateway guide\n\n")
	for _, s := range []string{"Install", "Configure", "Upgrade", "Restart", "Logs", "Backups"} {
		fmt.Fprintf(&guide, "## %s the gateway\n\nHow to %s the gateway service on a host.\n\n", s, strings.ToLower(s))
	}
	writeFile(t, filepath.Join(docs, "gateway.md"), guide.String())
	writeFile(t, filepath.Join(docs, "cli.md"), "# CLI\n\n## Flags\n\nThe gateway command takes `--port` and `--bind`.\n\n```sh\nopenclaw gateway run --port 18789\n```\n")
	writeFile(t, filepath.Join(docs, "sandbox.md"), "# Sandbox\n\n## Network\n\nThe sandbox denies outbound network access.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.HTTP.Listen = "127.0.0.1:0"
	node := runNode(t, srv, cfg)
	base := "http://" + node.HTTPAddr()
	a := &kbAPI{t: t, base: base, srv: srv}
	if code := a.do(http.MethodPost, "/api/tools", "", map[string]any{"tools": []map[string]any{
		{"name": "github_create_issue", "description": "Open an issue in a GitHub repository.", "type": "sourced", "instance": "github"},
		{"name": "github_create_pull_request", "description": "Open a pull request from a branch.", "type": "sourced", "instance": "github"},
		{"name": "slack_post_message", "description": "Post a message to a Slack channel.", "type": "sourced", "instance": "slack"},
		{"name": "Bash", "description": "Run a shell command.", "type": "core"},
	}}, nil); code != http.StatusOK {
		t.Fatalf("add tools: %d", code)
	}
	natstest.WaitFor(t, 10*time.Second, "the tools to be searchable", func() bool {
		var r struct{ Hits []any }
		return a.do(http.MethodGet, "/api/tools/search?q=slack", "", nil, &r) == http.StatusOK && len(r.Hits) > 0
	})

	b := page{t: t, ctx: browser(t)}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	b.do("open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#q")))

	// Two submits 20 ms apart render one result set, of the latest query.
	b.do("two quick submits",
		chromedp.Evaluate[chromedp.Void](`(async () => {
			const f = document.getElementById("search-form"), q = document.getElementById("q");
			q.value = "sandbox network"; f.requestSubmit();
			await new Promise(r => setTimeout(r, 20));
			q.value = "gateway"; f.requestSubmit();
		})()`),
		poll(`document.getElementById("results").dataset.q === "gateway"`),
	)
	sections := b.eval(`String(document.querySelectorAll("#results .section").length)`)
	pages := b.eval(`[...document.querySelectorAll("#results li.page .path")].map(e => e.textContent).join(",")`)
	if pages != "gateway.md,cli.md" && pages != "cli.md,gateway.md" {
		t.Errorf("after two submits the pages shown are %q, want gateway.md and cli.md once each", pages)
	}
	if sections != "7" {
		t.Errorf("%s sections shown, want the 7 of the latest search once", sections)
	}
	// Grouping: gateway.md's six sections are one card.
	if n := b.eval(`String(document.querySelectorAll("#results li.page")[0].querySelectorAll(".section").length)`); n != "6" && n != "1" {
		t.Errorf("first page card holds %s sections", n)
	}
	if got := b.eval(`location.search`); got != "?q=gateway" {
		t.Errorf("URL after the search: %q, want ?q=gateway", got)
	}

	// Expanding a hit shows its section's Markdown.
	b.do("expand cli.md",
		chromedp.SetValue(css("#q"), "openclaw gateway run port"),
		chromedp.Click(css("#search-btn")),
		poll(`document.getElementById("results").dataset.q === "openclaw gateway run port"`),
		chromedp.Click(css("#results .section .expand")),
		chromedp.WaitVisible(css("#results .section .more pre.content")),
	)
	if c := b.text("#results .section .more pre.content"); !strings.Contains(c, "openclaw gateway run --port 18789") {
		t.Errorf("expanded section %q, want the code block", c)
	}

	// Tools: filter by kind and instance; the URL holds them, and a fresh
	// load of that URL shows the same search.
	b.do("tools with filters",
		chromedp.Click(css("#tab-tools")),
		chromedp.SetValue(css("#q"), "open"),
		chromedp.Click(css("#search-btn")),
		poll(`document.getElementById("results").dataset.q === "open" && document.querySelectorAll("#results li.tool").length >= 2`),
		poll(`[...document.getElementById("instance-filter").options].some(o => o.value === "github")`),
		chromedp.SetValue(css("#instance-filter"), "github"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("instance-filter").dispatchEvent(new Event("change"))`),
		poll(`location.search.includes("instance=github")`),
		poll(`[...document.querySelectorAll("#results li.tool .repo")].every(e => e.textContent.startsWith("github_"))`),
	)
	bookmark := b.eval(`location.href`)
	// Back walks to the earlier searches: the instance filter goes, then
	// the tools search itself.
	b.do("back",
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		poll(`document.getElementById("q").value === "open" && document.querySelector("#tabs [aria-selected=true]").dataset.tab === "tools" && document.getElementById("instance-filter").value === "" && !location.search.includes("instance")`),
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		poll(`document.querySelector("#tabs [aria-selected=true]").dataset.tab === "tools" && document.getElementById("q").value === "openclaw gateway run port"`),
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		poll(`document.querySelector("#tabs [aria-selected=true]").dataset.tab === "docs" && document.getElementById("q").value === "openclaw gateway run port" && document.querySelectorAll("#results li.page").length > 0`),
	)

	if !strings.Contains(bookmark, "tab=tools") || !strings.Contains(bookmark, "q=open") {
		t.Errorf("bookmark %q lacks the tab or the query", bookmark)
	}
	b.do("open the bookmark",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(css("#q")),
		chromedp.Navigate(bookmark),
		poll(`document.querySelectorAll("#results li.tool").length >= 1`),
	)
	if got := b.eval(`document.getElementById("q").value + "|" + document.getElementById("instance-filter").value + "|" + document.querySelector("#tabs [aria-selected=true]").dataset.tab`); got != "open|github|tools" {
		t.Errorf("the bookmark restored %q, want open|github|tools", got)
	}
	// Keyboard: / focuses the box, the arrows reach the hits, Enter opens.
	b.do("keyboard",
		chromedp.Navigate(base+"/?q=openclaw+gateway+run+port"),
		poll(`document.getElementById("results").dataset.q === "openclaw gateway run port"`),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`),
		// A "/" keydown as the browser delivers it (the devtools protocol
		// would also type the character, which a person's key does not).
		chromedp.Evaluate[chromedp.Void](`document.body.dispatchEvent(new KeyboardEvent("keydown", {key: "/", bubbles: true, cancelable: true}))`),
		poll(`document.activeElement === document.getElementById("q")`),
		chromedp.KeyEvent(kb.ArrowDown),
		poll(`document.activeElement.classList.contains("section")`),
		chromedp.KeyEvent("\r"),
		poll(`document.activeElement.querySelector(".more:not([hidden]) pre.content") !== null`),
	)
	if q := b.eval(`document.getElementById("q").value`); q != "openclaw gateway run port" {
		t.Errorf("the search box holds %q after the keys", q)
	}
	b.do("1400 px", chromedp.EmulateViewport(1400, 900))
	b.screenshot("5-page-1400")

	// A phone-sized window: nothing wider than the screen.
	b.do("400 px",
		chromedp.EmulateViewport(400, 800),
		chromedp.Navigate(base+"/?q=gateway"),
		poll(`document.querySelectorAll("#results li.page").length > 0`),
	)
	b.screenshot("6-page-400")
	if w := b.eval(`String(Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) <= window.innerWidth) + " " + document.documentElement.scrollWidth`); !strings.HasPrefix(w, "true") {
		t.Errorf("at 400 px the page scrolls sideways: %s px wide", w)
	}
	over := b.eval(`[...document.querySelectorAll("header, header *, main, #search-area *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).map(e => e.id || e.tagName).join(",")`)
	if over != "" {
		t.Errorf("at 400 px these overflow the window: %s", over)
	}
}
