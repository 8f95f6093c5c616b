package embedding_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/embedding/embedtest"
	"github.com/knowhub/knowhub/internal/semantic"
)

func TestEmbedBatchesInOrder(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	srv.Key = "sk-test-key"
	c, err := embedding.New(embedding.Config{BaseURL: srv.BaseURL(), Model: embedtest.Model, APIKey: "sk-test-key", BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	in := []string{"restart the gateway", "install the plugin", "configure a channel", "the weather"}
	vecs, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 4 || srv.Requests.Load() != 2 {
		t.Fatalf("%d vectors in %d requests, want 4 in 2", len(vecs), srv.Requests.Load())
	}
	for i, v := range vecs {
		want := srv.Vector(in[i])
		if len(v) != len(want) || v[0] != want[0] {
			t.Fatalf("vector %d is not the server's vector of %q", i, in[i])
		}
	}
	q, err := c.EmbedQuery(context.Background(), "reboot the gateway")
	if err != nil {
		t.Fatal(err)
	}
	if near, far := semantic.Cosine(q, embedding.Encode(vecs[0])), semantic.Cosine(q, embedding.Encode(vecs[3])); near <= far {
		t.Fatalf("cosine with its paraphrase %.3f, with an unrelated text %.3f", near, far)
	}
}

func TestEmbedErrors(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	c, err := embedding.New(embedding.Config{BaseURL: srv.BaseURL(), Model: embedtest.Model})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"a " + embedtest.Reject})
	if !embedding.Rejected(err) {
		t.Fatalf("a refused input: %v, want a rejection", err)
	}
	srv.Down.Store(true)
	_, err = c.Embed(context.Background(), []string{"text"})
	var se *embedding.StatusError
	if !errors.As(err, &se) || se.Code != 503 || embedding.Rejected(err) {
		t.Fatalf("a server that is down: %v, want a 503 that is not a rejection", err)
	}
	srv.Close()
	if _, err := c.Embed(context.Background(), []string{"text"}); err == nil || embedding.Rejected(err) {
		t.Fatalf("a closed server: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	err := embedding.Config{BaseURL: "ftp://x", Dimensions: -1, BatchSize: 5000}.Validate()
	for _, want := range []string{"url:", "model: required", "dimensions:", "batchSize:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
	if s := (embedding.Config{APIKey: "sk-secret"}).LogValue().String(); strings.Contains(s, "sk-secret") {
		t.Fatalf("LogValue shows the key: %s", s)
	}
}
