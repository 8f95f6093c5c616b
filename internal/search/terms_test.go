package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTermDict adds and removes terms at random, through growth, shrinking
// and compaction, and checks the dictionary against a map after each
// round: every live term is found under its id, no removed term is, and
// ids stay unique.
func TestTermDict(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newTermDict()
	want := map[string]uint32{}
	term := func() string {
		switch n := rng.IntN(20_000); {
		case n == 0:
			return ""
		case n < 10:
			return strings.Repeat("long", 1+rng.IntN(blockSize/2)) // spans most of a block
		case n < 2000:
			// Terms of about eight bytes, some with NUL bytes, which the
			// slots' zero-padded prefixes must tell apart.
			return fmt.Sprintf("%0*d", 6+n%5, n)[:6+n%5] + strings.Repeat("\x00", n%3)
		default:
			return fmt.Sprintf("t%d", n)
		}
	}
	check := func(round int) {
		t.Helper()
		if d.Len() != len(want) {
			t.Fatalf("round %d: %d terms, want %d", round, d.Len(), len(want))
		}
		ids := map[uint32]string{}
		for w, id := range want {
			got, ok := d.find(w)
			if !ok || got != id {
				t.Fatalf("round %d: find(%.20q) = %d, %v; want %d", round, w, got, ok, id)
			}
			if d.term(id) != w {
				t.Fatalf("round %d: term(%d) = %.20q, want %.20q", round, id, d.term(id), w)
			}
			if other, dup := ids[id]; dup {
				t.Fatalf("round %d: id %d for %.20q and %.20q", round, id, w, other)
			}
			ids[id] = w
		}
		for range 200 {
			w := term()
			if _, in := want[w]; in {
				continue
			}
			if id, ok := d.find(w); ok {
				t.Fatalf("round %d: absent %.20q found as %d", round, w, id)
			}
		}
	}
	for round := range 40 {
		// Grow in the first rounds, then shrink to a few terms, then grow
		// again.
		adds, removes := 3000, 1000
		if round >= 15 && round < 25 {
			adds, removes = 200, 4000
		}
		for range adds {
			w := term()
			id, added := d.add(w)
			if prev, ok := want[w]; ok == added || (ok && prev != id) {
				t.Fatalf("round %d: add(%.20q) = %d, %v; had %d, %v", round, w, id, added, prev, ok)
			}
			want[w] = id
		}
		for w, id := range want {
			if removes == 0 {
				break
			}
			d.remove(id)
			delete(want, w)
			removes--
		}
		if round%5 == 4 {
			d.compact()
		}
		check(round)
	}
	if len(d.slots) <= 1<<minSlotsBits {
		t.Errorf("the table never grew: %d slots", len(d.slots))
	}
}

// TestTermDictKeepsHandedOutStrings checks that a term handed out stays
// intact after it is removed and its block compacted away.
func TestTermDictKeepsHandedOutStrings(t *testing.T) {
	d := newTermDict()
	var ids []uint32
	for i := range 1000 {
		id, _ := d.add(fmt.Sprint("term", i))
		ids = append(ids, id)
	}
	kept := d.term(ids[7])
	for _, id := range ids[:900] {
		d.remove(id)
	}
	d.compact()
	for i := range 2000 {
		d.add(fmt.Sprint("new", i))
	}
	if kept != "term7" {
		t.Errorf("a handed-out term became %q", kept)
	}
	if id, ok := d.find("term950"); !ok || d.term(id) != "term950" {
		t.Errorf("term950 after compaction: %d, %v", id, ok)
	}
}
