package search

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/knowhub/knowhub/internal/contract"
)

// A posting record is the posting's own memory: written with
// AppendPosting, viewed as postings without a copy.
func TestPostingRecordsAreThePostingsLayout(t *testing.T) {
	var b []byte
	want := []posting{{doc: 1, tf: [MaxFields]uint8{1, 2, 3, 4, 5}}, {doc: 1<<32 - 1, tf: [MaxFields]uint8{255}}, {doc: 70000}}
	for _, p := range want {
		b = AppendPosting(b, p.doc, p.tf)
	}
	if len(b) != len(want)*PostingSize {
		t.Fatalf("%d bytes for %d postings of %d", len(b), len(want), PostingSize)
	}
	got := postingsOf(b)
	if !slices.Equal(got, want) {
		t.Fatalf("records read as %v, want %v", got, want)
	}
	if littleEndian && unsafe.Pointer(unsafe.SliceData(got)) != unsafe.Pointer(unsafe.SliceData(b)) {
		t.Fatal("the records were copied, not viewed")
	}
	// A misaligned buffer is copied.
	odd := append([]byte{0}, b...)[1:]
	if got := postingsOf(odd); !slices.Equal(got, want) {
		t.Fatalf("misaligned records read as %v, want %v", got, want)
	}
}

// A restored index scans its posting lists and entries' terms in the
// snapshot's arrays, and copies a list before an update changes it: the
// arrays stay as they were, as a read-only map must, through puts,
// removals, compaction of lists and of the whole index.
func TestRestoreReadsInPlaceAndCopiesOnWrite(t *testing.T) {
	p := docsLikeParams()
	src := mustNew(t, p)
	mk := func(i, seq int) *contract.IndexDoc {
		d := &contract.IndexDoc{Collection: "docs", Repo: "r", Path: fmt.Sprint(i, ".md"), SourceSeq: uint64(seq)}
		for c := range 3 {
			d.Chunks = append(d.Chunks, contract.IndexChunk{ID: fmt.Sprint(i, "-", c), Ord: c, Terms: map[string]map[string]int{
				"body": {"common": 1, fmt.Sprint("w", i%17): 2, fmt.Sprint("c", c): 1}, "title": {fmt.Sprint("t", i%5): 1}}})
		}
		return d
	}
	// ref takes the same updates as the restored index, on the heap (the
	// snapshot's entries become the restored index's own).
	ref := mustNew(t, p)
	for i := range 1200 {
		put(src, fmt.Sprint("docs.r.", i), mk(i, i+1), nil)
		put(ref, fmt.Sprint("docs.r.", i), mk(i, i+1), nil)
	}
	snap := src.Snapshot()
	frozen := slices.Clone(snap.Postings)
	frozenTerms := slices.Clone(snap.EntryTerms)
	ix := mustNew(t, p)
	if err := ix.Restore(snap); err != nil {
		t.Fatal(err)
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(snap.Postings)))
	hi := lo + uintptr(len(snap.Postings))
	in := 0
	for i := range ix.lists {
		if ps := ix.lists[i].postings; len(ps) > 0 {
			if a := uintptr(unsafe.Pointer(unsafe.SliceData(ps))); a >= lo && a < hi {
				in++
			}
		}
	}
	if littleEndian && in == 0 {
		t.Fatal("no posting list is read in the snapshot's array")
	}
	// Removals past half the entries compact lists and then the index;
	// puts append to lists read in place.
	seq := 5000
	// First most pages of one word: its list is compacted while still
	// read in place, before the index is.
	for i := 3; i < 1200; i += 17 {
		if i%4 != 0 {
			ix.Remove(fmt.Sprint("docs.r.", i))
			ref.Remove(fmt.Sprint("docs.r.", i))
		}
	}
	if !slices.Equal(snap.Postings, frozen) {
		t.Fatal("compacting a list wrote into the snapshot's array")
	}
	for i := 0; i < 1200; i++ {
		if i%4 != 0 {
			ix.Remove(fmt.Sprint("docs.r.", i))
			ref.Remove(fmt.Sprint("docs.r.", i))
		}
	}
	for i := 1200; i < 1300; i++ {
		seq++
		put(ix, fmt.Sprint("docs.r.", i), mk(i, seq), nil)
		put(ref, fmt.Sprint("docs.r.", i), mk(i, seq), nil)
	}
	if !slices.Equal(snap.Postings, frozen) || !slices.Equal(snap.EntryTerms, frozenTerms) {
		t.Fatal("updates wrote into the snapshot's arrays")
	}
	for _, q := range [][]string{{"common"}, {"w3", "c1"}, {"t2"}, {"w16", "common"}} {
		a, b := search(ix, 30, q...), search(ref, 30, q...)
		if len(a) != len(b) {
			t.Fatalf("%v: %d hits, want %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Score != b[i].Score || a[i].Entry.Source.Key != b[i].Entry.Source.Key || a[i].Entry.ID != b[i].Entry.ID {
				t.Fatalf("%v hit %d: %s#%s %v, want %s#%s %v", q, i, a[i].Entry.Source.Key, a[i].Entry.ID, a[i].Score,
					b[i].Entry.Source.Key, b[i].Entry.ID, b[i].Score)
			}
		}
	}
}
