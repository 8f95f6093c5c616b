package semantic

import (
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

func TestDefaultTableLoads(t *testing.T) {
	tb := Default()
	if tb.Dim() != 100 || tb.Len() < 50000 {
		t.Fatalf("table has %d terms of %d dimensions", tb.Len(), tb.Dim())
	}
	// Terms are index terms: stemmed, like the analyzer makes them.
	for _, term := range []string{"weather", "recip", "password", "astrolog"} {
		if tb.Index(term) < 0 {
			t.Errorf("table lacks %q", term)
		}
	}
	if tb.Index("recipes") >= 0 {
		t.Error("table holds the unstemmed recipes")
	}
	i := tb.Index("weather")
	if s := tb.Similarity(i, i); s < 0.99 || s > 1.01 {
		t.Errorf("a term's cosine with itself is %v", s)
	}
	if tb.Weight(tb.Index("year")) >= tb.Weight(tb.Index("astrolog")) {
		t.Error("a common word weighs no less than a rare one")
	}
}

func TestNeighboursSane(t *testing.T) {
	tb := Default()
	all := tb.All()
	for _, c := range []struct{ term, want string }{
		{"horoscop", "astrolog"}, {"login", "password"}, {"recip", "ingredi"}, {"weather", "temperatur"},
	} {
		nb := tb.Neighbours(c.term, all, 10, 0.3)
		if !slices.ContainsFunc(nb, func(n Neighbour) bool { return n.Term == c.want }) {
			t.Errorf("neighbours of %s = %v, want %s among them", c.term, nb, c.want)
		}
		for k := 1; k < len(nb); k++ {
			if nb[k].Sim > nb[k-1].Sim {
				t.Errorf("neighbours of %s out of order: %v", c.term, nb)
			}
		}
	}
	if nb := tb.Neighbours("openclaw.json", all, 10, 0); nb != nil {
		t.Errorf("an unknown term has neighbours %v", nb)
	}
}

func TestParseRejectsDamage(t *testing.T) {
	b := NewBuilder(2)
	b.Add("a", 0, []float64{1, 0})
	b.Add("b", 1, []float64{0.6, 0.8})
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if s := tb.Similarity(0, 1); s < 0.59 || s > 0.61 {
		t.Errorf("cosine %v, want 0.6", s)
	}
	for _, bad := range [][]byte{nil, []byte("nope"), data[:len(data)-1], append(slices.Clone(data), 0)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse accepted %d damaged bytes", len(bad))
		}
	}
	b.Add("a", 2, []float64{1, 0})
	if _, err := b.Bytes(); err == nil {
		t.Error("Bytes accepted terms out of order")
	}
}

func TestPoolAndCosine(t *testing.T) {
	tb := Default()
	p := tb.NewPool()
	if p.Add("openclaw.json", 1) || p.Unit() != nil || p.Encode() != nil {
		t.Fatal("an unknown term pooled into a vector")
	}
	p.Add("weather", 1)
	p.Add("forecast", 1)
	q := tb.NewPool()
	q.Add("rain", 1)
	r := tb.NewPool()
	r.Add("recip", 1)
	if a, b := Cosine(q.Unit(), p.Encode()), Cosine(r.Unit(), p.Encode()); a <= b {
		t.Errorf("rain is no nearer weather forecast (%v) than recipe is (%v)", a, b)
	}
}

func TestAnnotate(t *testing.T) {
	doc := &contract.IndexDoc{Vocab: []string{"openclaw.json", "rain", "snow"}, Chunks: []contract.IndexChunk{
		{Fields: []contract.FieldTerms{{Field: "body", Terms: []uint32{1, 2}, TFs: []uint32{1, 3}}}},
		{Fields: []contract.FieldTerms{{Field: "body", Terms: []uint32{0}, TFs: []uint32{1}}}},
		{Terms: map[string]map[string]int{"name": {"weather": 1}}},
	}}
	Default().Annotate(doc, nil)
	if len(doc.Chunks[0].Vec) != 100 || doc.Chunks[1].Vec != nil || len(doc.Chunks[2].Vec) != 100 {
		t.Fatalf("vectors %d, %v, %d bytes", len(doc.Chunks[0].Vec), doc.Chunks[1].Vec, len(doc.Chunks[2].Vec))
	}
	q := Default().NewPool()
	q.Add("rain", 1)
	if c := Cosine(q.Unit(), doc.Chunks[0].Vec); c < 0.7 {
		t.Errorf("rain against rain and snow: cosine %v", c)
	}
}

// A field's weight pulls the pooled vector toward its words, in either
// form of a chunk; a field weighed 0 is left out.
func TestAnnotateWeighsFields(t *testing.T) {
	tool := func() *contract.IndexDoc {
		return &contract.IndexDoc{Vocab: []string{"weather", "recip"}, Chunks: []contract.IndexChunk{
			{Terms: map[string]map[string]int{"name": {"weather": 1}, "description": {"recip": 1}}},
			{Fields: []contract.FieldTerms{{Field: "name", Terms: []uint32{0}, TFs: []uint32{1}}, {Field: "description", Terms: []uint32{1}, TFs: []uint32{1}}}},
		}}
	}
	q := Default().NewPool()
	q.Add("weather", 1)
	plain, named, unnamed := tool(), tool(), tool()
	Default().Annotate(plain, nil)
	Default().Annotate(named, map[string]float32{"name": 2})
	Default().Annotate(unnamed, map[string]float32{"name": 0})
	for c := range plain.Chunks {
		p, n, u := Cosine(q.Unit(), plain.Chunks[c].Vec), Cosine(q.Unit(), named.Chunks[c].Vec), Cosine(q.Unit(), unnamed.Chunks[c].Vec)
		if !(n > p && p > u) {
			t.Errorf("chunk %d: cosine with the name's word %v at weight 2, %v at 1, %v at 0; want them in that order", c, n, p, u)
		}
	}
}

func TestMatrixNeighboursAgree(t *testing.T) {
	tb := Default()
	var ids []int
	for i := 0; i < tb.Len(); i += 7 {
		ids = append(ids, i)
	}
	m := tb.Matrix(ids)
	for _, term := range []string{"weather", "login", "recip"} {
		a, b := tb.Neighbours(term, ids, 5, 0.3), m.Neighbours(term, 5, 0.3)
		if len(a) != len(b) {
			t.Fatalf("%s: %v against %v", term, a, b)
		}
		for k := range a {
			if a[k].Term != b[k].Term {
				t.Errorf("%s: %v against %v", term, a, b)
			}
		}
	}
}

func TestAnnotatePoolsTheWeightiestTerms(t *testing.T) {
	tb := Default()
	// More common words than are pooled, and one rare word: the rare one
	// outweighs them, so it is pooled.
	vector := func(rare bool) []byte {
		var vocab []string
		for i := 0; i < tb.Len(); i++ {
			if tb.Rank(i) < 150 {
				vocab = append(vocab, tb.Term(i))
			}
		}
		if len(vocab) <= maxPooled {
			t.Fatalf("only %d common terms", len(vocab))
		}
		if rare {
			vocab = append(vocab, "astrolog")
		}
		slices.Sort(vocab)
		f := contract.FieldTerms{Field: "body"}
		for i := range vocab {
			f.Terms, f.TFs = append(f.Terms, uint32(i)), append(f.TFs, 1)
		}
		doc := &contract.IndexDoc{Vocab: vocab, Chunks: []contract.IndexChunk{{Fields: []contract.FieldTerms{f}}}}
		tb.Annotate(doc, nil)
		return doc.Chunks[0].Vec
	}
	q := tb.NewPool()
	q.Add("astrolog", 1)
	with, without := Cosine(q.Unit(), vector(true)), Cosine(q.Unit(), vector(false))
	if with < without+0.05 {
		t.Errorf("the rare term was not pooled: cosine %v with it, %v without", with, without)
	}
}

// BenchmarkMatrixNeighbours scans a matrix of 1,430 terms, about a tool
// catalog's vocabulary, for the neighbours of query words.
func BenchmarkMatrixNeighbours(b *testing.B) {
	tb := Default()
	var ids []int
	for i := 0; i < tb.Len(); i += 70 {
		ids = append(ids, i)
	}
	m := tb.Matrix(ids)
	var words []string
	for _, w := range []string{"horoscop", "apart", "laptop", "sick", "tire", "struggl", "calculus", "budget", "vacat", "stock"} {
		if tb.Index(w) >= 0 {
			words = append(words, w)
		}
	}
	if len(words) < 5 {
		b.Fatalf("only %v are in the table", words)
	}
	for i := 0; b.Loop(); i++ {
		m.Neighbours(words[i%len(words)], 3, 0.5)
	}
}
