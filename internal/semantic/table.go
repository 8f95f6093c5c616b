// Package semantic matches meaning without a model at run time: a static
// table of word vectors keyed by index term (GloVe, see NOTICE and
// gen/rebuild.sh), pooled into one vector per section and per query, and
// nearest neighbours of a term among a vocabulary. It is pure: the table is
// embedded in the binary and read in place.
package semantic

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
)

// The table's binary form, little-endian:
//
//	"KHWV" version(1) dim(1) count(uint32)
//	count × rank (uint32)       frequency rank of the term's commonest word
//	count × scale (float32)     scale × the int8 vector is a unit vector
//	count × term (len(1) bytes) ascending
//	count × dim × int8          the vectors
const (
	magic   = "KHWV"
	version = 1
	header  = len(magic) + 2 + 4
)

//go:embed glove.bin
var embedded []byte

// Table maps index terms to unit vectors. It is read-only and safe for
// concurrent use.
type Table struct {
	dim    int
	n      int
	ranks  []byte
	scales []byte
	offs   []uint32 // term i is names[offs[i]:offs[i+1]]
	names  string
	vecs   []byte
	sif    []float32
	index  map[string]int32
}

var defaultTable = sync.OnceValue(func() *Table {
	t, err := Parse(embedded)
	if err != nil {
		panic(fmt.Sprintf("semantic: embedded table: %v", err)) // a build defect
	}
	return t
})

// Default returns the embedded table, read on first use.
func Default() *Table { return defaultTable() }

// Parse reads a table in its binary form. The table keeps data.
func Parse(data []byte) (*Table, error) {
	if len(data) < header || string(data[:4]) != magic {
		return nil, errors.New("not a word-vector table")
	}
	if data[4] != version {
		return nil, fmt.Errorf("table version %d, want %d", data[4], version)
	}
	t := &Table{dim: int(data[5]), n: int(binary.LittleEndian.Uint32(data[6:]))}
	if t.dim == 0 {
		return nil, errors.New("table has no dimensions")
	}
	p := data[header:]
	if len(p) < t.n*8 {
		return nil, errors.New("table is truncated")
	}
	t.ranks, p = p[:4*t.n], p[4*t.n:]
	t.scales, p = p[:4*t.n], p[4*t.n:]
	t.offs = make([]uint32, t.n+1)
	var names strings.Builder
	for i := range t.n {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, errors.New("table is truncated")
		}
		l := int(p[0])
		names.Write(p[1 : 1+l])
		p = p[1+l:]
		t.offs[i+1] = t.offs[i] + uint32(l)
	}
	t.names = names.String()
	if len(p) != t.n*t.dim {
		return nil, fmt.Errorf("table has %d bytes of vectors, want %d", len(p), t.n*t.dim)
	}
	t.vecs = p
	t.index = make(map[string]int32, t.n)
	for i := range t.n {
		if i > 0 && t.Term(i-1) >= t.Term(i) {
			return nil, fmt.Errorf("table terms out of order at %q", t.Term(i))
		}
		t.index[t.Term(i)] = int32(i)
	}
	// Smooth inverse frequency (Arora et al.): a/(a+p(w)) with p from the
	// word's Zipf rank, so frequent words weigh little in a pooled vector.
	t.sif = make([]float32, t.n)
	h := math.Log(float64(t.n)) + 0.58
	for i := range t.n {
		p := 1 / (float64(binary.LittleEndian.Uint32(t.ranks[4*i:])+1) * h)
		t.sif[i] = float32(sifA / (sifA + p))
	}
	return t, nil
}

// sifA is the smoothing constant of the inverse-frequency weight.
const sifA = 1e-3

// Dim returns the number of dimensions.
func (t *Table) Dim() int { return t.dim }

// Len returns the number of terms.
func (t *Table) Len() int { return t.n }

// Term returns term i.
func (t *Table) Term(i int) string { return t.names[t.offs[i]:t.offs[i+1]] }

// Index returns the index of term, or -1 when the table lacks it.
func (t *Table) Index(term string) int {
	if i, ok := t.index[term]; ok {
		return int(i)
	}
	return -1
}

// Weight returns the inverse-frequency weight of term i, in (0, 1).
func (t *Table) Weight(i int) float32 { return t.sif[i] }

// Rank returns the frequency rank of term i's commonest word (0 is the
// commonest).
func (t *Table) Rank(i int) int { return int(binary.LittleEndian.Uint32(t.ranks[4*i:])) }

func (t *Table) scale(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(t.scales[4*i:]))
}

func (t *Table) raw(i int) []byte { return t.vecs[i*t.dim : (i+1)*t.dim] }

// AddTo adds w times term i's unit vector to dst, which has Dim elements.
func (t *Table) AddTo(dst []float32, i int, w float32) {
	w *= t.scale(i)
	for j, b := range t.raw(i) {
		dst[j] += w * float32(int8(b))
	}
}

// Similarity returns the cosine of terms i and j.
func (t *Table) Similarity(i, j int) float32 {
	a, b := t.raw(i), t.raw(j)
	var s int32
	for k := range a {
		s += int32(int8(a[k])) * int32(int8(b[k]))
	}
	return float32(s) * t.scale(i) * t.scale(j)
}

// Builder writes a table.
type Builder struct {
	dim   int
	terms []string
	ranks []int
	vecs  [][]float64
}

// NewBuilder returns a builder of tables of dim dimensions.
func NewBuilder(dim int) *Builder { return &Builder{dim: dim} }

// Add adds a term with the frequency rank of its commonest word and its
// unit vector. Terms must come in ascending order.
func (b *Builder) Add(term string, rank int, v []float64) {
	b.terms = append(b.terms, term)
	b.ranks = append(b.ranks, rank)
	b.vecs = append(b.vecs, v)
}

// Bytes returns the table in its binary form.
func (b *Builder) Bytes() ([]byte, error) {
	if b.dim < 1 || b.dim > 255 {
		return nil, fmt.Errorf("%d dimensions: want 1 to 255", b.dim)
	}
	out := append([]byte(magic), version, byte(b.dim))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b.terms)))
	for _, r := range b.ranks {
		out = binary.LittleEndian.AppendUint32(out, uint32(r))
	}
	q := make([][]int8, len(b.vecs))
	for i, v := range b.vecs {
		if len(v) != b.dim {
			return nil, fmt.Errorf("term %q has %d dimensions, want %d", b.terms[i], len(v), b.dim)
		}
		var s float32
		q[i], s = quantize(v)
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(s))
	}
	for i, t := range b.terms {
		if len(t) == 0 || len(t) > 255 {
			return nil, fmt.Errorf("term %q: want 1 to 255 bytes", t)
		}
		if i > 0 && b.terms[i-1] >= t {
			return nil, fmt.Errorf("term %q out of order", t)
		}
		out = append(out, byte(len(t)))
		out = append(out, t...)
	}
	for _, v := range q {
		for _, x := range v {
			out = append(out, byte(x))
		}
	}
	return out, nil
}

// quantize rounds v to int8 at the scale of its largest component and
// returns the scale that makes the result a unit vector again.
func quantize(v []float64) ([]int8, float32) {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	q := make([]int8, len(v))
	if m == 0 {
		return q, 0
	}
	n := 0.0
	for i, x := range v {
		q[i] = int8(math.Round(x / m * 127))
		n += float64(q[i]) * float64(q[i])
	}
	return q, float32(1 / math.Sqrt(n))
}
