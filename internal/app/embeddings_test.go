package app

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/embedding/embedtest"
	"github.com/knowhub/knowhub/internal/natstest"
)

// embedPages are pages whose words the word table knows; the car page
// shares no word with the query of TestEmbeddingsFindAParaphrase.
var embedPages = map[string]string{
	"car.md":     "# Automobile care\n\nChange the engine oil of your automobile every year and check the tyres.\n",
	"garden.md":  "# Garden\n\nWater the roses in the morning and prune the hedges in spring.\n",
	"cooking.md": "# Cooking\n\nBake the bread in a hot oven and let the dough rise overnight.\n",
	"music.md":   "# Music\n\nTune the guitar strings before the concert and practise the scales.\n",
}

func embedConfig(t *testing.T, srv *embedtest.Server) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range embedPages {
		writeFile(t, filepath.Join(dir, name), text)
	}
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	if srv != nil {
		cfg.Semantic.Embeddings.URL = srv.BaseURL()
		cfg.Semantic.Embeddings.Model = embedtest.Model
	}
	return cfg, dir
}

// indexEmbeddings returns, per docs path in KH_INDEX, how many of its
// chunks have an endpoint vector and how many chunks it has.
func indexEmbeddings(t *testing.T, js jetstream.JetStream) map[string][2]int {
	t.Helper()
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, contract.BucketIndex)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeysFiltered(ctx, contract.CollectionDocs+".>")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int{}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		doc, err := contract.DecodeIndexDoc(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range doc.Chunks {
			if len(c.Embedding) > 0 && doc.EmbeddingModel == embedtest.Model {
				n++
			}
		}
		out[doc.Path] = [2]int{n, len(doc.Chunks)}
	}
	return out
}

// everySectionEmbedded reports whether every page of embedPages has a
// vector for each of its sections.
func everySectionEmbedded(got map[string][2]int) bool {
	if len(got) != len(embedPages) {
		return false
	}
	for _, n := range got {
		if n[0] == 0 || n[0] != n[1] {
			return false
		}
	}
	return true
}

// The embedder stage writes a vector for every section, through
// KH_VECTORS into KH_INDEX, and the key is sent as a bearer token.
func TestEmbedderWritesVectorsForEverySection(t *testing.T) {
	es := embedtest.New()
	defer es.Close()
	es.Key = "sk-embed-test-0123456789"
	t.Setenv("KH_TEST_EMBED_KEY", es.Key)
	srv := natstest.Start(t, "")
	cfg, _ := embedConfig(t, es)
	cfg.Semantic.Embeddings.APIKeyEnv = "KH_TEST_EMBED_KEY"
	runNode(t, srv, cfg)
	natstest.WaitFor(t, 20*time.Second, "a vector for every section", func() bool {
		return everySectionEmbedded(indexEmbeddings(t, srv.JS))
	})
	if es.Inputs.Load() < int64(len(embedPages)) {
		t.Errorf("the endpoint embedded %d inputs for %d pages", es.Inputs.Load(), len(embedPages))
	}
	assertNowhere(t, srv.JS, es.Key)
}

// A query that shares no word with a section finds it through the
// vectors; with the endpoint unconfigured it does not.
func TestEmbeddingsFindAParaphrase(t *testing.T) {
	const q = "vehicle motor lubricant"
	es := embedtest.New()
	defer es.Close()
	srv := natstest.Start(t, "")
	cfg, _ := embedConfig(t, es)
	runNode(t, srv, cfg)
	natstest.WaitFor(t, 20*time.Second, "a vector for every section", func() bool {
		return everySectionEmbedded(indexEmbeddings(t, srv.JS))
	})
	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: q})
	if len(resp.Hits) == 0 || resp.Hits[0].Path != "car.md" {
		t.Fatalf("%q with embeddings ranks %v, want car.md first", q, paths(resp))
	}
	off := false
	if resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: q, Semantic: &off}); len(resp.Hits) > 0 && resp.Hits[0].Path == "car.md" {
		t.Fatalf("%q found car.md with semantic matching off: the page shares a word with it", q)
	}

	srv2 := natstest.Start(t, "")
	plain, _ := embedConfig(t, nil)
	runNode(t, srv2, plain)
	if resp := searchDocs(t, srv2.NC, contract.SearchRequest{Query: q}); len(resp.Hits) > 0 && resp.Hits[0].Path == "car.md" {
		t.Fatalf("%q found car.md without embeddings: %v", q, paths(resp))
	}
	if s, err := srv2.JS.Stream(context.Background(), contract.StreamVectors); err == nil {
		if info, err := s.Info(context.Background()); err != nil || info.State.Msgs != 0 {
			t.Errorf("KH_VECTORS holds messages without an endpoint: %v %v", info, err)
		}
	}
}

// With the endpoint down, queries are answered lexically and the stage
// waits; once the endpoint is back the stage catches up.
func TestEmbeddingsEndpointDown(t *testing.T) {
	es := embedtest.New()
	defer es.Close()
	es.Down.Store(true)
	srv := natstest.Start(t, "")
	cfg, _ := embedConfig(t, es)
	cfg.Semantic.Embeddings.QueryTimeoutMs = 200
	runNode(t, srv, cfg)
	resp := searchDocs(t, srv.NC, contract.SearchRequest{Query: "roses hedges"})
	if len(resp.Hits) == 0 || resp.Hits[0].Path != "garden.md" {
		t.Fatalf("a lexical query with the endpoint down: %v", paths(resp))
	}
	natstest.WaitFor(t, 10*time.Second, "the stage to try the endpoint", func() bool { return es.Failed.Load() > 1 })
	if got := indexEmbeddings(t, srv.JS); everySectionEmbedded(got) {
		t.Fatal("vectors while the endpoint is down")
	}
	es.Down.Store(false)
	natstest.WaitFor(t, 40*time.Second, "the stage to catch up", func() bool {
		return everySectionEmbedded(indexEmbeddings(t, srv.JS))
	})
	p, err := ReadProgress(context.Background(), srv.JS)
	if err != nil || p.DeadLetters != 0 {
		t.Fatalf("dead letters after the endpoint came back: %+v %v", p, err)
	}
}

// An input the endpoint refuses is dead-lettered with the reason; the
// other pages get their vectors.
func TestEmbeddingsRefusedInputIsDeadLettered(t *testing.T) {
	es := embedtest.New()
	defer es.Close()
	srv := natstest.Start(t, "")
	cfg, dir := embedConfig(t, es)
	writeFile(t, filepath.Join(dir, "bad.md"), "# Bad\n\nThis page holds "+embedtest.Reject+" and cannot be embedded.\n")
	runNode(t, srv, cfg)
	ctx := context.Background()
	natstest.WaitFor(t, 20*time.Second, "a dead letter", func() bool {
		p, err := ReadProgress(ctx, srv.JS)
		return err == nil && p.DeadLetters == 1
	})
	s, err := srv.JS.Stream(ctx, contract.StreamDLQ)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get(contract.HeaderStage) != "embedder" || !strings.Contains(m.Header.Get(contract.HeaderReason), "HTTP 400") {
		t.Fatalf("dead letter: %v", m.Header)
	}
	natstest.WaitFor(t, 20*time.Second, "vectors of the other pages", func() bool {
		got := indexEmbeddings(t, srv.JS)
		delete(got, "bad.md")
		return everySectionEmbedded(got)
	})
	if _, err := srv.JS.Stream(ctx, contract.StreamVectors); errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatal("no KH_VECTORS stream")
	}
}

// Words learned for a section after its vectors arrived rewrite the file's
// index value for the same version; the vectors stay, and both the learned
// word and the vectors find the page.
func TestLearnedWordsKeepTheVectors(t *testing.T) {
	es := embedtest.New()
	defer es.Close()
	srv := natstest.Start(t, "")
	cfg, _ := embedConfig(t, es)
	runNode(t, srv, cfg)
	natstest.WaitFor(t, 20*time.Second, "a vector for every section", func() bool {
		return everySectionEmbedded(indexEmbeddings(t, srv.JS))
	})
	ev := contract.LearnedEvent{Schema: contract.SchemaVersion, Op: contract.LearnedAdd, TranscriptID: "t1", Repo: "docs", Path: "car.md",
		HeadingPath: []string{"Automobile care"}, Words: []string{"maintenance"}}
	data, _ := json.Marshal(ev)
	if _, err := srv.JS.Publish(t.Context(), contract.LearnedSubject("docs", "car.md"), data); err != nil {
		t.Fatal(err)
	}
	lexical := contract.SearchRequest{Query: "maintenance", TopK: 3, Semantic: new(bool)}
	natstest.WaitFor(t, 20*time.Second, "car.md found by its learned word", func() bool {
		return rankOf(searchDocs(t, srv.NC, lexical), "car.md") == 1
	})
	if got := indexEmbeddings(t, srv.JS); !everySectionEmbedded(got) {
		t.Fatalf("the learned rewrite lost vectors: %v", got)
	}
	if r := rankOf(searchDocs(t, srv.NC, contract.SearchRequest{Query: "vehicle motor lubricant", TopK: 3}), "car.md"); r != 1 {
		t.Errorf("the paraphrase finds car.md at rank %d after the learned rewrite, want 1", r)
	}
}
