package semantic

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestWeightiest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n < 200; n += 7 {
		for _, k := range []int{1, n / 2, n} {
			if k < 1 {
				continue
			}
			ts := make([]tw, n)
			for i := range ts {
				ts[i] = tw{i, float32(r.IntN(20))} // ties included
			}
			want := slices.Clone(ts)
			slices.SortFunc(want, func(a, b tw) int { return int(b.w - a.w) })
			got := slices.Clone(weightiest(ts, k))
			slices.SortFunc(got, func(a, b tw) int { return int(b.w - a.w) })
			for i := range got {
				if got[i].w != want[i].w {
					t.Fatalf("n %d k %d: weights %v, want %v", n, k, got, want[:k])
				}
			}
		}
	}
}
