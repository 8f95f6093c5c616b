package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

func sampleDoc() *IndexDoc {
	return &IndexDoc{
		Schema: 1, Analyzer: "a1", Collection: CollectionDocs, Repo: "docs", Path: "guide/setup.md",
		SourceSeq: 42, Meta: RepoMeta{Priority: -3, Type: RepoExtension},
		Chunks: []IndexChunk{
			{ID: "c1", Ord: 0, HeadingPath: []string{"Setup", "Install"}, Title: "Setup", Text: "Run the installer. 配置",
				Terms: map[string]map[string]int{"body": {"run": 1, "instal": 2, "配置": 1}, "heading": {"setup": 1}},
				Vec:   []byte{1, 0x80, 0x7f, 0}},
			{ID: "c2", Ord: 1, Text: "", Boost: 0.4, Terms: map[string]map[string]int{}},
		},
	}
}

func TestIndexDocRoundTrip(t *testing.T) {
	for _, doc := range []*IndexDoc{
		sampleDoc(),
		{Schema: 1, Collection: CollectionDocs, Repo: "r", Path: "gone.md", SourceSeq: 7, Deleted: true},
		{Schema: 1, Collection: CollectionKB, Path: "abc", SourceSeq: 8, Record: json.RawMessage(`{"id":"abc"}`)},
		{Schema: 1, Collection: CollectionTools, Path: "Grep", SourceSeq: 9,
			Tool:   &Tool{Name: "Grep", Description: "Search files.", Type: ToolCore, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Chunks: []IndexChunk{{ID: "g", Title: "Grep", Text: "Search files.", Terms: map[string]map[string]int{"name": {"grep": 1}}}}},
	} {
		b, err := EncodeIndexDoc(doc)
		if err != nil {
			t.Fatal(err)
		}
		if seq, err := IndexDocSeq(b); err != nil || seq != doc.SourceSeq {
			t.Errorf("IndexDocSeq = %d, %v; want %d", seq, err, doc.SourceSeq)
		}
		got, err := DecodeIndexDoc(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := doc.Compact(); !reflect.DeepEqual(got, want) {
			t.Errorf("round trip changed the document:\n got %+v\nwant %+v", got, want)
		}
		if !reflect.DeepEqual(expand(got), expand(doc)) {
			t.Errorf("term frequencies changed: got %v, want %v", expand(got), expand(doc))
		}
		again, _ := EncodeIndexDoc(got)
		if string(again) != string(b) {
			t.Error("encoding is not deterministic")
		}
	}
}

func TestDecodeIndexDocRejectsGarbage(t *testing.T) {
	good, _ := EncodeIndexDoc(sampleDoc())
	for _, b := range [][]byte{nil, {0xB2}, []byte("{\"json\":true}"), good[:len(good)-3], append(good[:9:9], 0xff, 0xff, 0xff)} {
		if _, err := DecodeIndexDoc(b); err == nil {
			t.Errorf("DecodeIndexDoc(%q) accepted garbage", b)
		}
	}
}

func FuzzDecodeIndexDoc(f *testing.F) {
	good, _ := EncodeIndexDoc(sampleDoc())
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeIndexDoc(b) // must not panic or allocate without bound
	})
}

// expand returns every chunk's term frequencies by field, from either form.
func expand(doc *IndexDoc) []map[string]map[string]int {
	var out []map[string]map[string]int
	for _, c := range doc.Chunks {
		m := map[string]map[string]int{}
		for f, tfs := range c.Terms {
			for t, tf := range tfs {
				if m[f] == nil {
					m[f] = map[string]int{}
				}
				m[f][t] = tf
			}
		}
		for _, f := range c.Fields {
			for k, t := range f.Terms {
				if m[f.Field] == nil {
					m[f.Field] = map[string]int{}
				}
				m[f.Field][doc.Vocab[t]] = int(f.TFs[k])
			}
		}
		out = append(out, m)
	}
	return out
}

func TestCompactSharesTheVocabulary(t *testing.T) {
	doc := &IndexDoc{Chunks: []IndexChunk{
		{ID: "a", Terms: map[string]map[string]int{"body": {"nats": 2, "kv": 1}, "heading": {"nats": 1}}},
		{ID: "b", Terms: map[string]map[string]int{"body": {"kv": 3, "zero": 0}}},
	}}
	c := doc.Compact()
	if !reflect.DeepEqual(c.Vocab, []string{"kv", "nats"}) {
		t.Errorf("vocab %q, want [kv nats] (in order of first use, once each, no zero frequencies)", c.Vocab)
	}
	if doc.Vocab != nil || doc.Chunks[0].Terms == nil {
		t.Error("Compact modified its receiver")
	}
	if c.Compact() != c {
		t.Error("compacting a compact document should return it")
	}
	want := expand(doc)
	delete(want[1]["body"], "zero")
	if got := expand(c); !reflect.DeepEqual(got, want) {
		t.Errorf("compact frequencies %v, want %v", got, want)
	}
}

// TestDecodeLayout1 reads a value in the first layout (term maps repeated
// per chunk), which stores written before the compact layout still hold.
func TestDecodeLayout1(t *testing.T) {
	doc := sampleDoc()
	doc.Chunks[0].Vec = nil // layout 1 had no vectors
	w := &writer{}
	if err := w.header(doc); err != nil {
		t.Fatal(err)
	}
	w.uint(uint64(len(doc.Chunks)))
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		w.chunkHeader(c)
		fields := slices.Sorted(maps.Keys(c.Terms))
		w.uint(uint64(len(fields)))
		for _, f := range fields {
			w.str(f)
			terms := slices.Sorted(maps.Keys(c.Terms[f]))
			w.uint(uint64(len(terms)))
			for _, term := range terms {
				w.str(term)
				w.uint(uint64(c.Terms[f][term]))
			}
		}
	}
	v1 := append([]byte{indexMagicV1, 0, 0, 0, 0, 0, 0, 0, 42}, s2.Encode(nil, w.buf)...)
	got, err := DecodeIndexDoc(v1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, doc.Compact()) {
		t.Errorf("layout 1 decoded to %+v, want %+v", got, doc.Compact())
	}
}

func TestDecodeRejectsBadVocabularyIndexes(t *testing.T) {
	for name, deltas := range map[string][]uint64{"outside": {0, 5}, "repeated": {0, 0}} {
		w := &writer{}
		if err := w.header(&IndexDoc{Collection: CollectionDocs}); err != nil {
			t.Fatal(err)
		}
		w.uint(2) // vocabulary
		w.str("a")
		w.str("b")
		w.uint(1) // chunks
		w.chunkHeader(&IndexChunk{ID: "c"})
		w.uint(1) // fields
		w.str("body")
		w.uint(uint64(len(deltas)))
		for _, d := range deltas {
			w.uint(d)
			w.uint(1)
		}
		v := append([]byte{indexMagicV3, 0, 0, 0, 0, 0, 0, 0, 1}, s2.Encode(nil, w.buf)...)
		if _, err := DecodeIndexDoc(v); err == nil {
			t.Errorf("%s term indexes: decoded without error", name)
		}
	}
}

// TestDecodedValuesOutliveTheirBody: bodies are decompressed into recycled
// buffers, so nothing decoded may point into one. Each kind is decoded,
// then another value of the same size is decoded into the recycled body.
func TestDecodedValuesOutliveTheirBody(t *testing.T) {
	flip := func(s string) string { return strings.Map(func(r rune) rune { return r ^ 1 }, s) }
	check := func(kind string, encode func(flipped bool) []byte, decode func([]byte) (any, error)) {
		t.Helper()
		got, err := decode(encode(false))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(got)
		for range 4 {
			if _, err := decode(encode(true)); err != nil {
				t.Fatal(err)
			}
		}
		if after, _ := json.Marshal(got); string(after) != string(want) {
			t.Errorf("%s changed after later decodes:\n%s\nwant\n%s", kind, after, want)
		}
	}
	check("index doc", func(flipped bool) []byte {
		doc := sampleDoc()
		doc.Record = json.RawMessage(`{"id":"k1","text":"kept"}`)
		if flipped {
			doc.Record = json.RawMessage(`{"id":"k2","text":"gone"}`)
			doc.Path, doc.Chunks[0].Text, doc.Chunks[0].Title = flip(doc.Path), flip(doc.Chunks[0].Text), flip(doc.Chunks[0].Title)
		}
		b, _ := EncodeIndexDoc(doc)
		return b
	}, func(b []byte) (any, error) { return DecodeIndexDoc(b) })
	check("chunk set", func(flipped bool) []byte {
		cs := sampleChunkSet()
		if flipped {
			cs.Path, cs.Chunks[0].Text = flip(cs.Path), flip(cs.Chunks[0].Text)
		}
		return EncodeChunkSet(cs)
	}, func(b []byte) (any, error) { return DecodeChunkSet(b) })
	check("file event", func(flipped bool) []byte {
		ev := sampleFileEvent()
		if flipped {
			ev.Path, ev.Content = flip(ev.Path), flip(ev.Content)
		}
		return EncodeFileEvent(ev)
	}, func(b []byte) (any, error) { return DecodeFileEvent(b) })
}

// TestVocabBuilderNumbersByContent: a term is one vocabulary entry
// whichever string carries it, and strings sharing bytes but not length
// are different terms.
func TestVocabBuilderNumbersByContent(t *testing.T) {
	backing := "abcabc"
	var b VocabBuilder
	for range 3 {
		b.Add(backing[:3], 1)                // "abc", at backing's address
		b.Add(strings.Clone(backing[3:]), 1) // "abc" elsewhere
		b.Add(backing[:2], 1)                // "ab", same address as "abc"
		b.Add(strings.Clone(backing[:2]), 2) // "ab" elsewhere
	}
	f, _ := b.Field("body")
	vocab := b.Vocab()
	got := map[string]uint32{}
	for k, id := range f.Terms {
		got[vocab[id]] = f.TFs[k]
	}
	if len(vocab) != 2 || got["abc"] != 6 || got["ab"] != 9 {
		t.Errorf("vocab %q, frequencies %v; want abc 6 and ab 9", vocab, got)
	}
	b.Reset()
	b.Add(backing[:2], 1)
	f, _ = b.Field("body")
	if vocab := b.Vocab(); len(vocab) != 1 || vocab[f.Terms[0]] != "ab" {
		t.Errorf("after Reset: vocab %q", vocab)
	}
}

// TestVocabBuilderFieldsAscend builds random documents, whose fields mix
// terms new to the document with earlier ones, sparse and dense, and
// checks every field against a count by map: terms ascending, each with
// its frequency.
func TestVocabBuilderFieldsAscend(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var b VocabBuilder
	for doc := range 200 {
		b.Reset()
		words := 1 + rng.IntN(2000)
		type field struct {
			ft   FieldTerms
			want map[string]uint32
		}
		var fields []field
		for range 1 + rng.IntN(20) {
			want := map[string]uint32{}
			for range rng.IntN(300) {
				w := fmt.Sprint("w", rng.IntN(words))
				tf := uint32(1 + rng.IntN(3))
				b.Add(w, tf)
				want[w] += tf
			}
			ft, ok := b.Field("body")
			if ok != (len(want) > 0) {
				t.Fatalf("doc %d: Field reports %v with %d terms", doc, ok, len(want))
			}
			fields = append(fields, field{ft, want})
		}
		vocab := b.Vocab()
		for _, f := range fields {
			if !slices.IsSorted(f.ft.Terms) || len(f.ft.Terms) != len(f.want) {
				t.Fatalf("doc %d: terms %v not ascending, or not the %d added", doc, f.ft.Terms, len(f.want))
			}
			for k, id := range f.ft.Terms {
				if k > 0 && id == f.ft.Terms[k-1] {
					t.Fatalf("doc %d: term %d twice", doc, id)
				}
				if w := vocab[id]; f.ft.TFs[k] != f.want[w] {
					t.Fatalf("doc %d: %q counted %d, want %d", doc, w, f.ft.TFs[k], f.want[w])
				}
			}
		}
	}
}

// FuzzSectionKey checks SectionKey against its definition.
func FuzzSectionKey(f *testing.F) {
	f.Add("Guide/Setup.MD", "Install  Steps", " Über\\tALLES ")
	f.Add("a.mdx", "", "\xff bad\u00a0space")
	f.Fuzz(func(t *testing.T, path, h1, h2 string) {
		want := strings.ToLower(path)
		for _, ext := range []string{".mdx", ".md", ".markdown"} {
			want = strings.TrimSuffix(want, ext)
		}
		for _, h := range []string{h1, h2} {
			want += " > " + strings.Join(strings.Fields(strings.ToLower(h)), " ")
		}
		if got := SectionKey(path, []string{h1, h2}); got != want {
			t.Errorf("SectionKey(%q, %q, %q) = %q, want %q", path, h1, h2, got, want)
		}
	})
}

// TestDecodeLayout2: a document written before vectors reads without them.
func TestDecodeLayout2(t *testing.T) {
	doc := sampleDoc().Compact()
	w := &writer{}
	if err := w.header(doc); err != nil {
		t.Fatal(err)
	}
	w.strs(doc.Vocab)
	w.uint(uint64(len(doc.Chunks)))
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		w.chunkHeader(c)
		w.uint(uint64(len(c.Fields)))
		for _, f := range c.Fields {
			w.str(f.Field)
			w.uint(uint64(len(f.Terms)))
			prev := uint32(0)
			for k, term := range f.Terms {
				w.uint(uint64(term - prev))
				w.uint(uint64(f.TFs[k]))
				prev = term
			}
		}
	}
	got, err := DecodeIndexDoc(append([]byte{indexMagicV2, 0, 0, 0, 0, 0, 0, 0, 42}, s2.Encode(nil, w.buf)...))
	if err != nil {
		t.Fatal(err)
	}
	want := *doc
	want.SourceSeq = 42
	want.Chunks = slices.Clone(doc.Chunks)
	for i := range want.Chunks {
		want.Chunks[i].Vec = nil
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("layout 2 decoded to %+v, want %+v", got, &want)
	}
}

// TestIndexDocEmbedding round-trips a document with embeddings, and one
// without them keeps the layout it always had.
func TestIndexDocEmbedding(t *testing.T) {
	doc := &IndexDoc{Schema: SchemaVersion, Collection: CollectionDocs, Repo: "r", Path: "a.md", SourceSeq: 7,
		Meta:   RepoMeta{Priority: 1, Type: RepoCore, Demote: []string{"old/**"}},
		Vocab:  []string{"alpha"},
		Chunks: []IndexChunk{{ID: "c1", Text: "alpha", Fields: []FieldTerms{{Field: "body", Terms: []uint32{0}, TFs: []uint32{1}}}, Vec: []byte{1, 2}}}}
	plain, err := EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if plain[0] != indexMagic {
		t.Fatalf("a document without embeddings is written in layout %x, want %x", plain[0], indexMagic)
	}
	with := *doc
	with.Chunks = []IndexChunk{doc.Chunks[0]}
	with.Chunks[0].Embedding = []byte{3, 4, 5}
	with.EmbeddingModel = "m"
	b, err := EncodeIndexDoc(&with)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndexDoc(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.EmbeddingModel != "m" || string(got.Chunks[0].Embedding) != "\x03\x04\x05" || string(got.Chunks[0].Vec) != "\x01\x02" ||
		len(got.Meta.Demote) != 1 {
		t.Fatalf("decoded %+v", got)
	}
}
