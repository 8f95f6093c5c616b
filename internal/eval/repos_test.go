package eval

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// IndexMarkdownRepos indexes each folder as a repository of its own and
// names every document repo/path, so one repository's page never stands
// for another's page at the same path.
func TestIndexMarkdownRepos(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one/README.md", "# Streams\n\nA stream keeps messages.\n")
	write("two/README.md", "# Alerts\n\nAn alert fires when a rule holds.\n")
	c, err := IndexMarkdownRepos(context.Background(), []RepoDir{
		{Repo: "one", Dir: filepath.Join(root, "one")},
		{Repo: "two", Dir: filepath.Join(root, "two")},
	}, MarkdownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Docs != 2 {
		t.Fatalf("%d docs, want 2", c.Docs)
	}
	for q, want := range map[string]string{"stream messages": "one/README.md", "alert rule": "two/README.md"} {
		got, err := c.Search(q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].DocID != want {
			t.Errorf("%q: %v, want %s", q, got, want)
		}
	}
}
