package kb

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestScreenDocsParagraphs runs the screen over every paragraph of the
// shared documentation corpora, which hold no prompt injection but plenty of
// text about prompts, system messages, tools and commands: what the screen
// flags there is what it would wrongly quarantine if an agent saved a
// paragraph of documentation as knowledge. Run with -v for the figures;
// KH_SHOW_SCREEN=1 lists every flagged paragraph. It screens some 96,000
// paragraphs (about 40 s of CPU), so -short skips it.
func TestScreenDocsParagraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("screens every paragraph of the documentation corpora")
	}
	s := NewScreen()
	total := 0
	for _, c := range []string{"openclaw-docs", "nats-docs", "prometheus-docs", "openclaw-docs-zh-CN"} {
		dir := "../../../shared/corpora/" + c
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("corpus %s: %v", c, err)
		}
		type paragraph struct{ path, text string }
		var paras []paragraph
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, para := range strings.Split(string(data), "\n\n") {
				if strings.TrimSpace(para) != "" {
					paras = append(paras, paragraph{strings.TrimPrefix(p, dir+"/"), para})
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The screen is safe for concurrent use: one worker per processor.
		var next, flagged atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(paras)); i = next.Add(1) - 1 {
					if reason, ok := s.Check(paras[i].text); ok {
						flagged.Add(1)
						if os.Getenv("KH_SHOW_SCREEN") != "" {
							t.Logf("%s: %s: %q", paras[i].path, reason, paras[i].text)
						}
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%s: %d paragraphs, %d flagged", c, len(paras), flagged.Load())
		total += int(flagged.Load())
	}
	// The budget: the paragraphs flagged today, which are about prompt
	// injection itself or quote an attack; a rule that adds any fails.
	if total > docsFlaggedBudget {
		t.Errorf("the screen flags %d paragraphs of the documentation corpora, budget %d", total, docsFlaggedBudget)
	}
}

const docsFlaggedBudget = 17
