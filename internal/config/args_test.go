package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

func mkdirs(t testing.TB, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRepositoriesFromArgs(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "docs", "other/docs", "third/docs", "My Docs (v2)", "文档", "x/.hidden")
	t.Chdir(root)

	repos, err := RepositoriesFromArgs([]string{"./docs", "other/docs", filepath.Join(root, "third", "docs"), "My Docs (v2)", "文档", "x/.hidden"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name     string
		path     string
		priority int
	}{
		{"docs", "docs", 100},
		{"docs-2", "other/docs", 110},
		{"docs-3", "third/docs", 120},
		{"My-Docs-v2", "My Docs (v2)", 130},
		{"repo", "文档", 140},
		{"hidden", "x/.hidden", 150},
	}
	if len(repos) != len(want) {
		t.Fatalf("got %d repositories, want %d: %+v", len(repos), len(want), repos)
	}
	for i, w := range want {
		r := repos[i]
		if r.Name != w.name || r.Path != filepath.Join(root, w.path) || r.Priority != w.priority {
			t.Errorf("repos[%d] = %+v, want name %q path %q priority %d", i, r, w.name, w.path, w.priority)
		}
		if r.Type != contract.RepoCore || r.Glob != DefaultGlob {
			t.Errorf("repos[%d] type/glob = %q/%q", i, r.Type, r.Glob)
		}
	}
	c := Default()
	c.Repositories = repos
	if err := c.Validate(); err != nil {
		t.Errorf("generated repositories do not validate: %v", err)
	}
}

func TestRepositoriesFromArgsDot(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "handbook")
	t.Chdir(filepath.Join(root, "handbook"))
	repos, err := RepositoriesFromArgs([]string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if repos[0].Name != "handbook" {
		t.Errorf("name = %q, want handbook", repos[0].Name)
	}
}

func TestRepositoriesFromArgsErrors(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "docs")
	if err := os.WriteFile(filepath.Join(root, "file.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	_, err := RepositoriesFromArgs([]string{"docs", "missing", "file.md", "./docs/"})
	wantErr(t, err,
		"repository missing:", "no such file or directory",
		"repository file.md: not a directory",
		"repository ./docs/: same directory as docs")
}

func TestRepoName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"docs", "docs"},
		{"my_docs-v2", "my_docs-v2"},
		{"my docs", "my-docs"},
		{"a.b.c", "a-b-c"},
		{"--a  b--", "a-b"},
		{".git", "git"},
		{"über", "ber"},
		{"文档", "repo"},
		{"/", "repo"},
		{strings.Repeat("x", 70), strings.Repeat("x", 64)},
		{strings.Repeat("x", 63) + " y", strings.Repeat("x", 63)},
	}
	for _, tt := range tests {
		if got := repoName(tt.in); got != tt.want {
			t.Errorf("repoName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := repoName(tt.in); !contract.ValidRepoName(got) {
			t.Errorf("repoName(%q) = %q is not valid", tt.in, got)
		}
	}
}

func TestUniqueNameStaysValid(t *testing.T) {
	used := make(map[string]bool)
	long := strings.Repeat("x", 64)
	for i := range 12 {
		got := uniqueName(long, used)
		if !contract.ValidRepoName(got) {
			t.Fatalf("uniqueName #%d = %q is not valid", i, got)
		}
	}
	if !used[strings.Repeat("x", 61)+"-12"] {
		t.Errorf("expected a name ending -12 within 64 characters: %v", used)
	}
}
