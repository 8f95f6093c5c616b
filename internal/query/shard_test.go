package query

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A shard's replica restarts from its segment, the statistics of the other
// shard's pages included: after pages of both shards changed, were added
// and removed while it was down, it scores every section as a shard that
// replayed the bucket. A segment of another shard is not used.
func TestShardRestartsFromItsSegment(t *testing.T) {
	srv := natstest.Start(t, "")
	ctx := context.Background()
	kv, err := srv.JS.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	an := analysis.New()
	own, other := map[string]bool{}, map[string]bool{}
	for i := range 24 {
		path := fmt.Sprintf("page%02d.md", i)
		putPage(t, kv, an, uint64(i+1), path, fmt.Sprintf("# Page %d\n\nThe gateway restarts and the retention policy keeps value %d.\n\n## Tokens\n\nToken rotation number %d.\n", i, i, i%5))
		if contract.ShardOf(contract.DocKey("docs", path), 2) == 0 {
			own[path] = true
		} else {
			other[path] = true
		}
	}
	if len(own) == 0 || len(other) == 0 {
		t.Fatalf("pages split %d/%d between the shards", len(own), len(other))
	}
	dir := t.TempDir()
	shard0 := Config{Shards: 2, Shard: 0}
	var logs natstest.LogBuffer
	first, stop := replicaWith(t, shard0, srv.JS, dir, &logs)
	segmentAt(t, dir, first.Engine().Revision())
	stop()
	// Both shards' pages change while the replica is down.
	seq := uint64(100)
	for _, set := range []map[string]bool{own, other} {
		n := 0
		for path := range set {
			seq++
			switch n {
			case 0:
				putPage(t, kv, an, seq, path, "# Changed\n\nThe quasar operator restarts the gateway twice.\n")
			case 1:
				if err := kv.Delete(ctx, contract.DocKey("docs", path)); err != nil {
					t.Fatal(err)
				}
			}
			n++
		}
	}
	for i := range 4 {
		seq++
		putPage(t, kv, an, seq, fmt.Sprintf("new%d.md", i), "# New\n\nA quasar retention policy for tokens.\n")
	}

	var logs2 natstest.LogBuffer
	restarted, _ := replicaWith(t, shard0, srv.JS, dir, &logs2)
	if !restarted.seg.loaded {
		t.Fatalf("the shard did not start from its segment:\n%s", logs2.String())
	}
	fresh, _ := replicaWith(t, shard0, srv.JS, "", &natstest.LogBuffer{})
	qs := []string{"gateway restarts", "retention policy value", "token rotation", "quasar operator"}
	if got, want := answers(t, restarted, qs...), answers(t, fresh, qs...); got != want {
		t.Errorf("restarted from its segment:\n%s\nreplayed:\n%s", got, want)
	}
	for _, q := range qs {
		terms := []contract.ShardTerm{}
		for i, w := range strings.Fields(q) {
			terms = append(terms, contract.ShardTerm{Text: w, Weight: 1, Group: i})
		}
		a, err := restarted.Engine().ShardSearch(contract.ShardSearchRequest{Terms: terms, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := fresh.Engine().ShardSearch(contract.ShardSearchRequest{Terms: terms, Limit: 20})
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%q: shard part from the segment %v, replayed %v", q, a, b)
		}
	}

	// Shard 1 finds shard 0's segment and replays the bucket instead.
	var logs3 natstest.LogBuffer
	r1, _ := replicaWith(t, Config{Shards: 2, Shard: 1}, srv.JS, dir, &logs3)
	if r1.seg.loaded || !strings.Contains(logs3.String(), `segment of shard \"0/2\"`) {
		t.Fatalf("shard 1 used shard 0's segment:\n%s", logs3.String())
	}
}
