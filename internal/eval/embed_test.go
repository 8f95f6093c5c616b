package eval

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/embedding/embedtest"
)

var (
	embedSweep   = flag.String("embed.sweep", "", "sweep the embedding weight over the judged docs sets under `dir`, with vectors from embedtest")
	embedCorpora = flag.String("embed.corpora", "../../../shared/corpora", "with -embed.sweep, the `dir` holding the sets' corpora")
	embedHalf    = flag.String("embed.half", Dev, "with -embed.sweep, the half to score")
)

// TestEmbeddingWeightSweep prints nDCG@10 of every judged docs set for
// each embedding weight, sections and queries embedded by the embedtest
// server (knowhub's own word table): how the weight was chosen on the dev
// halves. It runs only with -embed.sweep:
//
//	go test ./internal/eval -run EmbeddingWeightSweep -embed.sweep testdata/docs -v
func TestEmbeddingWeightSweep(t *testing.T) {
	if *embedSweep == "" {
		t.Skip("pass -embed.sweep DIR to sweep the embedding weight")
	}
	srv := embedtest.New()
	defer srv.Close()
	client, err := embedding.New(embedding.Config{BaseURL: srv.BaseURL(), Model: embedtest.Model, BatchSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	sets, err := LoadSets(*embedSweep)
	if err != nil {
		t.Fatal(err)
	}
	weights := []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7}
	ctx := context.Background()
	cols := map[string]*Collection{}
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s", "set \\ weight")
	for _, w := range weights {
		fmt.Fprintf(&b, " %6.2f", w)
	}
	b.WriteString("\n")
	sums := make([]float64, len(weights))
	for _, s := range sets {
		q, rel, err := s.Load(*embedHalf)
		if err != nil {
			t.Fatal(err)
		}
		strip := slices.Clone(s.StripFrontMatter)
		sort.Strings(strip)
		key := s.Corpus + "\x00" + strings.Join(strip, ",")
		col := cols[key]
		if col == nil {
			if col, err = IndexMarkdownWith(ctx, filepath.Join(*embedCorpora, s.Corpus), MarkdownOptions{StripFrontMatter: strip, Embed: client}); err != nil {
				t.Fatal(err)
			}
			cols[key] = col
		}
		fmt.Fprintf(&b, "%-22s", s.Name)
		for i, w := range weights {
			col.SetEmbeddings(client, w)
			rep, err := Run(ctx, col, q, rel, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sums[i] += rep.NDCG10
			fmt.Fprintf(&b, " %.4f", rep.NDCG10)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-22s", "mean")
	for i := range weights {
		fmt.Fprintf(&b, " %.4f", sums[i]/float64(len(sets)))
	}
	t.Log("nDCG@10, " + *embedHalf + " halves\n" + b.String())
}
