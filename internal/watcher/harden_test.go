package watcher

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file whose real path is outside the repository root is never
// published, whether the file itself or a directory on its way is the
// symlink, and the skip is logged. A symlink that stays inside the root,
// and a root that is itself a symlink, are followed.
func TestSymlinksOutOfTheRootAreSkipped(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "passwd", "root:x:0:0:root:/root:/bin/bash")
	writeFile(t, outside, "etc/shadow.md", "# shadow\n\nroot:$6$hash")
	real := t.TempDir()
	writeFile(t, real, "real.md", "# real")
	writeFile(t, real, "inner/page.md", "# inner page")
	must(t, os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(real, "passwd.md")))
	must(t, os.Symlink(filepath.Join(real, "real.md"), filepath.Join(real, "alias.md")))
	// A symlinked directory pointing out; one pointing in.
	must(t, os.Symlink(filepath.Join(outside, "etc"), filepath.Join(real, "etc")))
	must(t, os.Symlink(filepath.Join(real, "inner"), filepath.Join(real, "innerlink")))
	// The repository is configured through a symlink to its root.
	root := filepath.Join(t.TempDir(), "repo")
	must(t, os.Symlink(real, root))
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}, DebounceMS: 20})
	scan(t, w, false)
	if !e.hasContent(t, "docs", "real.md", "# real") || !e.hasContent(t, "docs", "alias.md", "# real") {
		t.Error("files inside the root (one through a symlink) should be published")
	}
	if e.lastMsg(t, "docs", "passwd.md") != nil {
		t.Error("a symlink to a file outside the root was published")
	}
	// The live path sees a symlinked directory's files when told of them.
	run(t, w)
	must(t, os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(real, "late.md")))
	e.barrier(t, real)
	for _, rel := range []string{"late.md", "etc/shadow.md"} {
		c := w.evaluate(w.repos[0], rel, fileState{}, false, false)
		if c.verdict == verdictPut {
			t.Errorf("%s would be published", rel)
		}
	}
	if e.lastMsg(t, "docs", "late.md") != nil || e.lastMsg(t, "docs", "etc/shadow.md") != nil {
		t.Error("a symlink out of the root was published")
	}
	logs := e.logs.String()
	for _, rel := range []string{"passwd.md", "late.md"} {
		if !strings.Contains(logs, "path="+rel+" reason=\"outside the repository") {
			t.Errorf("no skip logged for %s:\n%s", rel, logs)
		}
	}
}

// A FIFO (or any non-regular file) matching the glob is skipped with a log
// line, and the scan does not block on it.
func TestFIFOSkipIsLogged(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	writeFile(t, root, "ok.md", "# ok")
	must(t, syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644))
	w := e.newWatcher(t, Config{Repos: []Repo{{Name: "docs", Root: root, Meta: meta}}})
	res := scan(t, w, false)
	if res.Published != 1 || res.Skipped != 1 {
		t.Errorf("scan %+v, want one published and one skipped", res)
	}
	if !strings.Contains(e.logs.String(), "path=pipe.md reason=\"not a regular file\"") {
		t.Errorf("no skip logged for the FIFO:\n%s", e.logs.String())
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
