package eval

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
)

// TestReadMarkdownMatchesIndexMarkdown checks that ReadMarkdown yields the
// files and sections IndexMarkdown indexes, so that a reference engine fed
// from it sees what knowhub sees.
func TestReadMarkdownMatchesIndexMarkdown(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"guide/install.md":  "---\ntitle: Install\nsummary: Put it on a host.\n---\n# Install\n\nDownload it.\n\n## Linux\n\nUse the package.\n\n## macOS\n\nUse brew.\n",
		"guide/upgrade.mdx": "# Upgrade\n\nStop, replace, start.\n",
		"README.MD":         "# Readme\n\nWhat it is.\n",
		"blank.md":          "   \n\n",
		"broken.md":         "# Broken\n\nnot \xff\xfe UTF-8\n",
		".hidden/secret.md": "# Hidden\n\nNever indexed.\n",
		"notes.txt":         "# Not Markdown\n",
	}
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	got, skipped, err := ReadMarkdown(context.Background(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	chunks := 0
	for _, f := range got {
		paths = append(paths, f.Path)
		want, err := chunker.Split(f.Path, []byte(files[f.Path]), chunker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Chunks, want) {
			t.Errorf("%s: chunks differ from chunker.Split's:\n got %+v\nwant %+v", f.Path, f.Chunks, want)
		}
		chunks += len(f.Chunks)
	}
	if want := []string{"README.MD", "guide/install.md", "guide/upgrade.mdx"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "broken.md") {
		t.Errorf("skipped %q, want broken.md alone", skipped)
	}

	col, err := IndexMarkdown(context.Background(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if col.Docs != len(got) || col.Chunks != chunks || !reflect.DeepEqual(col.Skipped, skipped) {
		t.Errorf("IndexMarkdown indexed %d files, %d chunks, skipped %q; ReadMarkdown %d, %d, %q",
			col.Docs, col.Chunks, col.Skipped, len(got), chunks, skipped)
	}
}

func TestReadMarkdownMissingFolder(t *testing.T) {
	if _, _, err := ReadMarkdown(context.Background(), t.TempDir()+"/absent", 0); err == nil {
		t.Fatal("no error for a missing folder")
	}
}
