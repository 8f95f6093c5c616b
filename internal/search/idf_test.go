package search

import (
	"fmt"
	"testing"
)

// The tabulated IDFs are the computed ones, and follow the count of live
// entries as documents come and go.
func TestTabulatedIDFFollowsTheIndex(t *testing.T) {
	ix, err := New(Params{K1: 1.2, IDFPower: 1.5, Fields: []Field{{Name: "body", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	put := func(i int) {
		ix.Put(fmt.Sprintf("r/%d.md", i), &Doc{Repo: "r", Path: fmt.Sprintf("%d.md", i), SourceSeq: uint64(i + 1),
			Vocab: []string{"word"}, Chunks: []Chunk{{ID: fmt.Sprint(i), Fields: []FieldTerms{{Field: "body", Terms: []uint32{0}, TFs: []uint32{1}}}}}}, nil)
	}
	check := func(alive int) {
		t.Helper()
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		if ix.alive != alive {
			t.Fatalf("%d live entries, want %d", ix.alive, alive)
		}
		for _, df := range []int{0, 1, 2, alive / 2, alive, idfTabled - 1, idfTabled, idfTabled + 5} {
			if df > alive {
				continue
			}
			if got, want := ix.idf(df), ix.computeIDF(df); got != want {
				t.Errorf("%d entries, df %d: idf %v, want %v", alive, df, got, want)
			}
		}
	}
	for i := range 3 {
		put(i)
	}
	check(3)
	for i := 3; i < 40; i++ {
		put(i)
	}
	check(40)
	ix.Remove("r/0.md")
	check(39)
	for i := 40; i < idfTabled+50; i++ {
		put(i)
	}
	check(idfTabled + 49)
}
