package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

func TestRoleOf(t *testing.T) {
	for _, c := range []struct {
		path string
		want PageRole
	}{
		{"jetstream/consumers.md", RoleCurrent},
		{"README.md", RoleCurrent},
		{"legacy/stan/intro.md", RoleLegacy},
		{"docs/Deprecated/old-api.md", RoleLegacy},
		{"archive/2019/setup.md", RoleLegacy},
		{"legacy/stan/release_notes/v1.md", RoleLegacy}, // legacy wins over dated
		{"blog/posts/2024-01-01-launch.md", RoleDated},
		{"release_notes/whats_new_22.md", RoleDated},
		{"releases/2026.7.1.md", RoleDated},
		{"announcements/bluebubbles.md", RoleDated},
		{"CHANGELOG.md", RoleDated},
		{"docs/legacy-mode.md", RoleCurrent}, // a file name, not a folder
		{"concepts/blogging.md", RoleCurrent},
	} {
		if got := RoleOf(c.path); got != c.want {
			t.Errorf("RoleOf(%q) = %d, want %d", c.path, got, c.want)
		}
	}
}

// engineFromDir indexes every file under dir (repository "docs") through
// the real chunker and indexer.
func engineFromDir(t *testing.T, dir string) *Engine {
	return engineFromDirMeta(t, dir, contract.RepoMeta{Type: contract.RepoCore})
}

// engineFromDirMeta is engineFromDir with the repository's meta.
func engineFromDirMeta(t *testing.T, dir string, meta contract.RepoMeta) *Engine {
	t.Helper()
	e := NewEngine(Limits{})
	seq := uint64(0)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			return err
		}
		seq++
		cs := &contract.ChunkSet{Repo: "docs", Path: rel, FileSeq: seq, Meta: meta, Chunks: chunks}
		e.Apply(contract.DocKey("docs", rel), indexer.BuildDoc(cs, e.Analyzer()), seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func topPage(t *testing.T, e *Engine, q string) string {
	t.Helper()
	r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 5, Group: contract.GroupPages, NoSnippet: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) == 0 {
		t.Fatalf("%q: no hit", q)
	}
	return r.Hits[0].Path
}

// A page of a superseded product (under legacy/) that repeats the
// question's words loses to the current page that answers it; without
// page roles it wins.
func TestLegacyPageBelowCurrent(t *testing.T) {
	e := engineFromDir(t, "testdata/roles/docs")
	const q = "durable subscriber resumes where it stopped after a restart"
	noRoles := DefaultPageScoring()
	noRoles.Legacy, noRoles.Dated = 0, 0
	if got := topPage(t, e.WithPageScoring(noRoles), q); got != "legacy/streaming/durable.md" {
		t.Fatalf("without page roles %s comes first: the case no longer tests anything", got)
	}
	if got := topPage(t, e, q); got != "jetstream/consumers.md" {
		t.Errorf("first page %s, want jetstream/consumers.md", got)
	}
}

// A blog post announcing a feature loses to the reference page about it
// when both match; without page roles the post wins.
func TestBlogPostBelowReference(t *testing.T) {
	e := engineFromDir(t, "testdata/roles/docs")
	const q = "retention limits per subject old messages removed"
	noRoles := DefaultPageScoring()
	noRoles.Legacy, noRoles.Dated = 0, 0
	if got := topPage(t, e.WithPageScoring(noRoles), q); got != "blog/posts/2024-05-01-retention.md" {
		t.Fatalf("without page roles %s comes first: the case no longer tests anything", got)
	}
	if got := topPage(t, e, q); got != "streams/retention.md" {
		t.Errorf("first page %s, want streams/retention.md", got)
	}
	// A question only the post answers still finds it.
	if got := topPage(t, e, "most requested feature of the year"); got != "blog/posts/2024-05-01-retention.md" {
		t.Errorf("first page %s, want the blog post", got)
	}
}

// A page that a glob of its repository's demote list matches (an old
// version's folder that no path segment names as legacy) ranks as a
// legacy page: below the current page that answers.
func TestDemoteGlob(t *testing.T) {
	const dir, q = "testdata/roles/demote", "durable subscriber resumes where it stopped after a restart"
	plain := engineFromDir(t, dir)
	if got := topPage(t, plain, q); got != "v1/durable.md" {
		t.Fatalf("without a demote glob %s comes first: the case no longer tests anything", got)
	}
	e := engineFromDirMeta(t, dir, contract.RepoMeta{Type: contract.RepoCore, Demote: []string{"v1/**"}})
	if got := topPage(t, e, q); got != "jetstream/consumers.md" {
		t.Errorf("first page %s, want jetstream/consumers.md", got)
	}
	// A glob that matches nothing changes nothing.
	other := engineFromDirMeta(t, dir, contract.RepoMeta{Type: contract.RepoCore, Demote: []string{"v0/**"}})
	if got := topPage(t, other, q); got != "v1/durable.md" {
		t.Errorf("first page %s with a glob matching nothing, want v1/durable.md", got)
	}
}

// With several repositories indexed, the repository whose pages hold the
// head beyond their share of the index wins the first place from a large
// repository's one page that repeats a word of the question; without
// repository focus the stray page wins.
func TestRepositoryFocus(t *testing.T) {
	e := NewEngine(Limits{})
	seq := uint64(0)
	add := func(repo, path, md string) {
		t.Helper()
		chunks, err := chunker.Split(path, []byte(md), chunker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seq++
		cs := &contract.ChunkSet{Repo: repo, Path: path, FileSeq: seq, Meta: contract.RepoMeta{Priority: 100, Type: contract.RepoCore}, Chunks: chunks}
		e.Apply(contract.DocKey(repo, path), indexer.BuildDoc(cs, e.Analyzer()), seq)
	}
	// A large assistant repository: one page about its message queue,
	// and many pages about other things.
	add("assistant", "concepts/queue.md", "# Message queue\n\nMessages wait in the queue; the queue keeps every message until the agent reads the message.\n")
	for i := range 40 {
		add("assistant", fmt.Sprintf("topics/t%d.md", i), fmt.Sprintf("# Topic %d\n\nThe agent answers in the chat about topic %d.\n", i, i))
	}
	// A small messaging repository about consumers.
	add("messaging", "consumers.md", "# Consumers\n\nA consumer reads a stream and acknowledges each one; an unacknowledged delivery is sent again.\n\n## Redelivery\n\nAfter the wait, the server sends the delivery again to the consumer.\n")
	add("messaging", "streams.md", "# Streams\n\nA stream stores every message that a consumer reads.\n")
	add("messaging", "acks.md", "# Acknowledgements\n\nA consumer acknowledges a message so that the server does not send it again.\n")
	const q = "my consumer keeps getting the same message again"
	off := DefaultPageScoring()
	off.RepoFocus = 0
	if got := topPage(t, e.WithPageScoring(off), q); got != "concepts/queue.md" {
		t.Fatalf("without repository focus %s comes first: the case no longer tests anything", got)
	}
	if got := topPage(t, e, q); got == "concepts/queue.md" {
		t.Errorf("first page %s, want a page of the messaging repository", got)
	}
}
