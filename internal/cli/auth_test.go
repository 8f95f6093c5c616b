package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/datadir"
	"github.com/knowhub/knowhub/internal/natstest"
)

// startUp runs knowhub up on dataDir with the docs folder and returns its
// NATS URL once it has indexed them.
func startUp(t *testing.T, dataDir, docs string, auth string) string {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.NATS.EmbeddedAuth = auth
	cfg.HTTP.Listen = config.HTTPOff
	cfg.Repositories = []config.Repository{{Name: "docs", Path: docs, Priority: 10, Type: "core", Glob: config.DefaultGlob}}
	var out natstest.LogBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Up(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, "knowhub") }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	natstest.WaitFor(t, 30*time.Second, "up to index the docs", func() bool { return strings.Contains(out.String(), "search with:") })
	url := regexp.MustCompile(`NATS   (nats://\S+)`).FindStringSubmatch(out.String())
	if url == nil {
		t.Fatalf("no NATS URL in:\n%s", out.String())
	}
	return url[1]
}

// up's NATS server takes only the token it keeps in the data directory:
// a client without it is refused, and every command on this host works
// with it, found through --data (or the default ./.knowhub).
func TestUpsNATSServerTakesOnlyItsToken(t *testing.T) {
	dataDir, docs := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "guide.md"), []byte("# Guide\n\n## Fallbacks\n\nConfigure a fallback model chain.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startUp(t, dataDir, docs, config.EmbeddedAuthToken)
	fi, err := os.Stat(filepath.Join(dataDir, datadir.NATSTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	// A client without the token, or with another, is refused: it reads no
	// scope, no quarantine and no stream.
	for name, opts := range map[string][]nats.Option{"no token": nil, "a wrong token": {nats.Token(strings.Repeat("0", 64))}} {
		if nc, err := nats.Connect(url, opts...); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("%s: refused with %v, want an authorization error", name, err)
		}
	}
	if out, code := run(t, url, "search", "fallback"); code == 0 || !strings.Contains(strings.ToLower(out), "authorization") {
		t.Errorf("a command without the data directory: exit %d:\n%s", code, out)
	}
	// Every command works with the token of --data.
	catalog := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(catalog, []byte(`[{"name":"Grep","description":"Search file contents with ripgrep.","type":"core"}]`), 0o644)
	for _, args := range [][]string{
		{"search", "fallback", "model"},
		{"stats"},
		{"repos"},
		{"reindex", "--wait", "10s"},
		{"tools", "add", catalog},
		{"tools", "search", "grep"},
		{"kb", "save", "--task", "ci", "--content", "Run vitest with --run in CI; watch mode blocks.", "--types", "tool"},
		{"kb", "search", "vitest"},
		{"kb", "review"},
		{"extract", "--replay", "--dry-run"},
	} {
		if out, code := run(t, url, append(args, "--data", dataDir)...); code != 0 {
			t.Errorf("knowhub %s with --data: exit %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
	// KNOWHUB_DATA_DIR names it too.
	t.Setenv(config.EnvDataDir, dataDir)
	if out, code := run(t, url, "search", "fallback"); code != 0 || !strings.Contains(out, "guide.md") {
		t.Errorf("search with KNOWHUB_DATA_DIR: exit %d:\n%s", code, out)
	}
	// The token is never sent to another host.
	n := config.NATS{URL: "nats://nats.example.com:4222"}
	useLocalToken(&n, dataDir)
	if n.Token != "" {
		t.Error("the local token would be sent to another host")
	}
}

// With embeddedAuth none, up's server takes anyone, and says so.
func TestUpWithoutAuthTakesAnyone(t *testing.T) {
	dataDir, docs := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# A\n\nText.\n"), 0o644)
	url := startUp(t, dataDir, docs, config.EmbeddedAuthNone)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("no auth: %v", err)
	}
	nc.Close()
	if _, err := os.Stat(filepath.Join(dataDir, datadir.NATSTokenFile)); err == nil {
		t.Error("a token was made for a server that takes none")
	}
}
