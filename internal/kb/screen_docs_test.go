package kb

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScreenDocsParagraphs runs the screen over every paragraph of the
// shared documentation corpora, which hold no prompt injection but plenty of
// text about prompts, system messages, tools and commands: what the screen
// flags there is what it would wrongly quarantine if an agent saved a
// paragraph of documentation as knowledge. Run with -v for the figures;
// KH_SHOW_SCREEN=1 lists every flagged paragraph.
func TestScreenDocsParagraphs(t *testing.T) {
	s := NewScreen()
	total := 0
	for _, c := range []string{"openclaw-docs", "nats-docs", "prometheus-docs", "openclaw-docs-zh-CN"} {
		dir := "../../../shared/corpora/" + c
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("corpus %s: %v", c, err)
		}
		paragraphs, flagged := 0, 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, para := range strings.Split(string(data), "\n\n") {
				if strings.TrimSpace(para) == "" {
					continue
				}
				paragraphs++
				if reason, ok := s.Check(para); ok {
					flagged++
					if os.Getenv("KH_SHOW_SCREEN") != "" {
						t.Logf("%s: %s: %q", strings.TrimPrefix(p, dir+"/"), reason, para)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d paragraphs, %d flagged", c, paragraphs, flagged)
		total += flagged
	}
	// The budget: the paragraphs flagged today, which are about prompt
	// injection itself or quote an attack; a rule that adds any fails.
	if total > docsFlaggedBudget {
		t.Errorf("the screen flags %d paragraphs of the documentation corpora, budget %d", total, docsFlaggedBudget)
	}
}

const docsFlaggedBudget = 17
