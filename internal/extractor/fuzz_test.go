package extractor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/transcript"
)

// FuzzRules runs the rules over whatever Parse accepts: never an error,
// never more candidates than asked for.
func FuzzRules(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if strings.HasSuffix(name, ".expected.json") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"messages":[{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"x"}]}],"trigger":"agent_end"}`))
	san := newTestSanitizer(f)
	rules := NewRules()
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := transcript.Parse(data, transcript.Limits{MaxBytes: 1 << 16})
		if err != nil {
			if !errors.Is(err, transcript.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		st := san.Transcript(tr, transcript.Strict)
		if transcript.ID(st) != transcript.ID(san.Transcript(tr, transcript.Strict)) {
			t.Fatal("transcript.ID is not deterministic")
		}
		cands, err := rules.Extract(t.Context(), st, DefaultMaxEntries)
		if err != nil || len(cands) > DefaultMaxEntries {
			t.Fatalf("Extract: %d candidates, %v", len(cands), err)
		}
	})
}
