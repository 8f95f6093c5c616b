package cli

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/natstest"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's sample search output from this run")

// readmeSearch is the command line of the README's sample search.
const readmeSearch = `$ go run ./cmd/knowhub search --top-k 3 "configure a fallback model chain"`

// The README's sample search output is what knowhub prints today on the
// sample corpora the README indexes, so that it cannot go stale when
// ranking or snippets change: go test ./internal/cli -run TestReadmeSample
// -update-readme rewrites it.
func TestReadmeSampleSearchIsCurrent(t *testing.T) {
	corpora := []string{"../../../shared/corpora/openclaw-docs", "../../../shared/corpora/nats-docs"}
	for _, c := range corpora {
		if _, err := os.Stat(c); err != nil {
			t.Skipf("the sample corpora are not beside the checkout: %v", err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(readme, []byte(readmeSearch+"\n"))
	if start < 0 {
		t.Fatalf("the README has no sample search %q", readmeSearch)
	}
	body := start + len(readmeSearch) + 1
	end := bytes.Index(readme[body:], []byte("```"))
	if end < 0 {
		t.Fatal("the README's sample search block does not end")
	}
	end += body

	srv := natstest.Start(t, "")
	repos, err := config.RepositoriesFromArgs(corpora)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Repositories = repos
	url := runKnowhub(t, srv, cfg)
	out, code := runStdout(t, url, "search", "--top-k", "3", "configure a fallback model chain")
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, out)
	}
	took := regexp.MustCompile(`in \d+µs\n$`)
	if *updateReadme {
		// The time is this run's; the rest is what every run prints.
		updated := append(append(append([]byte{}, readme[:body]...), out...), readme[end:]...)
		if err := os.WriteFile("../../README.md", updated, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := took.ReplaceAllString(string(readme[body:end]), "in Xµs\n")
	if got := took.ReplaceAllString(out, "in Xµs\n"); got != want {
		t.Errorf("the README's sample search output is stale; run go test ./internal/cli -run TestReadmeSample -update-readme\ngot:\n%s\nREADME:\n%s", got, want)
	}
	if strings.Contains(out, "**") {
		t.Errorf("plain output holds Markdown marks:\n%s", out)
	}
}
