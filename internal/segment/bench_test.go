package segment_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/engine/enginetest"
	"github.com/knowhub/knowhub/internal/search"
	"github.com/knowhub/knowhub/internal/segment"
)

// BenchmarkSegment measures, on openclaw-docs, the snapshot a replica
// takes between two updates, writing the segment, and opening it into an
// engine (what a restart does before following the bucket).
func BenchmarkSegment(b *testing.B) {
	e, _ := enginetest.Load(b, "../../../shared/corpora/openclaw-docs")
	path := filepath.Join(b.TempDir(), "index.seg")
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			e.Snapshot()
		}
	})
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			write(b, e, filepath.Dir(path))
		}
		if fi, err := os.Stat(path); err == nil {
			b.ReportMetric(float64(fi.Size())/1e6, "MB")
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			seg, err := segment.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			snaps := map[string]*search.Snapshot{}
			for _, c := range engine.Collections {
				if snaps[c], err = seg.Collection(c, engine.DecodeExtra); err != nil {
					b.Fatal(err)
				}
			}
			if err := engine.NewEngine(engine.Limits{}).Restore(snaps, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
