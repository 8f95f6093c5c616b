package engine

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
)

// wireShards reaches shard engines through the wire's encodings, as a
// replica reaches them over NATS (requests in JSON, replies in
// contract.EncodeShardReply's binary); down names shards that do not
// answer.
type wireShards struct {
	t       *testing.T
	engines []*Engine
	down    map[int]bool
}

func wire[T any](t *testing.T, v any) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (w wireShards) Search(req contract.ShardSearchRequest) ([]*contract.ShardSearchReply, []int) {
	var out []*contract.ShardSearchReply
	var missing []int
	for i, e := range w.engines {
		if w.down[i] {
			missing = append(missing, i)
			continue
		}
		r, err := e.ShardSearch(wire[contract.ShardSearchRequest](w.t, req))
		if err != nil {
			w.t.Fatal(err)
		}
		out = append(out, binaryReply(w.t, r))
	}
	return out, missing
}

func (w wireShards) Page(key string) (*contract.ShardSearchReply, error) {
	r, err := w.engines[contract.ShardOf(key, len(w.engines))].ShardPage(key)
	if err != nil {
		return nil, err
	}
	return binaryReply(w.t, r), nil
}

func binaryReply(t *testing.T, r *contract.ShardSearchReply) *contract.ShardSearchReply {
	t.Helper()
	out, err := contract.DecodeShardReply(contract.EncodeShardReply(r))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rankDocs applies the golden ranking's docs folder, as a core repository
// and as an extension's copy of it, to every engine given.
func rankDocs(t *testing.T, engines ...*Engine) {
	t.Helper()
	seq := uint64(0)
	for _, repo := range []struct {
		name string
		meta contract.RepoMeta
	}{{"docs", contract.RepoMeta{Type: contract.RepoCore}}, {"ext", contract.RepoMeta{Type: contract.RepoExtension, Priority: 5}}} {
		root := filepath.Join("testdata", "rank", "docs")
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			chunks, err := chunker.Split(rel, data, chunker.Options{})
			if err != nil {
				return err
			}
			seq++
			cs := &contract.ChunkSet{Repo: repo.name, Path: rel, FileSeq: seq, Meta: repo.meta, Chunks: chunks}
			for _, e := range engines {
				e.Apply(contract.DocKey(repo.name, rel), indexer.BuildDoc(cs, e.Analyzer()), seq)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Two shards reached through the wire's JSON answer every golden query as
// one engine of every page does, to the last score bit: sections and
// pages, with the snippets, contents, conflicts (an extension's copy of
// every page), filters and token budgets (whose context sections come
// from the shard holding the page). A shard that does not answer leaves
// a reply flagged partial.
func TestShardsAnswerAsOneEngine(t *testing.T) {
	whole := NewEngine(Limits{})
	shards := []*Engine{NewEngine(Limits{}), NewEngine(Limits{})}
	for i, e := range shards {
		e.SetShard(i, len(shards))
	}
	ws := wireShards{t: t, engines: shards, down: map[int]bool{}}
	shards[1].SetShards(ws)
	rankDocs(t, append([]*Engine{whole}, shards...)...)
	if a, b := shards[0].docs.Stats(), shards[1].docs.Stats(); a.Chunks == 0 || b.Chunks == 0 || a.Collection != b.Collection || a.Chunks+b.Chunks != a.Collection {
		t.Fatalf("shards hold %d and %d sections of %d and %d", a.Chunks, b.Chunks, a.Collection, b.Collection)
	}
	qf, err := os.Open(filepath.Join("testdata", "rank", "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	var queries []string
	for sc := bufio.NewScanner(qf); sc.Scan(); {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			queries = append(queries, q)
		}
	}
	variants := []func(r *contract.SearchRequest){
		func(r *contract.SearchRequest) {},
		func(r *contract.SearchRequest) { r.Group = contract.GroupPages; r.Content = true },
		func(r *contract.SearchRequest) { r.MaxTokens = 600 },
		func(r *contract.SearchRequest) { r.Repos = []string{"ext"}; r.TopK = 3 },
		func(r *contract.SearchRequest) { r.Lang = "en"; r.NoSnippet = true },
	}
	compared, shadowed, context := 0, 0, 0
	for _, q := range queries {
		for vi, v := range variants {
			req := contract.SearchRequest{Query: q}
			v(&req)
			want, err := whole.SearchDocs(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := shards[1].SearchDocs(req)
			if err != nil {
				t.Fatal(err)
			}
			want.TookMicros, got.TookMicros = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q (variant %d): sharded\n%+v\nwant\n%+v", q, vi, got, want)
			}
			compared++
			if len(got.Shadowed) > 0 {
				shadowed++
			}
			if len(got.Context) > 0 {
				context++
			}
		}
	}
	if shadowed == 0 || context == 0 {
		t.Fatalf("%d replies with conflicts and %d with context sections: the test puts neither to work", shadowed, context)
	}
	ws.down[0] = true
	got, err := shards[1].SearchDocs(contract.SearchRequest{Query: queries[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Partial || !reflect.DeepEqual(got.MissingShards, []int{0}) {
		t.Fatalf("shard 0 down: partial %v, missing %v", got.Partial, got.MissingShards)
	}
	for _, h := range got.Hits {
		if contract.ShardOf(contract.DocKey(h.Repo, h.Path), 2) != 1 {
			t.Fatalf("shard 0 down: hit %s:%s is shard 0's", h.Repo, h.Path)
		}
	}
	t.Logf("%d searches answer alike, %d with conflicts, %d with context sections", compared, shadowed, context)
}

// A shard rejects what a coordinator never sends.
func TestShardSearchRejectsBadRequests(t *testing.T) {
	e := NewEngine(Limits{})
	e.SetShard(0, 2)
	for _, req := range []contract.ShardSearchRequest{
		{Limit: 0}, {Limit: maxShardLimit + 1}, {Limit: 10, Near: -1}, {Limit: 10, Lang: "not a language!"},
	} {
		if _, err := e.ShardSearch(req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	if _, err := e.ShardPage("docs.none.x"); err == nil {
		t.Error("a page the shard does not hold: no error")
	}
}
