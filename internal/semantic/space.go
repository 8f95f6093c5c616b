package semantic

import "math"

// A Space holds the pooled vectors of a collection's entries (Encode) as
// unit vectors with the collection's common directions taken out: the
// first principal directions of the vectors, which pooled vectors of any
// text share (the common component removal of SIF, Arora et al. 2017, and
// "all-but-the-top", Mu and Viswanath 2018). What is left tells the
// entries apart, so a query's cosines with them spread further. A Space is
// read-only and safe for concurrent use.
type Space struct {
	dim    int
	common [][]float32 // orthonormal, most shared first
	vecs   []float32   // row i is entry i's unit vector, zero when it has none
	along  []float32   // row i's components along common, before they were taken out
}

// MinCommon is the fewest vectors a Space takes common directions from:
// in fewer the principal directions are single entries' own rather than
// what they share.
const MinCommon = 32

// powerRounds is the number of power-iteration rounds that find each
// common direction.
const powerRounds = 50

// NewSpace returns the space of stored vectors of dim dimensions (one per
// entry, Encode's form; nil or the wrong length for an entry without one)
// with its first directions principal directions taken out (none when
// fewer than MinCommon entries have a vector).
func NewSpace(dim int, stored [][]byte, directions int) *Space {
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
	if n < MinCommon {
		directions = 0
	}
	// Each direction is the principal direction of what the ones before
	// it left, so they come out orthogonal; the rows are normalised once
	// all are out, so a row's component along each is its component in
	// the unit row as pooled.
	work := append([]float32(nil), s.vecs...)
	for range min(directions, dim-1) {
		d := principal(work, dim)
		if d == nil {
			break
		}
		s.common = append(s.common, d)
	}
	k := len(s.common)
	s.along = make([]float32, len(stored)*k)
	for i := range stored {
		row := s.vecs[i*dim : (i+1)*dim]
		s.remove(row, s.along[i*k:(i+1)*k])
		normalise(row)
	}
	return s
}

// principal takes the first principal direction (about the origin) out of
// rows, dim numbers each, found by power iteration from their mean or,
// when that is zero, from the longest row, and returns it; nil when the
// rows are all zero.
func principal(rows []float32, dim int) []float32 {
	d := make([]float32, dim)
	longest, at := float32(0), -1
	for i := 0; i < len(rows); i += dim {
		row := rows[i : i+dim]
		for j, x := range row {
			d[j] += x
		}
		if l := dot(row, row); l > longest {
			longest, at = l, i
		}
	}
	if at < 0 {
		return nil
	}
	if dot(d, d) < 1e-12 {
		copy(d, rows[at:at+dim])
	}
	normalise(d)
	next := make([]float32, dim)
	for range powerRounds {
		clear(next)
		for i := 0; i < len(rows); i += dim {
			row := rows[i : i+dim]
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
	for i := 0; i < len(rows); i += dim {
		row := rows[i : i+dim]
		p := dot(row, d)
		for j, c := range d {
			row[j] -= p * c
		}
	}
	return d
}

// remove takes the common directions out of v and writes v's components
// along them to along.
func (s *Space) remove(v []float32, along []float32) {
	for k, c := range s.common {
		p := dot(v, c)
		for j, x := range c {
			v[j] -= p * x
		}
		along[k] = p
	}
}

// Len returns the number of entries.
func (s *Space) Len() int { return len(s.vecs) / max(s.dim, 1) }

// A Query is a query vector in a space (Space.Query).
type Query struct {
	v     []float32 // unit, with the common directions taken out
	along []float32 // the pooled vector's components along them
}

// Query returns the unit query vector q (Pool.Unit) in the space: with the
// common directions taken out and normalised again; nil when the
// dimensions differ or next to nothing is left (a query of the common
// directions alone tells no entry from another).
func (s *Space) Query(q []float32) *Query {
	if len(q) != s.dim || q == nil {
		return nil
	}
	out := &Query{v: append([]float32(nil), q...), along: make([]float32, len(s.common))}
	s.remove(out.v, out.along)
	if dot(out.v, out.v) < minLeft*minLeft || !normalise(out.v) {
		return nil
	}
	return out
}

// minLeft is the shortest a unit query vector may be left by taking the
// common directions out.
const minLeft = 1e-3

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
// common directions were taken out of either, from their cosine in the
// space: two unit vectors a and b with components a_k and b_k along the
// common directions have a·b = cos·√(1−Σa_k²)·√(1−Σb_k²) + Σa_k·b_k. An
// entry without a vector gets 0.
func (s *Space) RawCosine(i int, q *Query, cos float32) float32 {
	k := len(s.common)
	b := s.along[i*k : (i+1)*k]
	var qa, ba, ab float64
	for j, x := range q.along {
		y := float64(b[j])
		qa += float64(x) * float64(x)
		ba += y * y
		ab += float64(x) * y
	}
	return float32(float64(cos)*math.Sqrt(max(0, 1-qa))*math.Sqrt(max(0, 1-ba)) + ab)
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
