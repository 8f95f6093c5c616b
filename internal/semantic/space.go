package semantic

import "math"

// A Space holds the pooled vectors of a collection's entries (Encode) as
// unit vectors with the collection's common direction taken out: the
// first principal direction of the vectors, which pooled vectors of any
// text share (the "common component removal" of SIF, Arora et al. 2017).
// What is left tells the entries apart, so a query's cosines with them
// spread further. A Space is read-only and safe for concurrent use.
type Space struct {
	dim    int
	common []float32 // unit; nil: nothing removed
	vecs   []float32 // row i is entry i's unit vector, zero when it has none
	along  []float32 // row i's component along common before it was taken out
}

// MinCommon is the fewest vectors a Space takes a common direction from:
// in fewer the first principal direction is one entry's own rather than
// what they share.
const MinCommon = 32

// powerRounds is the number of power-iteration rounds that find the
// common direction; the first eigenvalue of pooled vectors stands well
// clear of the second, so it converges in a few.
const powerRounds = 20

// NewSpace returns the space of stored vectors of dim dimensions (one per
// entry, Encode's form; nil or the wrong length for an entry without one).
func NewSpace(dim int, stored [][]byte) *Space {
	s := &Space{dim: dim, vecs: make([]float32, len(stored)*dim)}
	n := 0
	for i, v := range stored {
		if len(v) != dim {
			continue
		}
		row := s.vecs[i*dim : (i+1)*dim]
		for j, b := range v {
			row[j] = float32(int8(b))
		}
		if normalise(row) {
			n++
		}
	}
	s.along = make([]float32, len(stored))
	if n >= MinCommon {
		s.common = s.principal()
		for i := range stored {
			row := s.vecs[i*dim : (i+1)*dim]
			s.along[i] = s.remove(row)
			normalise(row)
		}
	}
	return s
}

// principal returns the first principal direction of the rows (about the
// origin) by power iteration from their mean.
func (s *Space) principal() []float32 {
	d := make([]float32, s.dim)
	for i := 0; i < len(s.vecs); i += s.dim {
		for j, x := range s.vecs[i : i+s.dim] {
			d[j] += x
		}
	}
	if !normalise(d) {
		return nil
	}
	next := make([]float32, s.dim)
	for range powerRounds {
		clear(next)
		for i := 0; i < len(s.vecs); i += s.dim {
			row := s.vecs[i : i+s.dim]
			p := dot(row, d)
			for j, x := range row {
				next[j] += p * x
			}
		}
		if !normalise(next) {
			return nil
		}
		d, next = next, d
	}
	return d
}

// remove takes the common direction out of v and returns v's component
// along it.
func (s *Space) remove(v []float32) float32 {
	if s.common == nil {
		return 0
	}
	p := dot(v, s.common)
	for j, c := range s.common {
		v[j] -= p * c
	}
	return p
}

// Len returns the number of entries.
func (s *Space) Len() int { return len(s.vecs) / max(s.dim, 1) }

// A Query is a query vector in a space (Space.Query).
type Query struct {
	v     []float32 // unit, with the common direction taken out
	along float32   // the pooled vector's component along it
}

// Query returns the unit query vector q (Pool.Unit) in the space: with the
// common direction taken out and normalised again; nil when the
// dimensions differ or next to nothing is left (a query of the common
// direction alone tells no entry from another).
func (s *Space) Query(q []float32) *Query {
	if len(q) != s.dim || q == nil {
		return nil
	}
	v := append([]float32(nil), q...)
	along := s.remove(v)
	if dot(v, v) < minLeft*minLeft || !normalise(v) {
		return nil
	}
	return &Query{v: v, along: along}
}

// minLeft is the shortest a unit query vector may be left by taking the
// common direction out.
const minLeft = 1e-3

// Cosine returns the cosine of entry i with q in the space; 0 for an
// entry without a vector.
func (s *Space) Cosine(i int, q *Query) float32 {
	return dot(s.vecs[i*s.dim:(i+1)*s.dim], q.v)
}

// Cosines returns the cosine of every entry with q in the space, in dst
// (grown as needed); an entry without a vector gets 0.
func (s *Space) Cosines(q *Query, dst []float32) []float32 {
	n := s.Len()
	dst = append(dst[:0], make([]float32, n)...)
	for i := range n {
		dst[i] = dot(s.vecs[i*s.dim:(i+1)*s.dim], q.v)
	}
	return dst
}

// RawCosine returns the cosine of entry i with q as pooled, before the
// common direction was taken out of either, from their cosine in the
// space: two unit vectors a and b with components a₁ and b₁ along the
// common direction have a·b = cos·√(1−a₁²)·√(1−b₁²) + a₁b₁. An entry
// without a vector gets 0.
func (s *Space) RawCosine(i int, q *Query, cos float32) float32 {
	a, b := float64(q.along), float64(s.along[i])
	return float32(float64(cos)*math.Sqrt(max(0, 1-a*a))*math.Sqrt(max(0, 1-b*b)) + a*b)
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// normalise scales v to unit length and reports whether it is non-zero.
func normalise(v []float32) bool {
	n := dot(v, v)
	if n == 0 {
		return false
	}
	f := float32(1 / math.Sqrt(float64(n)))
	for i := range v {
		v[i] *= f
	}
	return true
}
