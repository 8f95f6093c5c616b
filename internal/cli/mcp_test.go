package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

// buildKnowhub compiles the knowhub command into a temporary directory.
func buildKnowhub(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "knowhub")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/knowhub").CombinedOutput(); err != nil {
		t.Fatalf("build knowhub: %v\n%s", err, out)
	}
	return bin
}

// startDocsNode runs every stage over one repository holding guide.md and
// returns the NATS URL once it is indexed and answering.
func startDocsNode(t *testing.T) string {
	t.Helper()
	return startNodeWith(t, map[string]string{"guide.md": "# Guide\n\n## Fallbacks\n\nConfigure a fallback model chain.\n"}, "fallback", "guide.md")
}

// startNodeWith runs every stage over one repository holding files and
// returns the NATS URL once they are indexed and `knowhub search probe`
// names want.
func startNodeWith(t *testing.T, files map[string]string, probe, want string) string {
	t.Helper()
	srv := natstest.Start(t, "")
	docs := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.HTTP.Listen = config.HTTPOff
	cfg.Repositories = []config.Repository{{Name: "docs", Path: docs, Priority: 10, Type: "core", Glob: config.DefaultGlob}}
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
	<-node.Query.Ready()
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if err := app.WaitCaughtUp(wctx, srv.JS, node.Query.Engine().Revision); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, "the micro endpoints", func() bool {
		out, code := run(t, srv.ClientURL(), "search", probe)
		return code == 0 && strings.Contains(out, want)
	})
	return srv.ClientURL()
}

func TestMCPBinaryOverStdio(t *testing.T) {
	bin := buildKnowhub(t)
	url := startDocsNode(t)

	cmd := exec.Command(bin, "mcp", "--nats-url", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 7 {
		t.Fatalf("list tools: %v, %d tools", err, len(tools.Tools))
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_docs", Arguments: map[string]any{"query": "fallback model chain"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("search_docs: %v %+v", err, res)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(txt, "[1] docs:guide.md § Guide > Fallbacks") || !strings.Contains(txt, "Configure a fallback model chain.") {
		t.Errorf("search_docs text: %q", txt)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_docs", Arguments: map[string]any{"top_k": "three"}})
	if err != nil || !res.IsError {
		t.Errorf("bad arguments: %v %+v", err, res)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
		t.Error("unknown tool: no error")
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("server gone after bad requests: %v", err)
	}
	// Closing stdin ends the server cleanly.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if st := cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("knowhub mcp did not exit cleanly on closed stdin: %v\n%s", st, stderr.String())
	}
}

// installMD is a section an agent must receive as written: a fenced code
// block with its language, inline code, a link and a table.
const installMD = "Start the node with `knowhub up`; see [the guide](https://example.com/guide).\n\n" +
	"```bash\nknowhub up --data ./data\n```\n\n" +
	"| flag | meaning |\n| --- | --- |\n| `--data` | the data directory |"

// longMD is a section over the chunker's budget with a code block in its
// middle, so that it is split in parts.
func longMD() string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d of the long upgrade notes explains the `gateway` and the [release](https://example.com/r%d) in a few words.\n\n", i, i)
		if i == 20 {
			b.WriteString("```bash\nknowhub reindex --rescan\nknowhub up --data ./data\n```\n\n")
		}
	}
	return b.String()
}

// TestMCPBinaryServesMarkdown: the built knowhub mcp, driven by the
// official SDK's client over stdio, hands a section's Markdown intact to
// search_docs and read_docs, and every part of a section split for length
// carries its Markdown with its code fences closed.
func TestMCPBinaryServesMarkdown(t *testing.T) {
	bin := buildKnowhub(t)
	url := startNodeWith(t, map[string]string{
		"install.md": "# Install\n\n## Start\n\n" + installMD + "\n\n## Other\n\nUnrelated prose about pricing.\n",
		"upgrade.md": "# Upgrade\n\n## Notes\n\n" + longMD(),
	}, "reindex rescan", "upgrade.md")

	cmd := exec.Command(bin, "mcp", "--nats-url", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("%s: %v %+v\n%s", name, err, res, stderr.String())
		}
		if res.IsError {
			t.Fatalf("%s: %s", name, res.Content[0].(*mcp.TextContent).Text)
		}
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.(*mcp.TextContent).Text + "\n")
		}
		return res, b.String()
	}

	res, txt := call("search_docs", map[string]any{"query": "start the node data directory"})
	if first := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(first, "[1] docs:install.md § Install > Start") || !strings.Contains(first, installMD) {
		t.Errorf("search_docs: the section's Markdown did not arrive intact:\n%s", txt)
	}
	var out struct {
		Hits []struct {
			ChunkID string `json:"chunk_id"`
		} `json:"hits"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Hits) == 0 || out.Hits[0].ChunkID == "" {
		t.Fatalf("search_docs structured content %s: %v", raw, err)
	}

	res, txt = call("read_docs", map[string]any{"id": out.Hits[0].ChunkID})
	if !strings.Contains(txt, installMD) {
		t.Errorf("read_docs: the section's Markdown did not arrive intact:\n%s", txt)
	}
	var read struct {
		Sections []struct {
			Text string `json:"text"`
		} `json:"sections"`
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &read); err != nil || len(read.Sections) != 1 || read.Sections[0].Text != installMD {
		t.Errorf("read_docs structured content %s: %v, want the section's Markdown", raw, err)
	}

	// The long section arrives in parts, each with its Markdown: links,
	// inline code and the code block whole, fences closed.
	_, txt = call("read_docs", map[string]any{"repo": "docs", "path": "upgrade.md"})
	if n := strings.Count(txt, "§ Upgrade > Notes"); n < 2 {
		t.Fatalf("read_docs of the long page holds %d parts, want 2 or more:\n%s", n, txt)
	}
	for _, want := range []string{"```bash\nknowhub reindex --rescan\nknowhub up --data ./data\n```", "[release](https://example.com/r0)", "[release](https://example.com/r39)", "`gateway`"} {
		if !strings.Contains(txt, want) {
			t.Errorf("read_docs of the long page lacks %q:\n%s", want, txt)
		}
	}
	if n := strings.Count(txt, "```"); n != 2 {
		t.Errorf("read_docs of the long page holds %d fences, want the one block's 2:\n%s", n, txt)
	}
}

func TestMCPBinarySurvivesBadLinesAndAnUnreachableKnowhub(t *testing.T) {
	bin := buildKnowhub(t)
	srv := natstest.Start(t, "") // NATS, but no knowhub
	cmd := exec.Command(bin, "mcp", "--nats-url", srv.ClientURL(), "--timeout", "2s")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	type reply struct {
		ID     any `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) reply {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
		if !lines.Scan() {
			t.Fatalf("no reply to %s: %v", line, lines.Err())
		}
		var r reply
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("reply %s: %v", lines.Bytes(), err)
		}
		return r
	}
	if r := send("this is not json"); r.Error == nil || r.Error.Code != -32700 {
		t.Errorf("garbage: %+v", r)
	}
	if r := send(`{"hello":"world"}`); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("not JSON-RPC: %+v", r)
	}
	if r := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); r.Result == nil {
		t.Fatalf("initialize after bad lines: %+v", r)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	r := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"kb_search","arguments":{"query":"deploy"}}}`)
	if r.Result == nil || !r.Result.IsError || len(r.Result.Content) == 0 || !strings.Contains(r.Result.Content[0].Text, "knowhub is not reachable") {
		t.Errorf("unreachable knowhub: %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit on closed stdin: %v", err)
	}
}
