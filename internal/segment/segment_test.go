package segment_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/segment"
)

const rankDir = "../engine/testdata/rank"

// loaded is an engine fed the golden ranking's docs, a tool catalog and
// a few knowledge entries, through the real chunker and analyzer.
func loaded(t testing.TB) (*engine.Engine, []string, []string) {
	t.Helper()
	e := engine.NewEngine(engine.Limits{})
	rev := uint64(0)
	docs := filepath.Join(rankDir, "docs")
	err := filepath.WalkDir(docs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(docs, path)
		rel = filepath.ToSlash(rel)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			return err
		}
		rev++
		cs := &contract.ChunkSet{Repo: "docs", Path: rel, FileSeq: rev, Meta: contract.RepoMeta{Type: contract.RepoCore, Priority: 2, Demote: []string{"old/**"}}, Chunks: chunks}
		e.Apply(contract.DocKey("docs", rel), indexer.BuildDoc(cs, e.Analyzer()), rev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../engine/testdata/tools-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Tools []contract.Tool `json:"tools"`
		Cases []struct {
			Query string `json:"query"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatal(err)
	}
	var toolQueries []string
	for i := range cat.Tools {
		rev++
		e.Apply(contract.ToolIndexKey(cat.Tools[i].Name), catalog.BuildDoc(&cat.Tools[i], rev, e.Analyzer()), rev)
	}
	for _, c := range cat.Cases {
		toolQueries = append(toolQueries, c.Query)
	}
	for i, x := range []kb.Entry{
		{ID: "k1", Task: "Speed up docker builds", Content: "Use BuildKit cache mounts.", Types: []string{"tip"}, State: kb.StateActive},
		{ID: "k2", Task: "Rotate the NATS token", Content: "Write a new token file, then restart the node.", Types: []string{"howto"}, State: kb.StateActive},
		{ID: "k3", Task: "Flaky tests", Content: "Poll with a deadline instead of sleeping.", Types: []string{"tip"}, State: kb.StateActive},
	} {
		rev++
		x.Seq = uint64(100 + i)
		e.Apply(contract.KBIndexKey(x.ID), kb.BuildDoc(&x, e.Analyzer()), rev)
	}
	f, err := os.Open(filepath.Join(rankDir, "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var queries []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			queries = append(queries, q)
		}
	}
	return e, queries, toolQueries
}

// write writes e's segment into dir.
func write(t testing.TB, e *engine.Engine, dir string) string {
	t.Helper()
	snaps, rev := e.Snapshot()
	var cols []segment.Collection
	for _, c := range engine.Collections {
		cols = append(cols, segment.Collection{Name: c, Snapshot: snaps[c]})
	}
	path := filepath.Join(dir, "index.seg")
	meta := segment.Meta{Revision: rev, Bucket: "b1", Builds: map[string]string{"docs": "a1"}}
	if err := segment.Write(path, meta, cols, engine.EncodeExtra); err != nil {
		t.Fatal(err)
	}
	return path
}

// load opens a segment into a fresh engine.
func load(t testing.TB, path string) (*engine.Engine, segment.Meta) {
	t.Helper()
	seg, err := segment.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// Never released: the engine serves text from the map.
	snaps := map[string]*search.Snapshot{}
	for _, c := range engine.Collections {
		s, err := seg.Collection(c, engine.DecodeExtra)
		if err != nil {
			t.Fatal(err)
		}
		snaps[c] = s
	}
	e := engine.NewEngine(engine.Limits{})
	if err := e.Restore(snaps, seg.Meta.Revision); err != nil {
		t.Fatal(err)
	}
	seg.Settle() // what was copied leaves the process; the rest is read in place
	return e, seg.Meta
}

// answers renders every search of the queries on e, in full (content,
// snippets, scores, shadowed hits), timings aside.
func answers(t testing.TB, e *engine.Engine, queries, toolQueries []string) string {
	t.Helper()
	var out strings.Builder
	for _, q := range queries {
		for _, group := range []string{contract.GroupSections, contract.GroupPages} {
			r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 10, Content: true, Group: group})
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			r.TookMicros = 0
			b, _ := json.Marshal(r)
			fmt.Fprintf(&out, "docs %s %s\n", group, b)
		}
	}
	for _, q := range toolQueries {
		r, err := e.SearchTools(contract.ToolSearchRequest{Query: q, Limit: 8})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		r.TookMicros = 0
		b, _ := json.Marshal(r)
		fmt.Fprintf(&out, "tools %s\n", b)
	}
	for _, q := range []string{"docker cache", "token restart", "tests sleeping deadline"} {
		r, err := e.SearchKB(kb.SearchRequest{Query: q, Limit: 5, AllScopes: true})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		r.TookMicros = 0
		b, _ := json.Marshal(r)
		fmt.Fprintf(&out, "kb %s\n", b)
	}
	st := e.Stats(true)
	b, _ := json.Marshal(st)
	fmt.Fprintf(&out, "stats %s\n", b)
	return out.String()
}

func TestRoundTripAnswersAsTheHeapIndex(t *testing.T) {
	e, queries, toolQueries := loaded(t)
	path := write(t, e, t.TempDir())
	got, meta := load(t, path)
	if meta.Revision != e.Revision() || meta.Bucket != "b1" || meta.Builds["docs"] != "a1" {
		t.Errorf("meta %+v, revision %d", meta, e.Revision())
	}
	if got.Revision() != e.Revision() {
		t.Errorf("revision %d, want %d", got.Revision(), e.Revision())
	}
	want := answers(t, e, queries, toolQueries)
	if a := answers(t, got, queries, toolQueries); a != want {
		t.Errorf("answers differ after a round trip:\n%s", firstDiff(a, want))
	}
	// The restored index takes updates as the original does: a page
	// replaced, one removed, a new one with words of its own.
	for _, x := range []*engine.Engine{e, got} {
		changeDocs(t, x)
	}
	want = answers(t, e, append(queries, "zyxwvut quasar", "kubernetes operator"), toolQueries)
	if a := answers(t, got, append(queries, "zyxwvut quasar", "kubernetes operator"), toolQueries); a != want {
		t.Errorf("answers differ after updates on the restored index:\n%s", firstDiff(a, want))
	}
	// And a segment of the updated, restored index round-trips again.
	again, _ := load(t, write(t, got, t.TempDir()))
	if a := answers(t, again, queries, toolQueries); a != answers(t, got, queries, toolQueries) {
		t.Errorf("second round trip differs:\n%s", firstDiff(a, want))
	}
}

// changeDocs replaces, removes and adds docs pages.
func changeDocs(t testing.TB, e *engine.Engine) {
	t.Helper()
	rev := e.Revision()
	var keys []string
	e.ListRepos()
	pages, err := e.ListPages(contract.DocsPagesRequest{Repo: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages.Pages {
		keys = append(keys, p.Path)
	}
	if len(keys) < 3 {
		t.Fatalf("pages %v", keys)
	}
	rev++
	e.Apply(contract.DocKey("docs", keys[0]), nil, rev)
	for i, p := range []string{keys[1], "new/quasar.md"} {
		chunks, err := chunker.Split(p, []byte(fmt.Sprintf("# Quasar %d\n\nThe zyxwvut quasar runs a kubernetes operator.\n\n## Setup\n\nInstall it.\n", i)), chunker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rev++
		cs := &contract.ChunkSet{Repo: "docs", Path: p, FileSeq: rev, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: chunks}
		e.Apply(contract.DocKey("docs", p), indexer.BuildDoc(cs, e.Analyzer()), rev)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "got  " + al[i] + "\nwant " + bl[i]
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(al), len(bl))
}

func TestDamageIsDetected(t *testing.T) {
	e, _, _ := loaded(t)
	path := write(t, e, t.TempDir())
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"a byte flipped in the middle", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"a byte flipped early", func(b []byte) []byte { b[100] ^= 1; return b }},
		{"a byte flipped in the table", func(b []byte) []byte { b[len(b)-40] ^= 1; return b }},
		{"cut short", func(b []byte) []byte { return b[:len(b)*2/3] }},
		{"empty", func([]byte) []byte { return nil }},
		{"not a segment", func([]byte) []byte { return []byte("hello, this is not a segment file at all, just text") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "index.seg")
			if err := os.WriteFile(p, tc.edit(append([]byte(nil), good...)), 0o644); err != nil {
				t.Fatal(err)
			}
			seg, err := segment.Open(p)
			if err == nil {
				seg.Release()
				t.Fatal("a damaged segment opened")
			}
			if errors.Is(err, segment.ErrLayout) {
				t.Errorf("damage reported as another layout: %v", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := segment.Open(filepath.Join(t.TempDir(), "index.seg"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err %v, want not exist", err)
		}
	})
}

func TestOlderLayoutIsRefused(t *testing.T) {
	e, _, _ := loaded(t)
	path := write(t, e, t.TempDir())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[8:], segment.Layout-1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := segment.Open(path); !errors.Is(err, segment.ErrLayout) {
		t.Errorf("err %v, want ErrLayout", err)
	}
}

func TestWriteLeavesNoTemporaryFile(t *testing.T) {
	e, _, _ := loaded(t)
	dir := t.TempDir()
	write(t, e, dir)
	write(t, e, dir)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "index.seg" {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Errorf("directory holds %v", got)
	}
}

// An index restored from a mapped file, whose posting lists and entries'
// terms are read-only memory, takes removals of most pages (lists and the
// whole index compacted: in place, they would fault) and new pages as the
// heap index does, on the NATS docs.
func TestMappedIndexTakesRemovals(t *testing.T) {
	dir := "../../../shared/corpora/nats-docs"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("nats-docs not available")
	}
	e := engine.NewEngine(engine.Limits{})
	rev := uint64(0)
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		chunks, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil || len(chunks) == 0 {
			return nil
		}
		rev++
		cs := &contract.ChunkSet{Repo: "docs", Path: rel, FileSeq: rev, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: chunks}
		e.Apply(contract.DocKey("docs", rel), indexer.BuildDoc(cs, e.Analyzer()), rev)
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := load(t, write(t, e, t.TempDir()))
	queries := []string{"stream retention", "consumer ack policy", "key value bucket", "zyxwvut quasar", "leaf node"}
	for _, x := range []*engine.Engine{e, got} {
		rev := x.Revision()
		for i, p := range paths {
			if i%4 != 0 {
				rev++
				x.Apply(contract.DocKey("docs", p), nil, rev)
			}
		}
		chunks, err := chunker.Split("new/quasar.md", []byte("# Quasar\n\nThe zyxwvut quasar keeps a stream.\n"), chunker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rev++
		cs := &contract.ChunkSet{Repo: "docs", Path: "new/quasar.md", FileSeq: rev, Meta: contract.RepoMeta{Type: contract.RepoCore}, Chunks: chunks}
		x.Apply(contract.DocKey("docs", "new/quasar.md"), indexer.BuildDoc(cs, x.Analyzer()), rev)
	}
	if a, want := answers(t, got, queries, nil), answers(t, e, queries, nil); a != want {
		t.Errorf("answers differ after removals on the mapped index:\n%s", firstDiff(a, want))
	}
}
