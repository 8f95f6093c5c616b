package contract

import (
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A small compressed message that declares a huge decoded size is
// rejected before its body is allocated, at the limit a file has.
func TestDecompressionBombIsRejectedBeforeAllocating(t *testing.T) {
	const limit = 4 << 20
	big := strings.Repeat("# heading\n", 6<<20) // 60 MB
	bomb := EncodeFileEvent(&FileEvent{Schema: 1, Repo: "docs", Path: "bomb.md", Content: big})
	csBomb := EncodeChunkSet(&ChunkSet{Schema: 1, Repo: "docs", Path: "bomb.md", Chunks: []Chunk{{ID: "a", Text: big}}})
	t.Logf("file event: %d bytes compressed, %d decoded", len(bomb), len(big))
	var err error
	if n := allocated(func() { _, err = DecodeFileEventLimit(bomb, limit) }); n > 1<<20 {
		t.Errorf("decoding the file event bomb allocated %d bytes", n)
	}
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("file event bomb: err %v, want a size error", err)
	}
	if n := allocated(func() { _, err = DecodeChunkSetLimit(csBomb, limit) }); n > 1<<20 {
		t.Errorf("decoding the chunk set bomb allocated %d bytes", n)
	}
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("chunk set bomb: err %v, want a size error", err)
	}
	// A file at the limit still decodes.
	ok := strings.Repeat("x", limit)
	ev, err := DecodeFileEventLimit(EncodeFileEvent(&FileEvent{Schema: 1, Repo: "docs", Path: "ok.md", Content: ok}), limit)
	if err != nil || ev.Content != ok {
		t.Errorf("a file at the limit: %v", err)
	}
	// JSON content over the limit is refused too.
	js := []byte(`{"schema":1,"repo":"docs","path":"j.md","content":"` + strings.Repeat("y", limit+1) + `"}`)
	if _, err := DecodeFileEventLimit(js, limit); err == nil {
		t.Error("JSON content over the limit was accepted")
	}
}
