package search

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/knowhub/knowhub/internal/contract"
)

func bodyParams() Params {
	return Params{K1: 1.2, Fields: []Field{{Name: "body", Weight: 1, B: 0.75}}}
}

func doc(seq uint64, chunks ...map[string]int) *contract.IndexDoc {
	d := &contract.IndexDoc{Collection: "docs", Repo: "r", Path: "p.md", SourceSeq: seq}
	for i, tf := range chunks {
		d.Chunks = append(d.Chunks, contract.IndexChunk{ID: fmt.Sprint("c", i), Ord: i, Terms: map[string]map[string]int{"body": tf}})
	}
	return d
}

// put converts a KH_INDEX document as the engine does (package indexdoc,
// which imports this one) and puts it.
func put(ix *Index, key string, d *contract.IndexDoc, extra any) {
	d = d.Compact()
	out := &Doc{Collection: d.Collection, Repo: d.Repo, Path: d.Path, SourceSeq: d.SourceSeq, Deleted: d.Deleted, Vocab: d.Vocab}
	for _, c := range d.Chunks {
		ch := Chunk{ID: c.ID, Ord: c.Ord, HeadingPath: c.HeadingPath, Title: c.Title, Text: c.Text, Boost: c.Boost,
			SectionKey: contract.SectionKey(d.Path, c.HeadingPath)}
		for _, f := range c.Fields {
			ch.Fields = append(ch.Fields, FieldTerms{Field: f.Field, Terms: f.Terms, TFs: f.TFs})
		}
		out.Chunks = append(out.Chunks, ch)
	}
	ix.Put(key, out, extra)
}

// docsLikeParams and toolsLikeParams have the shapes of the engine's docs
// and tools parameters: shared and own saturation, four fields.
func docsLikeParams() Params {
	return Params{K1: 1.2, Fields: []Field{
		{Name: "title", Weight: 1.5, B: 0.3}, {Name: "summary", Weight: 1.0, B: 0.5},
		{Name: "heading", Weight: 2.5, B: 0.3}, {Name: "body", Weight: 1.0, B: 0.75},
	}, OutlineField: "heading"}
}

func toolsLikeParams() Params {
	return Params{IDFPower: 1.5, Fields: []Field{
		{Name: "name", Weight: 1, B: 0.3, K1: 0.5}, {Name: "keywords", Weight: 1, B: 0.3, K1: 0.5},
		{Name: "description", Weight: 1, B: 0.15, K1: 1.2}, {Name: "grams", Weight: 1, B: 0.2, K1: 1.2},
	}}
}

func mustNew(t testing.TB, p Params) *Index {
	t.Helper()
	ix, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func search(ix *Index, limit int, terms ...string) []Hit {
	q := Query{Limit: limit}
	for i, t := range terms {
		q.Terms = append(q.Terms, Term{Text: t, Weight: 1, Group: i})
	}
	hits, _ := ix.Search(q)
	return hits
}

// bm25 is the textbook formula the index must reproduce for one field.
func bm25(tf, dl, avgdl, n, df float64) float64 {
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	norm := tf / (1 - 0.75 + 0.75*dl/avgdl)
	return idf * norm * 2.2 / (1.2 + norm)
}

func TestBM25MatchesFormula(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"nats": 3, "stream": 1}), nil)         // len 4
	put(ix, "b", doc(2, map[string]int{"nats": 1, "kv": 5}), nil)             // len 6
	put(ix, "c", doc(3, map[string]int{"kv": 1, "bucket": 1, "ttl": 1}), nil) // len 3
	avg := (4.0 + 6 + 3) / 3
	hits := search(ix, 10, "nats")
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2", len(hits))
	}
	want := map[string]float64{"a": bm25(3, 4, avg, 3, 2), "b": bm25(1, 6, avg, 3, 2)}
	for _, h := range hits {
		if got := h.Score; math.Abs(got-want[h.Entry.Source.Key]) > 1e-9 {
			t.Errorf("score of %s = %v, want %v", h.Entry.Source.Key, got, want[h.Entry.Source.Key])
		}
	}
	if hits[0].Entry.Source.Key != "a" {
		t.Errorf("first hit %s, want a", hits[0].Entry.Source.Key)
	}
	// Two terms add up.
	hits = search(ix, 10, "nats", "kv")
	b := bm25(1, 6, avg, 3, 2) + bm25(5, 6, avg, 3, 2)
	if hits[0].Entry.Source.Key != "b" || math.Abs(hits[0].Score-b) > 1e-9 {
		t.Errorf("top hit %s %.6f, want b %.6f", hits[0].Entry.Source.Key, hits[0].Score, b)
	}
}

// Scoring tabulates length norms for the average lengths of the moment:
// every update must be reflected in the next search, for lengths in the
// table and beyond it.
func TestLengthNormsFollowUpdates(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"nats": 3, "stream": 1}), nil) // len 4
	put(ix, "b", doc(2, map[string]int{"kv": 2}), nil)                // len 2
	// Three searches after each update: the first computes impacts in
	// scratch, the second caches them, the third reads the cache.
	check := func(step string, avg, n, df float64) {
		t.Helper()
		for round := range 3 {
			hits := search(ix, 10, "nats")
			if len(hits) != 1 {
				t.Fatalf("%s, search %d: got %d hits, want 1", step, round+1, len(hits))
			}
			if want := bm25(3, 4, avg, n, df); math.Abs(hits[0].Score-want) > 1e-9 {
				t.Errorf("%s, search %d: score %v, want %v", step, round+1, hits[0].Score, want)
			}
		}
	}
	check("first", 3, 2, 1)
	put(ix, "long", doc(3, map[string]int{"kv": 10, "bucket": 10}), nil) // len 20
	check("after a long entry", 26.0/3, 3, 1)
	put(ix, "long", doc(4, map[string]int{"kv": 1}), nil) // replaced: len 1
	check("after replacing it", 7.0/3, 3, 1)
	ix.Remove("long")
	check("after removing it", 3, 2, 1)

	huge := map[string]int{"nats": 2}
	for i := range 10 {
		huge[fmt.Sprint("filler", i)] = 200
	}
	put(ix, "huge", doc(5, huge), nil) // len 2002, past the table
	avg := (4 + 2 + 2002) / 3.0
	hits := search(ix, 10, "nats")
	want := map[string]float64{"a": bm25(3, 4, avg, 3, 2), "huge": bm25(2, 2002, avg, 3, 2)}
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2", len(hits))
	}
	for _, h := range hits {
		if got := h.Score; math.Abs(got-want[h.Entry.Source.Key]) > 1e-9 {
			t.Errorf("with a huge entry: score of %s = %v, want %v", h.Entry.Source.Key, got, want[h.Entry.Source.Key])
		}
	}
}

// A list's impacts are cached by the second search in a row that finds the
// index unchanged, never while updates come between searches, and a
// stale cache is dropped.
func TestImpactsCachedOnceQuiet(t *testing.T) {
	ix := mustNew(t, bodyParams())
	cached := func() *impacts {
		id, ok := ix.terms.find("nats")
		if !ok {
			t.Fatal("no list for nats")
		}
		return ix.lists[id].impacts.Load()
	}
	for i := range 5 {
		put(ix, fmt.Sprint(i), doc(uint64(i+1), map[string]int{"nats": i + 1}), nil)
		search(ix, 10, "nats")
		if c := cached(); c != nil {
			t.Fatalf("impacts cached during updates (generation %d)", c.gen)
		}
	}
	want := search(ix, 10, "nats") // the second search since the last update
	c := cached()
	if c == nil || c.gen != ix.gen || len(c.v) != 5 {
		t.Fatalf("impacts after two searches of an unchanged index: %+v", c)
	}
	if got := search(ix, 10, "nats"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("from the cache: %v, want %v", got, want)
	}
	if cached() != c {
		t.Error("a search of an unchanged index replaced the cache")
	}
	put(ix, "5", doc(6, map[string]int{"nats": 9}), nil)
	if hits := search(ix, 10, "nats"); len(hits) != 6 {
		t.Errorf("%d hits after an update, want 6", len(hits))
	}
	if c := cached(); c != nil {
		t.Errorf("stale impacts (generation %d) kept after an update", c.gen)
	}
}

// Searches run under the read lock while updates wait for the write lock;
// the norms table is built again by searches that find the averages
// changed, concurrently (run with -race).
func TestConcurrentSearchesDuringUpdates(t *testing.T) {
	ix := mustNew(t, bodyParams())
	for i := range 50 {
		put(ix, fmt.Sprint(i), doc(uint64(i+1), map[string]int{"nats": 1 + i%3, fmt.Sprint("w", i): i + 1}), nil)
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if hits := search(ix, 5, "nats"); len(hits) == 0 {
					errs <- fmt.Errorf("no hit for a term every entry holds")
					return
				}
			}
		}()
	}
	for i := range 300 {
		put(ix, fmt.Sprint(i%60), doc(uint64(i+100), map[string]int{"nats": 1, fmt.Sprint("v", i): i % 7}), nil)
		if i%5 == 0 {
			ix.Remove(fmt.Sprint(i % 60))
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestSingleDocAndUbiquitousTermStillMatch(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "only", doc(1, map[string]int{"gateway": 1}), nil)
	if hits := search(ix, 5, "gateway"); len(hits) != 1 || hits[0].Score <= 0 {
		t.Fatalf("single document: hits %+v, want one with a positive score", hits)
	}
	put(ix, "two", doc(2, map[string]int{"gateway": 2}), nil)
	hits := search(ix, 5, "gateway")
	if len(hits) != 2 || hits[1].Score <= 0 {
		t.Fatalf("term in every document: hits %+v, want two with positive scores", hits)
	}
}

func TestPutReplacesAndRemoveDeletes(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "f", doc(1, map[string]int{"old": 1}, map[string]int{"shared": 1}), nil)
	put(ix, "f", doc(2, map[string]int{"new": 1}), nil)
	if hits := search(ix, 5, "old"); len(hits) != 0 {
		t.Errorf("old text still found after replace: %+v", hits)
	}
	if hits := search(ix, 5, "shared"); len(hits) != 0 {
		t.Errorf("ghost chunk after replace: %+v", hits)
	}
	if hits := search(ix, 5, "new"); len(hits) != 1 {
		t.Errorf("new text: %d hits, want 1", len(hits))
	}
	st := ix.Stats()
	if st.Sources != 1 || st.Chunks != 1 || st.Applied != 2 {
		t.Errorf("stats %+v, want 1 source, 1 chunk, applied 2", st)
	}
	put(ix, "f", &contract.IndexDoc{SourceSeq: 3, Deleted: true}, nil)
	if hits := search(ix, 5, "new"); len(hits) != 0 {
		t.Errorf("deleted source still found: %+v", hits)
	}
	if st := ix.Stats(); st.Sources != 0 || st.Chunks != 0 || st.Terms != 0 {
		t.Errorf("stats after delete %+v, want empty", st)
	}
}

func TestStatisticsAreLive(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"rare": 1, "x": 1}), nil)
	before := search(ix, 1, "rare")[0].Score
	for i := range 20 {
		put(ix, fmt.Sprint("filler", i), doc(uint64(i+2), map[string]int{"x": 1, "y": 1}), nil)
	}
	after := search(ix, 1, "rare")[0].Score
	if after <= before {
		t.Errorf("idf of a rare term did not grow with the collection: %v then %v", before, after)
	}
	for i := range 20 {
		ix.Remove(fmt.Sprint("filler", i))
	}
	if again := search(ix, 1, "rare")[0].Score; math.Abs(again-before) > 1e-9 {
		t.Errorf("score after removing fillers %v, want %v", again, before)
	}
}

func TestFilterAppliesBeforeLimit(t *testing.T) {
	ix := mustNew(t, bodyParams())
	for i := range 10 {
		d := doc(uint64(i+1), map[string]int{"term": 10 - i})
		d.Repo = "big"
		if i == 9 {
			d.Repo = "small"
		}
		put(ix, fmt.Sprint("k", i), d, nil)
	}
	hits, total := ix.Search(Query{Terms: []Term{{Text: "term", Weight: 1}}, Limit: 3,
		Filter: func(e *Entry) bool { return e.Source.Repo == "small" }})
	if len(hits) != 1 || hits[0].Entry.Source.Repo != "small" || total != 1 {
		t.Fatalf("filtered search got %d hits (total %d), want the one from repo small", len(hits), total)
	}
}

func TestTopKIsSortedAndDeterministic(t *testing.T) {
	ix := mustNew(t, bodyParams())
	for i := range 200 {
		put(ix, fmt.Sprintf("k%03d", i), doc(uint64(i+1), map[string]int{"t": 1 + i%7, "pad": i % 5}), nil)
	}
	hits := search(ix, 25, "t")
	if len(hits) != 25 {
		t.Fatalf("got %d hits, want 25", len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("scores increase at %d: %v > %v", i, hits[i].Score, hits[i-1].Score)
		}
	}
	again := search(ix, 25, "t")
	for i := range hits {
		if hits[i].Entry != again[i].Entry {
			t.Fatalf("second search differs at %d", i)
		}
	}
	// The limit keeps the true best: compare with a full ranking.
	all := search(ix, 1000, "t")
	for i := range hits {
		if hits[i].Entry != all[i].Entry {
			t.Fatalf("top-25 differs from full ranking at %d", i)
		}
	}
}

// TestTiesGoToTheEarliestKeyThenOrdinal checks the order of equal scores:
// by source key, then by the chunk's ordinal, whatever the order of Puts.
func TestTiesGoToTheEarliestKeyThenOrdinal(t *testing.T) {
	ix := mustNew(t, bodyParams())
	same := map[string]int{"t": 2, "pad": 3}
	for i, key := range []string{"c", "a", "bb", "b"} {
		put(ix, key, doc(uint64(i+1), same, same), nil)
	}
	for _, limit := range []int{3, 8} {
		var got []string
		for _, h := range search(ix, limit, "t") {
			got = append(got, fmt.Sprint(h.Entry.Source.Key, "/", h.Entry.Ord))
		}
		want := []string{"a/0", "a/1", "b/0", "b/1", "bb/0", "bb/1", "c/0", "c/1"}[:limit]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limit %d: ties ordered %v, want %v", limit, got, want)
		}
	}
}

func TestGroupedTermsCountBestVariantOnce(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"search": 1, "serch": 1}), nil)
	exact := search(ix, 1, "search")[0].Score
	hits, _ := ix.Search(Query{Limit: 1, Terms: []Term{
		{Text: "search", Weight: 1, Group: 0},
		{Text: "serch", Weight: 0.5, Group: 0},
	}})
	if math.Abs(hits[0].Score-exact) > 1e-9 {
		t.Errorf("grouped variants scored %v, want only the best variant %v", hits[0].Score, exact)
	}
}

func TestCompactionKeepsResults(t *testing.T) {
	ix := mustNew(t, bodyParams())
	for round := range 5 {
		for i := range 600 {
			put(ix, fmt.Sprint("k", i), doc(uint64(round*1000+i), map[string]int{fmt.Sprint("w", round): 1, "common": 1 + i%3}), nil)
		}
	}
	if n := len(ix.entries); n > 2*600 {
		t.Errorf("entries grew to %d after churn; compaction should keep them near 600", n)
	}
	if hits := search(ix, 1000, "w4"); len(hits) != 600 {
		t.Errorf("latest round: %d hits, want 600", len(hits))
	}
	if hits := search(ix, 1000, "w0"); len(hits) != 0 {
		t.Errorf("first round still found: %d hits", len(hits))
	}
}

func TestFuzzy(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"grep": 1, "group": 1, "green": 1, "configuration": 1}), nil)
	put(ix, "b", doc(2, map[string]int{"grep": 1, "rgrep": 1}), nil)
	names := func(es []Expansion) []string {
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprintf("%s/%d", e.Term, e.Edits))
		}
		return out
	}
	tests := []struct {
		term  string
		edits int
		want  string
	}{
		{"grpe", 1, "[grep/1]"},                  // transposition
		{"gerp", 1, "[grep/1]"},                  // transposition
		{"grp", 1, "[grep/1]"},                   // insertion
		{"grep", 1, "[]"},                        // the term itself is not an expansion
		{"configuraton", 2, "[configuration/1]"}, // deletion
		{"konfiguration", 2, "[]"},               // first rune must match
		{"gren", 1, "[grep/1 green/1]"},          // equal edits: most frequent first
		{"xyz", 2, "[]"},
	}
	for _, tc := range tests {
		if got := fmt.Sprint(names(ix.Fuzzy(tc.term, tc.edits, 5))); got != tc.want {
			t.Errorf("Fuzzy(%q, %d) = %s, want %s", tc.term, tc.edits, got, tc.want)
		}
	}
	// Removing and re-adding a term does not duplicate it.
	ix.Remove("a")
	ix.Remove("b")
	put(ix, "c", doc(3, map[string]int{"grep": 1}), nil)
	if got := fmt.Sprint(names(ix.Fuzzy("grpe", 1, 5))); got != "[grep/1]" {
		t.Errorf("after churn Fuzzy(grpe) = %s", got)
	}
}

func TestIDFPower(t *testing.T) {
	p := bodyParams()
	p.IDFPower = 2
	ix := mustNew(t, p)
	put(ix, "a", doc(1, map[string]int{"rare": 1}), nil)
	put(ix, "b", doc(2, map[string]int{"common": 1}), nil)
	put(ix, "c", doc(3, map[string]int{"common": 1}), nil)
	idf := math.Log(1 + (3-1+0.5)/(1+0.5))
	want := idf * idf * 1 * 2.2 / (1.2 + 1) // tf 1 at average length
	if got := search(ix, 1, "rare")[0].Score; math.Abs(got-want) > 1e-9 {
		t.Errorf("score with IDF squared = %v, want %v", got, want)
	}
}

func TestTermFrequencyClampsAtMaxTF(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "many", doc(1, map[string]int{"nats": 1000, "pad": 1}), nil)
	put(ix, "max", doc(2, map[string]int{"nats": MaxTF, "pad": 1000 - MaxTF + 1}), nil)
	hits := search(ix, 10, "nats")
	if len(hits) != 2 || math.Abs(hits[0].Score-hits[1].Score) > 1e-12 {
		t.Fatalf("hits %+v: a frequency over MaxTF should score as MaxTF (same length)", hits)
	}
}

func TestTrimKeepsResultsAndDropsSpareCapacity(t *testing.T) {
	ix := mustNew(t, bodyParams())
	// Terms of one posting first, so that the lists Trim shrinks come
	// after its first batch.
	for i := range 2 * trimBatch / 100 {
		terms := map[string]int{}
		for j := range 100 {
			terms[fmt.Sprint("u", i, "_", j)] = 1
		}
		put(ix, fmt.Sprint("u", i), doc(uint64(1000+i), terms), nil)
	}
	for i := range 100 {
		put(ix, fmt.Sprint("d", i), doc(uint64(i+1), map[string]int{"nats": 1 + i%3, fmt.Sprint("w", i%7): 1}), nil)
	}
	if id, _ := ix.terms.find("nats"); id < trimBatch || cap(ix.lists[id].postings) == len(ix.lists[id].postings) {
		pl := &ix.lists[id]
		t.Fatalf("list of nats: id %d, %d postings in capacity %d: not a test of batches", id, len(pl.postings), cap(pl.postings))
	}
	before := search(ix, 20, "nats", "w3")
	done := make(chan bool)
	go func() { // searches go on while Trim runs
		defer close(done)
		for range 20 {
			if got := search(ix, 20, "nats", "w3"); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("results changed during Trim")
				return
			}
		}
	}()
	ix.Trim()
	<-done
	after := search(ix, 20, "nats", "w3")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("results changed by Trim:\n%v\n%v", before, after)
	}
	for id := range ix.lists {
		if pl := &ix.lists[id]; cap(pl.postings) > len(pl.postings)+len(pl.postings)/8 {
			t.Errorf("list %q: %d postings in capacity %d after Trim", ix.terms.term(uint32(id)), len(pl.postings), cap(pl.postings))
		}
	}
	put(ix, "d100", doc(101, map[string]int{"nats": 1}), nil) // appends still work
	if got := len(search(ix, 200, "nats")); got != 101 {
		t.Errorf("%d hits for nats after an append, want 101", got)
	}
}

func TestRelated(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "a", doc(1, map[string]int{"tourism": 1, "repo": 1, "financ": 1, "rent": 1, "tour": 1}), nil)
	put(ix, "b", doc(2, map[string]int{"tourism": 1, "touri": 1, "repot": 1, "finder": 1}), nil)
	names := func(es []Expansion) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Term)
		}
		return out
	}
	tests := []struct{ term, want string }{
		{"tour", "[tourism touri]"},    // extensions, most frequent first
		{"find", "[finder]"},           // an extension
		{"repositori", "[repo repot]"}, // clipped forms: all of repo, all of repot but its last rune
		{"financi", "[financ]"},        // a sibling
		{"rental", "[rent]"},           // a shorter derivation
		{"tourniquet", "[tour touri]"}, // not tourism: it differs beyond its last rune
		{"tourism", "[tour touri]"},    // not the term itself
		{"rep", "[]"},                  // too short to have a family
	}
	for _, tc := range tests {
		if got := fmt.Sprint(names(ix.Related(tc.term, 5))); got != tc.want {
			t.Errorf("Related(%q) = %s, want %s", tc.term, got, tc.want)
		}
	}
	// Removing and re-adding a term does not list it twice.
	ix.Remove("a")
	ix.Remove("b")
	put(ix, "c", doc(3, map[string]int{"tourism": 1}), nil)
	if got := fmt.Sprint(names(ix.Related("tour", 5))); got != "[tourism]" {
		t.Errorf("after churn Related(tour) = %s", got)
	}
}

func TestFieldWithOwnSaturation(t *testing.T) {
	p := Params{K1: 1.2, Fields: []Field{{Name: "name", Weight: 2, K1: 0.5}, {Name: "body", Weight: 1}}}
	ix := mustNew(t, p)
	two := &contract.IndexDoc{Collection: "tools", Path: "t", SourceSeq: 1, Chunks: []contract.IndexChunk{{ID: "t",
		Terms: map[string]map[string]int{"name": {"grep": 1}, "body": {"grep": 1}}}}}
	put(ix, "t", two, nil)
	put(ix, "u", doc(2, map[string]int{"other": 1}), nil)
	idf := math.Log(1 + (2-1+0.5)/(1+0.5))
	// Both fields at their average length: the name saturates on its own
	// and adds to the BM25F score of the body.
	want := idf * (2*1*1.5/(0.5+1) + 1*2.2/(1.2+1))
	if got := search(ix, 1, "grep")[0].Score; math.Abs(got-want) > 1e-9 {
		t.Errorf("score = %v, want %v", got, want)
	}
}

func TestSmoothRaisesHitsLikeOtherStrongHits(t *testing.T) {
	ix := mustNew(t, bodyParams())
	put(ix, "stocks", doc(1, map[string]int{"stock": 1, "market": 1, "trade": 1}), nil)
	put(ix, "crypto", doc(2, map[string]int{"crypto": 1, "market": 1, "trade": 1}), nil)
	put(ix, "petrol", doc(3, map[string]int{"petrol": 1, "price": 1, "region": 1}), nil)
	put(ix, "chess", doc(4, map[string]int{"chess": 1, "game": 1, "board": 1}), nil)
	hits := []Hit{}
	for _, key := range []string{"petrol", "stocks", "crypto", "chess"} {
		hits = append(hits, Hit{Entry: ix.sources[key][0], Score: 1})
	}
	hits[0].Score = 1.1 // the best hit matched an incidental word
	before := map[string]float64{}
	for _, h := range hits {
		before[h.Entry.Source.Key] = h.Score
	}
	ix.Smooth(hits, 3, 0.5, func(string) bool { return false })
	var order []string
	for _, h := range hits {
		order = append(order, h.Entry.Source.Key)
		if h.Score < before[h.Entry.Source.Key] {
			t.Errorf("%s fell from %v to %v", h.Entry.Source.Key, before[h.Entry.Source.Key], h.Score)
		}
	}
	// stocks and crypto resemble each other; petrol and chess resemble no
	// other hit and keep their scores.
	if got := fmt.Sprint(order); got != "[crypto stocks petrol chess]" && got != "[stocks crypto petrol chess]" {
		t.Errorf("smoothed order %s, want stocks and crypto ahead of petrol", got)
	}
	if math.Abs(hits[2].Score-1.1) > 1e-9 || hits[3].Score != 1 {
		t.Errorf("unrelated hits changed: %v", hits)
	}
}

// TestPutCopiesTerms: a decoded document's terms share one allocation, so
// the index keeps copies, not the document's memory.
func TestPutCopiesTerms(t *testing.T) {
	enc, err := contract.EncodeIndexDoc(doc(1, map[string]int{"alpha": 1, "beta": 2}, map[string]int{"gamma": 1}))
	if err != nil {
		t.Fatal(err)
	}
	d, err := contract.DecodeIndexDoc(enc)
	if err != nil {
		t.Fatal(err)
	}
	ix := mustNew(t, bodyParams())
	put(ix, "k", d, nil)
	shared := map[*byte]bool{}
	for _, term := range d.Vocab {
		shared[unsafe.StringData(term)] = true
	}
	for id := range uint32(ix.terms.Cap()) {
		if term := ix.terms.term(id); shared[unsafe.StringData(term)] {
			t.Errorf("the index keeps %q in the decoded document's memory", term)
		}
	}
	if ix.terms.Len() != 3 {
		t.Errorf("%d terms, want 3", ix.terms.Len())
	}
}
