package semantic

import (
	"math"
	"testing"
)

// shared returns n stored vectors of dim 8 that all lean on axis 0 (the
// direction pooled vectors share) and each add one of axes 1 to 7.
func shared(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		v := make([]byte, 8)
		v[0] = byte(int8(90 + i%5))
		v[1+i%7] = byte(int8(30))
		out[i] = v
	}
	return out
}

func unit(v ...float32) []float32 {
	n := float32(0)
	for _, x := range v {
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(float64(n)))
	}
	return v
}

func TestSpaceTakesOutTheCommonDirection(t *testing.T) {
	stored := shared(2 * MinCommon)
	stored[5] = nil // an entry without a vector
	s := NewSpace(8, stored, 1)
	if s.Len() != len(stored) {
		t.Fatalf("Len %d, want %d", s.Len(), len(stored))
	}
	// A query on axis 1 that also leans on axis 0, as every query does.
	q := unit(3, 1, 0, 0, 0, 0, 0, 0)
	// Entries 0 and 7 are on axis 1, 1 on axis 2, 2 on axis 3.
	if c := Cosine(q, stored[0]); c < 0.9 {
		t.Fatalf("before: cosine %v with its own axis; the fixture is wrong", c)
	}
	if c := Cosine(q, stored[1]); c < 0.8 {
		t.Fatalf("before: cosine %v with another axis: the shared lean should hide the difference", c)
	}
	qs := s.Query(q)
	cos := s.Cosines(qs, nil)
	if cos[0] < 0.9 || cos[7] < 0.9 {
		t.Errorf("after: cosines %v and %v with the query's own axis, want near 1", cos[0], cos[7])
	}
	if math.Abs(float64(cos[1])) > 0.2 || math.Abs(float64(cos[2])) > 0.2 {
		t.Errorf("after: cosines %v and %v with other axes, want near 0", cos[1], cos[2])
	}
	if cos[5] != 0 || s.RawCosine(5, qs, cos[5]) != 0 {
		t.Errorf("an entry without a vector has cosine %v", cos[5])
	}
	for _, i := range []int{0, 1, 2} {
		if got, want := s.RawCosine(i, qs, cos[i]), Cosine(q, stored[i]); math.Abs(float64(got-want)) > 1e-4 {
			t.Errorf("entry %d: raw cosine %v, want %v as pooled", i, got, want)
		}
	}
	// A query of the common direction alone has nothing left.
	if s.Query(append([]float32(nil), s.common[0]...)) != nil {
		t.Error("the common direction itself is left as a query")
	}
	if s.Query(q[:4]) != nil {
		t.Error("a query of the wrong dimension is accepted")
	}
}

func TestSmallSpaceKeepsItsVectors(t *testing.T) {
	stored := shared(MinCommon - 1)
	s := NewSpace(8, stored, 1)
	q := unit(3, 1, 0, 0, 0, 0, 0, 0)
	qs := s.Query(q)
	cos := s.Cosines(qs, nil)
	for i, v := range stored {
		want := Cosine(q, v)
		if math.Abs(float64(cos[i]-want)) > 1e-5 || math.Abs(float64(s.RawCosine(i, qs, cos[i])-want)) > 1e-5 {
			t.Errorf("entry %d: cosine %v, raw %v, want %v as without a space", i, cos[i], s.RawCosine(i, qs, cos[i]), want)
		}
	}
}

// Two shared directions: every entry leans on axis 0, and on axis 1 one
// way or the other. Taking out one direction leaves the second inflating
// the cosine of entries that share nothing but the way they lean on axis
// 1; taking out two tells them apart, and the cosines as pooled still
// follow from the ones in the space.
func TestSpaceTakesOutSeveralDirections(t *testing.T) {
	stored := make([][]byte, 3*MinCommon)
	for i := range stored {
		v := make([]byte, 8)
		v[0] = byte(int8(100 - i%3))
		lean := int8(50)
		if i%2 == 1 {
			lean = -lean
		}
		v[1] = byte(lean)
		v[2+i/2%6] = byte(int8(35))
		stored[i] = v
	}
	q := unit(4, -2.5, 1, 0, 0, 0, 0, 0) // axis 2, leaning on 0 and on -1
	other := func(s *Space) float32 {    // entry 3 is on axis 3 and leans on -1
		return s.Cosines(s.Query(q), nil)[3]
	}
	one, two := NewSpace(8, stored, 1), NewSpace(8, stored, 2)
	if len(one.common) != 1 || len(two.common) != 2 {
		t.Fatalf("%d and %d directions taken out, want 1 and 2", len(one.common), len(two.common))
	}
	if d := dot(two.common[0], two.common[1]); math.Abs(float64(d)) > 1e-3 {
		t.Errorf("the directions are not orthogonal: %v", d)
	}
	if c1, c2 := other(one), other(two); c1 < 0.5 || math.Abs(float64(c2)) > 0.2 {
		t.Errorf("cosine with an entry on another axis: %v with one direction out, %v with two; want it high, then near 0", c1, c2)
	}
	qs := two.Query(q)
	cos := two.Cosines(qs, nil)
	if cos[0] < 0.9 || cos[1] < 0.9 {
		t.Errorf("cosines with the entries on the query's axis: %v and %v, want near 1", cos[0], cos[1])
	}
	for i := range 12 {
		if got, want := two.RawCosine(i, qs, cos[i]), Cosine(q, stored[i]); math.Abs(float64(got-want)) > 1e-3 {
			t.Errorf("entry %d: raw cosine %v, want %v as pooled", i, got, want)
		}
	}
}
