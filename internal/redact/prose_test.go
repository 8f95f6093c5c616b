package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fakeToken returns n pseudo-random characters of alphabet, the same for
// the same seed, so that no file holds a literal secret.
func fakeToken(seed uint64, alphabet string, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x70726f7365))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// TestProsePlanted plants secrets of many shapes without assignment
// context and counts those Prose finds; every one must be found.
func TestProsePlanted(t *testing.T) {
	const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	found, total := 0, 0
	for seed := uint64(1); seed <= 50; seed++ {
		aws := fakeToken(seed, b62+"+/", 40)
		tok := fakeToken(seed+1000, b62, 32+int(seed%20))
		pw := fakeToken(seed+2000, b62, 6) + "!" + fakeToken(seed+3000, "0123456789", 2)
		for _, c := range []struct{ secret, text string }{
			{aws, "secret for the uploader: " + aws},
			{aws, aws},
			{tok, "try " + tok + " again"},
			{pw, "the password for staging is " + pw},
			{pw, "Das Kennwort lautet " + pw},
			{pw, "密码：" + pw},
		} {
			total++
			if got := Prose(c.text); !strings.Contains(got, c.secret) && strings.Contains(got, "[REDACTED:") {
				found++
			} else {
				t.Errorf("missed %q: %q", c.secret, got)
			}
			if again := Prose(Prose(c.text)); again != Prose(c.text) {
				t.Errorf("not idempotent on %q", c.text)
			}
		}
	}
	t.Logf("planted: %d of %d found", found, total)
}

func FuzzProse(f *testing.F) {
	for _, s := range []string{"the password is Hunter2!x", "密码是abc123XYZ", "use Xy12ab34Cd as the token", "AbCdEfGh12345678IjKlMnOp9876"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := ProseFindings(s)
		last := 0
		for _, x := range fs {
			if x.Start < last || x.End <= x.Start || x.End > len(s) {
				t.Fatalf("bad findings %v for %q", fs, s)
			}
			last = x.End
		}
	})
}
