package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/eval"
	"github.com/knowhub/knowhub/internal/natstest"
)

// answer is what a docs search answers, less its timing: the hits with
// their scores, the shadowed hits and the total.
type answer struct {
	Hits     []string
	Shadowed []string
	Total    int
}

func ask(t *testing.T, nc *nats.Conn, req contract.SearchRequest) (*contract.SearchResponse, error) {
	t.Helper()
	data, _ := json.Marshal(req)
	msg, err := nc.Request(contract.SubjectSearchDocs, data, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if e := msg.Header.Get("Nats-Service-Error"); e != "" {
		return nil, fmt.Errorf("%s", e)
	}
	var resp contract.SearchResponse
	return &resp, json.Unmarshal(msg.Data, &resp)
}

func answerOf(r *contract.SearchResponse) answer {
	a := answer{Total: r.Total}
	for _, h := range r.Hits {
		a.Hits = append(a.Hits, fmt.Sprintf("%s:%s#%s %v %s", h.Repo, h.Path, h.ChunkID, h.Score, h.Snippet))
	}
	for _, h := range r.Shadowed {
		a.Shadowed = append(a.Shadowed, fmt.Sprintf("%s:%s#%s %v by %s", h.Repo, h.Path, h.ChunkID, h.Score, h.ShadowedBy))
	}
	return a
}

func stats(nc *nats.Conn) (*contract.StatsResponse, error) {
	msg, err := nc.Request(contract.SubjectStats, []byte("{}"), 5*time.Second)
	if err != nil {
		return nil, err
	}
	var st contract.StatsResponse
	return &st, json.Unmarshal(msg.Data, &st)
}

// Query replicas split into 2 and then 3 shards, each a process of its
// own against one NATS server, answer every judged question of the NATS
// docs (both halves, sections and pages, with a token budget) exactly as
// one replica does, and list and read pages alike. A shard killed
// mid-run leaves replies flagged partial, naming it; restarted, it loads
// what changed while it was down and the answers are whole again.
func TestShardsAsProcessesAnswerAsOneReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the worker binaries")
	}
	sets, err := eval.LoadSets(filepath.Join("..", "eval", "testdata", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []contract.SearchRequest
	for _, s := range sets {
		if s.Corpus != "nats-docs" {
			continue
		}
		for _, half := range []string{eval.Dev, eval.Test} {
			qs, _, err := s.Load(half)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				r := contract.SearchRequest{Query: q.Text, TopK: 10}
				switch i % 3 {
				case 1:
					r.Group = contract.GroupPages
				case 2:
					r.MaxTokens = 1000
				}
				reqs = append(reqs, r)
			}
		}
	}
	if len(reqs) == 0 {
		t.Skip("no judged set of nats-docs")
	}
	w := newWorkbench(t)
	bin, srv, docs, want, logs, args, kv := w.bin, w.srv, w.docs, w.want, w.logs, w.args, w.kv
	ctx := context.Background()
	start(t, bin, "chunker", logs, args...)
	start(t, bin, "indexer", logs, args...)
	start(t, bin, "watcher", logs, args...)
	natstest.WaitFor(t, 120*time.Second, "every file to be indexed", func() bool {
		st, err := kv.Status(ctx)
		p, perr := app.ReadProgress(ctx, srv.JS)
		return err == nil && perr == nil && p.ChunkerPending == 0 && p.IndexerPending == 0 && int(st.Values()) == len(want)
	})
	total := 0
	for _, ids := range want {
		total += len(ids)
	}
	// ready waits for the replicas to serve every section, from every
	// shard.
	ready := func(shards, chunks int) {
		t.Helper()
		natstest.WaitFor(t, 60*time.Second, fmt.Sprintf("%d shards to serve %d sections", shards, chunks), func() bool {
			st, err := stats(srv.NC)
			return err == nil && !st.Partial && st.Collections[contract.CollectionDocs].Chunks == chunks && max(st.Shards, 1) == shards
		})
	}
	answers := func() []answer {
		t.Helper()
		var out []answer
		for _, r := range reqs {
			resp, err := ask(t, srv.NC, r)
			if err != nil {
				t.Fatalf("%q: %v", r.Query, err)
			}
			if resp.Partial {
				t.Fatalf("%q: partial reply, shards %v missing", r.Query, resp.MissingShards)
			}
			out = append(out, answerOf(resp))
		}
		return out
	}
	pages := func() string {
		t.Helper()
		data, _ := json.Marshal(contract.DocsPagesRequest{Repo: "docs", Offset: 7, Limit: 40})
		msg, err := srv.NC.Request(contract.SubjectDocsPages, data, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r contract.DocsPagesResponse
		if err := json.Unmarshal(msg.Data, &r); err != nil || len(r.Pages) == 0 {
			t.Fatalf("pages: %v %s", err, msg.Data)
		}
		var read []string
		for _, p := range r.Pages[:5] {
			data, _ := json.Marshal(contract.DocsReadRequest{Repo: "docs", Path: p.Path})
			msg, err := srv.NC.Request(contract.SubjectReadDocs, data, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var page contract.DocsReadResponse
			if err := json.Unmarshal(msg.Data, &page); err != nil || len(page.Sections) == 0 {
				t.Fatalf("read %s: %v %s", p.Path, err, msg.Data)
			}
			read = append(read, fmt.Sprint(page.Path, len(page.Sections), page.Sections[0].Text))
		}
		return fmt.Sprint(r.Total, r.Pages, read)
	}

	one := start(t, bin, "query", logs, args...)
	ready(1, total)
	wantAnswers, wantPages := answers(), pages()
	one.stop(t)

	var replicas []*proc
	for _, n := range []int{2, 3} {
		for _, p := range replicas {
			p.stop(t)
		}
		replicas = nil
		for i := range n {
			replicas = append(replicas, startEnv(t, bin, fmt.Sprintf("query%d", i), logs, []string{fmt.Sprintf("KNOWHUB_SHARD=%d/%d", i, n)}, args...))
		}
		ready(n, total)
		got := answers()
		differ := 0
		for i := range got {
			if !slices.Equal(got[i].Hits, wantAnswers[i].Hits) || !slices.Equal(got[i].Shadowed, wantAnswers[i].Shadowed) || got[i].Total != wantAnswers[i].Total {
				if differ++; differ <= 3 {
					t.Errorf("%d shards: %q answers\n%v\nwant\n%v", n, reqs[i].Query, got[i], wantAnswers[i])
				}
			}
		}
		if differ > 0 {
			t.Fatalf("%d shards: %d of %d searches answer otherwise than one replica", n, differ, len(reqs))
		}
		if got := pages(); got != wantPages {
			t.Fatalf("%d shards list and read pages otherwise:\n%s\nwant\n%s", n, got, wantPages)
		}
		t.Logf("%d shards: %d searches answer as one replica", n, len(reqs))
	}

	// Shard 2 of 3 goes down: the others answer, flagging what is missing.
	replicas[2].kill()
	natstest.WaitFor(t, 30*time.Second, "a reply flagged partial", func() bool {
		resp, err := ask(t, srv.NC, reqs[0])
		return err == nil && resp.Partial && slices.Equal(resp.MissingShards, []int{2})
	})
	if st, err := stats(srv.NC); err != nil || !st.Partial || !slices.Equal(st.MissingShards, []int{2}) {
		t.Fatalf("stats with shard 2 down: %+v, %v", st, err)
	}
	// A page that belongs to shard 2 is written while it is down.
	var name string
	for i := 0; ; i++ {
		name = fmt.Sprintf("zz-added-%d.md", i)
		if contract.ShardOf(contract.DocKey("docs", name), 3) == 2 {
			break
		}
	}
	page := "# Quokkanet relay\n\nThe quokkanet relay forwards subjects between clusters.\n"
	if err := os.WriteFile(filepath.Join(docs, name), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 60*time.Second, "the new page to be indexed", func() bool {
		_, err := kv.Get(ctx, contract.DocKey("docs", name))
		return err == nil
	})
	replicas[2] = startEnv(t, bin, "query2", logs, []string{"KNOWHUB_SHARD=2/3"}, args...)
	ready(3, total+1)
	resp, err := ask(t, srv.NC, contract.SearchRequest{Query: "quokkanet relay", TopK: 3})
	if err != nil || resp.Partial || len(resp.Hits) == 0 || resp.Hits[0].Path != name {
		t.Fatalf("after shard 2 restarted: %+v, %v", resp, err)
	}
}
