package eval

import (
	"context"
	"os"
	"testing"

	"github.com/knowhub/knowhub/internal/engine"
)

// MetaTool's dev half through tool search, with semantic matching off and
// in each of its modes: each part must gain, and together they must keep
// the figure the defaults were chosen for (docs/performance.md).
func TestMetaToolSemanticGains(t *testing.T) {
	const dir = "../../../shared/eval/metatool"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MetaTool not available: %v", err)
	}
	docs, err := LoadCorpus(dir + "/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	queries, err := LoadQueries(dir + "/queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := LoadQrels(dir + "/qrels.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var dev []Query
	for _, q := range queries {
		if Half(q.ID) == Dev {
			dev = append(dev, q)
		}
	}
	ctx := context.Background()
	col, err := IndexTools(ctx, docs, 0)
	if err != nil {
		t.Fatal(err)
	}
	ndcg := map[engine.SemanticMode]float64{}
	for _, m := range []engine.SemanticMode{engine.SemanticOff, engine.SemanticExpand, engine.SemanticFuse, engine.SemanticDefault} {
		col.SetSemantic(m)
		rep, err := Run(ctx, col, dev, qrels, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ndcg[m] = rep.NDCG10
	}
	off := ndcg[engine.SemanticOff]
	t.Logf("nDCG@10 off %.4f, expand %.4f, fuse %.4f, default %.4f", off, ndcg[engine.SemanticExpand], ndcg[engine.SemanticFuse], ndcg[engine.SemanticDefault])
	if ndcg[engine.SemanticExpand] < off+0.01 || ndcg[engine.SemanticFuse] < off+0.01 {
		t.Errorf("a part gains less than 0.01 on its own")
	}
	if d := ndcg[engine.SemanticDefault]; d < 0.65 {
		t.Errorf("default %.4f, want at least 0.65", d)
	}
}
