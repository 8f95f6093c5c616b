package semantic

import (
	"math"
	"sort"
)

// A Pool sums weighted term vectors into one vector.
type Pool struct {
	t     *Table
	sum   []float32
	terms int
}

// NewPool returns an empty pool over t.
func (t *Table) NewPool() *Pool { return &Pool{t: t, sum: make([]float32, t.dim)} }

// Add adds term at weight w times its inverse-frequency weight and
// reports whether the table has the term.
func (p *Pool) Add(term string, w float32) bool {
	i := p.t.Index(term)
	if i < 0 {
		return false
	}
	p.t.AddTo(p.sum, i, w*p.t.Weight(i))
	p.terms++
	return true
}

// Terms returns the number of terms added that the table has.
func (p *Pool) Terms() int { return p.terms }

// Unit returns the pooled vector normalised, or nil when it is zero.
func (p *Pool) Unit() []float32 {
	n := float32(0)
	for _, x := range p.sum {
		n += x * x
	}
	if n == 0 {
		return nil
	}
	n = float32(1 / math.Sqrt(float64(n)))
	out := make([]float32, len(p.sum))
	for i, x := range p.sum {
		out[i] = x * n
	}
	return out
}

// Encode returns the pooled vector in its stored form, Dim int8 bytes of
// the vector at the scale of its largest component, or nil when it is
// zero.
func (p *Pool) Encode() []byte {
	m := float32(0)
	for _, x := range p.sum {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		return nil
	}
	out := make([]byte, len(p.sum))
	for i, x := range p.sum {
		out[i] = byte(int8(math.Round(float64(x / m * 127))))
	}
	return out
}

// Cosine returns the cosine of the unit vector q and a stored vector
// (Encode); 0 when their dimensions differ or v is zero.
func Cosine(q []float32, v []byte) float32 {
	if len(q) != len(v) || len(v) == 0 {
		return 0
	}
	var dot, n float32
	for i, b := range v {
		x := float32(int8(b))
		dot += q[i] * x
		n += x * x
	}
	if n == 0 {
		return 0
	}
	return dot / float32(math.Sqrt(float64(n)))
}

// Neighbour is a term near another, with their cosine.
type Neighbour struct {
	Term string
	Sim  float32
}

// Neighbours returns up to k terms among candidates nearest to term, each
// at least minSim from it, nearest first; none when the table lacks term.
// Candidates the table lacks, and term itself, are skipped.
func (t *Table) Neighbours(term string, candidates []int, k int, minSim float32) []Neighbour {
	i := t.Index(term)
	if i < 0 || k <= 0 {
		return nil
	}
	var out []Neighbour
	for _, j := range candidates {
		if j == i || j < 0 {
			continue
		}
		if s := t.Similarity(i, j); s >= minSim {
			out = append(out, Neighbour{t.Term(j), s})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Sim != out[b].Sim {
			return out[a].Sim > out[b].Sim
		}
		return out[a].Term < out[b].Term
	})
	return out[:min(k, len(out))]
}

// All returns the indexes of every term of the table, for Neighbours over
// the whole vocabulary.
func (t *Table) All() []int {
	out := make([]int, t.n)
	for i := range out {
		out[i] = i
	}
	return out
}
