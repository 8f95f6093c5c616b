package contract

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

func sampleChunkSet() *ChunkSet {
	return &ChunkSet{
		Schema: SchemaVersion, Repo: "docs", Path: "guide/setup.md", SHA256: strings.Repeat("ab", 32), FileSeq: 42,
		Meta: RepoMeta{Priority: -3, Type: RepoExtension},
		Chunks: []Chunk{
			{ID: "c1", Ord: 0, HeadingPath: []string{"Setup", "Install"}, Title: "Setup", Summary: "How to install",
				ReadWhen: "installing", Text: "Run the installer. 配置 " + strings.Repeat("text ", 200)},
			{ID: "c2", Ord: 1, Text: ""},
		},
	}
}

func TestChunkSetRoundTrip(t *testing.T) {
	for _, cs := range []*ChunkSet{sampleChunkSet(), {Schema: 1, Repo: "r", Path: "gone.md", FileSeq: 7, Deleted: true}} {
		b := EncodeChunkSet(cs)
		if len(b) == 0 || b[0] != chunkSetMagic {
			t.Fatalf("encoding does not start with the magic byte")
		}
		got, err := DecodeChunkSet(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cs) {
			t.Errorf("round trip changed the chunk set:\n got %+v\nwant %+v", got, cs)
		}
	}
	// Section text compresses: the binary form is well under the JSON.
	js, _ := json.Marshal(sampleChunkSet())
	if bin := EncodeChunkSet(sampleChunkSet()); len(bin) >= len(js)/2 {
		t.Errorf("binary chunk set %d bytes, JSON %d", len(bin), len(js))
	}
}

// TestDecodedChunkSetsDoNotShareMemory: the strings of a decoded chunk set
// share its body; decoding others, of every size, concurrently, must
// leave them as they were.
func TestDecodedChunkSetsDoNotShareMemory(t *testing.T) {
	first := sampleChunkSet()
	got, err := DecodeChunkSet(EncodeChunkSet(first))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				cs := sampleChunkSet()
				cs.Path = strings.Repeat("x", g*50+i)
				cs.Chunks[0].Text = strings.Repeat("overwritten ", i*10)
				cs.Chunks[0].HeadingPath = []string{"Other", strings.Repeat("h", i)}
				if _, err := DecodeChunkSet(EncodeChunkSet(cs)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	runtime.GC()
	if !reflect.DeepEqual(got, first) {
		t.Errorf("a decoded chunk set changed after others were decoded:\n got %+v\nwant %+v", got, first)
	}
}

func TestDecodeChunkSetReadsJSON(t *testing.T) {
	js, _ := json.Marshal(sampleChunkSet())
	got, err := DecodeChunkSet(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sampleChunkSet()) {
		t.Errorf("JSON chunk set decoded to %+v", got)
	}
}

func TestDecodeChunkSetRejectsBadInput(t *testing.T) {
	good := EncodeChunkSet(sampleChunkSet())
	bad := map[string][]byte{
		"empty":          nil,
		"JSON garbage":   []byte(`{"repo":`),
		"invalid UTF-8":  []byte("{\"repo\":\"\xff\"}"),
		"truncated":      good[:len(good)/2],
		"magic only":     {chunkSetMagic},
		"trailing bytes": append(append([]byte(nil), good[:1]...), s2Encode(append(rawBody(t, sampleChunkSet()), 0))...),
	}
	// A binary chunk set whose text is not valid UTF-8.
	cs := sampleChunkSet()
	cs.Chunks[0].Text = "bad \xff byte"
	bad["binary invalid UTF-8"] = EncodeChunkSet(cs)
	for name, b := range bad {
		if _, err := DecodeChunkSet(b); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func FuzzDecodeChunkSet(f *testing.F) {
	f.Add(EncodeChunkSet(sampleChunkSet()))
	js, _ := json.Marshal(sampleChunkSet())
	f.Add(js)
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := DecodeChunkSet(b) // must not panic or allocate without bound
		if err == nil && b[0] == chunkSetMagic {
			if again, err := DecodeChunkSet(EncodeChunkSet(cs)); err != nil || !reflect.DeepEqual(again, cs) {
				t.Errorf("re-encoding a decoded chunk set changed it: %v", err)
			}
		}
	})
}

// rawBody is the uncompressed binary body of cs.
func rawBody(t *testing.T, cs *ChunkSet) []byte {
	t.Helper()
	body, err := s2.Decode(nil, EncodeChunkSet(cs)[1:])
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func s2Encode(b []byte) []byte { return s2.Encode(nil, b) }

// TestDecodeChunkSetRejectsHostileCounts: a list length that its elements
// could not fit in the input is refused before the list is allocated.
func TestDecodeChunkSetRejectsHostileCounts(t *testing.T) {
	const pad = 1 << 20
	w := &writer{}
	w.uint(1)
	w.str("docs")
	w.str("a.md")
	w.str("")
	w.uint(1)
	w.int(0)
	w.str("")
	w.bool(false)
	w.uint(pad / 2) // chunks: fewer than the bytes left, more than fit
	w.buf = append(w.buf, make([]byte, pad)...)
	msg := append([]byte{chunkSetMagic}, s2.Encode(nil, w.buf)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeChunkSet(msg)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a chunk count that cannot fit was accepted")
	}
	// The body itself is 1 MB; a list of half a million chunks would be 56.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("decoding the hostile chunk set allocated %d MB", got>>20)
	}
}
