package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
)

// localShards reaches shard engines in process, as a replica reaches them
// over NATS (the wire's JSON keeps every score bit: see the engine's
// TestShardReplyKeepsScores).
type localShards struct {
	t       *testing.T
	engines []*engine.Engine
}

func (l localShards) Search(req contract.ShardSearchRequest) ([]*contract.ShardSearchReply, []int) {
	var out []*contract.ShardSearchReply
	for _, e := range l.engines {
		r, err := e.ShardSearch(req)
		if err != nil {
			l.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (l localShards) Page(key string) (*contract.ShardSearchReply, error) {
	return l.engines[contract.ShardOf(key, len(l.engines))].ShardPage(key)
}

// newShards returns n shard engines for a collection to tee its documents
// to, the first of them coordinating.
func newShards(t *testing.T, n int) []*engine.Engine {
	var out []*engine.Engine
	for i := range n {
		e := newCollection(true).engine
		e.SetShard(i, n)
		out = append(out, e)
	}
	out[0].SetShards(localShards{t, out})
	return out
}

// Every judged docs set ranks every query of both halves, to the last
// score bit and Depth pages deep, on 2 and 3 shards as on one index: each
// shard scores with the whole collection's statistics, and the
// coordinator runs the docs pipeline on the merged hits. Two copies of
// one corpus as two repositories put conflict resolution to work too.
func TestShardsRankEveryJudgedSetAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every judged corpus")
	}
	ctx := context.Background()
	corpora := filepath.Join("..", "..", "..", "shared", "corpora")
	sets, err := LoadSets(filepath.Join("testdata", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	counts := []int{2, 3}
	type built struct {
		whole  *Collection
		shards map[int]*Collection
	}
	build := func(fill func(c *Collection) error) *built {
		b := &built{whole: newCollection(true), shards: map[int]*Collection{}}
		var engines [][]*engine.Engine
		for _, n := range counts {
			es := newShards(t, n)
			engines = append(engines, es)
			b.whole.tees = append(b.whole.tees, es...)
		}
		if err := fill(b.whole); err != nil {
			t.Fatal(err)
		}
		b.whole.tees = nil
		for i, n := range counts {
			v := *b.whole
			v.engine = engines[i][0]
			b.shards[n] = &v
		}
		return b
	}
	type key struct{ corpus, strip string }
	cols := map[key]*built{}
	for _, s := range sets {
		dir := filepath.Join(corpora, s.Corpus)
		if !exists(dir) {
			t.Logf("%s: corpus %s not available", s.Name, dir)
			continue
		}
		k := key{s.Corpus, filepath.Join(s.StripFrontMatter...)}
		if cols[k] == nil {
			cols[k] = build(func(c *Collection) error {
				return c.addMarkdown(ctx, repo, dir, MarkdownOptions{StripFrontMatter: s.StripFrontMatter}, 0)
			})
		}
		b := cols[k]
		for _, half := range []string{Dev, Test} {
			queries, _, err := s.Load(half)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range counts {
				sameRankings(t, s.Name+"/"+half+"/"+string(rune('0'+n))+" shards", b.whole, b.shards[n], queries)
			}
		}
	}
	// Two repositories holding copies of one corpus: every hit has a
	// conflict to resolve.
	nats := filepath.Join(corpora, "nats-docs")
	if !exists(nats) {
		t.Skip("nats-docs not available")
	}
	b := build(func(c *Collection) error {
		c.repos = true
		for i, r := range []string{"core", "copy"} {
			if err := c.addMarkdown(ctx, r, nats, MarkdownOptions{}, uint64(i)<<32); err != nil {
				return err
			}
		}
		return nil
	})
	for _, s := range sets {
		if s.Corpus != "nats-docs" {
			continue
		}
		queries, _, err := s.Load(Test)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range counts {
			sameRankings(t, "two copies/"+s.Name+"/"+string(rune('0'+n))+" shards", b.whole, b.shards[n], queries)
		}
	}
}
