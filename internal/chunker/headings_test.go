package chunker

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// A file within the size limit but with a million headings is rejected
// with ErrTooManyHeadings before it is parsed: bounded work and memory
// instead of a gigabyte and seconds per attempt.
func TestMillionHeadingsAreRejectedBeforeParsing(t *testing.T) {
	for name, src := range map[string]string{
		"atx":    strings.Repeat("# a\n", 1<<20),
		"nested": strings.Repeat("# a\n## b\n### c\n#### d\n##### e\n###### f\n", (4<<20)/42),
		"setext": strings.Repeat("a\n=\n", 1<<20),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Split("h.md", []byte(src), Options{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooManyHeadings) {
				t.Errorf("err = %v, want ErrTooManyHeadings", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("rejecting it allocated %d MB", n>>20)
			}
		})
	}
	// A file at the limit is chunked.
	ok := strings.Repeat("# a\n\ntext\n\n", MaxHeadings)
	if chunks, err := Split("ok.md", []byte(ok), Options{}); err != nil || len(chunks) != MaxHeadings {
		t.Errorf("a file of %d headings: %d chunks, %v", MaxHeadings, len(chunks), err)
	}
}
