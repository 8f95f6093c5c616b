package highlight

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/search"
)

// lowerBytes lower-cases ASCII letters one byte at a time: the reference.
func lowerBytes(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

func TestAppendLowerMatchesBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Bytes whose low seven bits are letters (0xC1, 0xDA, 0xE1) must stay.
	alphabet := []byte("AZaz@[`{09 _-\n\x80\xc1\xc3\xa9\xda\xe1\xff")
	for n := 0; n < 2000; n++ {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		if bytes.Contains(b, []byte{0xD0}) {
			continue // Cyrillic, below
		}
		want := slices.Clone(b)
		lowerBytes(want)
		got, _ := appendLower([]byte("Pre"), string(b), false)
		if string(got) != "Pre"+string(want) {
			t.Fatalf("appendLower(%q) = %q, want %q", b, got[3:], want)
		}
	}
}

// TestAppendLowerFoldsCyrillic compares appendLower with unicode.ToLower
// on random text of ASCII, Cyrillic (capitals U+0400–U+042F included) and
// other scripts; on invalid UTF-8 it must keep every offset.
func TestAppendLowerFoldsCyrillic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	runes := []rune("AaZz ЀЏАЯПРяёїєґҐЁЇЄІ конфигурация Конфигурация الإع 配置 ÉéΩω")
	lower := func(r rune) rune {
		if r < 0x80 || (r >= 0x400 && r <= 0x42F) {
			return unicode.ToLower(r)
		}
		return r
	}
	for range 2000 {
		rs := make([]rune, rng.IntN(40))
		for i := range rs {
			rs[i] = runes[rng.IntN(len(runes))]
		}
		text := string(rs)
		got, _ := appendLower(nil, text, false)
		if got, want := string(got), strings.Map(lower, text); got != want {
			t.Fatalf("appendLower(%q) = %q, want %q", text, got, want)
		}
		bad := []byte(text)
		for range 3 {
			if len(bad) > 0 {
				bad[rng.IntN(len(bad))] = byte(rng.IntN(256))
			}
		}
		if got, _ := appendLower(nil, string(bad), true); len(got) != len(bad) {
			t.Fatalf("appendLower(%q) is %d bytes, want %d", bad, len(got), len(bad))
		}
	}
}

func TestEntryProbesAgreeWithTextScan(t *testing.T) {
	terms := map[string]bool{"configur": true, "fallback": true, "model": true}
	e := &search.Entry{
		HeadingPath: []string{"Configuration", "Models", "Fallbacks"},
		Text:        "Configure a fallback model chain. MODEL fallbacks apply when the primary model fails.",
	}
	ps := New(terms)
	all, off := ps.entryScan(e)
	if off != len("Configuration Models Fallbacks\n") {
		t.Fatalf("text offset %d", off)
	}
	if got, want := len(all), len(New(terms).scan(entryText(e))); got != want {
		t.Errorf("entry scan found %d probes, the joined text has %d", got, want)
	}
	got := ps.textHits(e)
	want := New(terms).scan(e.Text)
	if !slices.Equal(got, want) {
		t.Errorf("text hits %v, want %v", got, want)
	}
	if len(want) < 5 {
		t.Errorf("only %d probes found in the text", len(want))
	}
}

// TestReleasedProbeSetsStartAfresh: a recycled probe set finds what a new
// one finds, whatever its last query held.
func TestReleasedProbeSetsStartAfresh(t *testing.T) {
	text := "Configure a fallback model chain, then restart the gateway: 模型 fallbacks."
	first := New(map[string]bool{"configur": true, "fallback": true, "a": true, "模型": true})
	want1 := first.scan(text)
	kept := slices.Clone(want1)
	for i := range 50 { // later scans of one query leave earlier hit lists alone
		first.scan(strings.Repeat("a fallback ", i+1))
	}
	if !slices.Equal(want1, kept) {
		t.Fatalf("a later scan changed an earlier hit list: %v, was %v", want1, kept)
	}
	first.Release()
	for range 3 {
		ps := New(map[string]bool{"restart": true, "gateway": true})
		got := ps.scan(text)
		fresh := (&Matcher{terms: []string{"gateway", "restart"}, probes: []string{"gate", "rest"}}).scan(text)
		if !slices.Equal(got, fresh) || len(got) != 2 {
			t.Fatalf("recycled probe set found %v, a fresh one %v", got, fresh)
		}
		ps.Release()
	}
	again := New(map[string]bool{"configur": true, "fallback": true, "a": true, "模型": true})
	defer again.Release()
	if got := again.scan(text); !slices.Equal(got, want1) {
		t.Errorf("after reuse %v, first time %v", got, want1)
	}
}

// TestProbesTakeCharactersNotBytes: an English stem probes with its first
// four bytes, an unstemmed word of another alphabet with its first four
// letters, so that two common letters do not match half of the text.
func TestProbesTakeCharactersNotBytes(t *testing.T) {
	ps := New(map[string]bool{"configur": true, "конфигурация": true, "الإعدادات": true, "配置": true, "ab": true, "เขี": true})
	defer ps.Release()
	want := map[string]string{"configur": "conf", "конфигурация": "конф", "الإعدادات": "الإع", "配置": "配置", "ab": "ab", "เขี": "เขี"}
	for i, term := range ps.terms {
		if ps.probes[i] != want[term] {
			t.Errorf("probe of %q = %q, want %q", term, ps.probes[i], want[term])
		}
	}
	text := "Контекст и конфигурации: конфигурация контейнера. الإعدادات والإضافات"
	var found []string
	for _, h := range ps.scan(text) {
		found = append(found, strings.ToLower(text[h.pos:h.end]))
	}
	if got := strings.Join(found, " "); got != "конф конф الإع" {
		t.Errorf("probe hits %q, want the two forms of конфигурация and الإعدادات", got)
	}
}

// TestFindMatchesNaiveScan compares find with a direct scan on random
// texts and probe sets: probes of one to six bytes, multi-byte letters,
// occurrences that overlap and ones that end the text, probes of up to
// four first bytes (looked for eight bytes at a time) and of more, and
// bytes one below a first byte ("`" under "a"), which the word-at-a-time
// test may flag after a match.
func TestFindMatchesNaiveScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "b", "ab", "ba", "aab", "abab", " ", "\n", "ж", "же", "ال", "配", "置", "x", "`", "a`", "y", "z", "q"}
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for round := range 6000 {
		text := randText(rng.IntN(40))
		probes := map[string]bool{}
		for range 1 + rng.IntN(7) {
			if p := randText(1 + rng.IntN(3)); len(p) <= 6 {
				probes[p] = true
			}
		}
		// Matching as in folded text passes over fill bytes, of which
		// these texts have none: every other round, it must find the same.
		ps := &Matcher{}
		for p := range probes {
			ps.terms = append(ps.terms, p)
		}
		slices.Sort(ps.terms)
		ps.probes = slices.Clone(ps.terms)
		got := ps.find([]byte(text), round%2 == 1)
		var want []probeHit
		next := make([]int, len(ps.probes))
		for at := range len(text) {
			for i, p := range ps.probes {
				if at >= next[i] && strings.HasPrefix(text[at:], p) {
					want = append(want, probeHit{pos: at, end: at + len(p), term: i})
					next[i] = at + len(p)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: find(%q) with probes %q = %v, want %v", round, text, ps.probes, got, want)
		}
	}
}

// TestAppendLowerFoldsLatin checks the folding of probe text rune by rune
// on random text of many scripts: ASCII and Cyrillic capitals lower-cased,
// Latin letters and combining marks folded as analysis folds them, padded
// with fill bytes to keep every offset, everything else as it was.
func TestAppendLowerFoldsLatin(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	runes := []rune("AaZz Éé Ü ß Æ œ Ł ı ğ ş ã ñ ø İ ǅ ﬁ \u0301\u0323 ấ ệ ữ Ơ đ Ḿ ɐ ʼ ЯжЁ الإع 配置 ÷ × ©")
	want := func(r rune) []byte {
		size := utf8.RuneLen(r)
		switch {
		case r < utf8.RuneSelf:
			return []byte{byte(unicode.ToLower(r))}
		case r >= 0x400 && r <= 0x42F:
			return utf8.AppendRune(nil, unicode.ToLower(r))
		case (r >= 0xC0 && r <= 0x36F) || (r >= 0x1E00 && r <= 0x1EFF):
			f := analysis.FoldRune(r)
			ascii := !strings.ContainsFunc(f, func(c rune) bool { return c >= utf8.RuneSelf })
			if ascii && len(f) <= size {
				return append([]byte(f), make([]byte, size-len(f))...)
			}
		}
		return utf8.AppendRune(nil, r)
	}
	for range 2000 {
		rs := make([]rune, rng.IntN(40))
		var exp []byte
		for i := range rs {
			rs[i] = runes[rng.IntN(len(runes))]
			exp = append(exp, want(rs[i])...)
		}
		text := string(rs)
		if got, _ := appendLower(nil, text, true); string(got) != string(exp) {
			t.Fatalf("appendLower(%q) = %q, want %q", text, got, exp)
		}
	}
}
