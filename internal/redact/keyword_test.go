package redact

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeywordScan(t *testing.T) {
	tests := []struct {
		name  string
		words []string
	}{
		{"three bytes and more", []string{"key", "api_key", "-----begin", "aiza", "sk-", "://", "é!x"}},
		{"with short words", []string{"x", "ab", "key", "@`a", "`@a"}},
		{"shared prefixes", []string{"sk-", "sk-ant-", "sk-or-v1-", "skb"}},
	}
	const alphabet = "abkeyKEYpi_x-AIZAsSK :/@`é!\n\xff"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeywordIndex([][]string{tt.words})
			rng := rand.New(rand.NewPCG(1, 2))
			for range 300 {
				b := make([]byte, rng.IntN(60))
				for i := range b {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
				s := string(b)
				var got, want []string
				last := 0
				k.scan(s, func(w, pos int) {
					if pos < last {
						t.Fatalf("scan(%q) reported %d after %d", s, pos, last)
					}
					last = pos
					got = append(got, fmt.Sprint(pos, k.words[w]))
				})
				for pos := range len(s) {
					for _, w := range tt.words {
						if hasPrefixFold(s[pos:], w) {
							want = append(want, fmt.Sprint(pos, w))
						}
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("scan(%q) = %v, want %v", s, got, want)
				}
			}
		})
	}
}
