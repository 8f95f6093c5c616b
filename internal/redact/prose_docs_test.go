package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProseOnDocs runs the prose detection over every Markdown file of the
// shared documentation corpora, which hold no real secret, and prints the
// redactions of New's rules and those Prose adds. Documentation is text
// about passwords and tokens, full of digests and examples: what Prose
// finds there is what it would wrongly take from a transcript quoting it.
// Run with -v for the figures; KH_SHOW_PROSE=1 lists every finding.
func TestProseOnDocs(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range []string{"openclaw-docs", "nats-docs", "prometheus-docs", "openclaw-docs-zh-CN"} {
		dir := "../../../shared/corpora/" + c
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("corpus %s: %v", c, err)
		}
		files, bytes, rules, prose := 0, 0, 0, 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			bytes += len(data)
			out, found := r.Redact(string(data))
			rules += len(found)
			for _, f := range ProseFindings(out) {
				prose++
				if os.Getenv("KH_SHOW_PROSE") != "" {
					lo, hi := max(0, f.Start-60), min(len(out), f.End+20)
					t.Logf("%s: %s: %q", strings.TrimPrefix(p, dir+"/"), f.Kind, out[lo:hi])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d files, %d bytes: %d redactions by the rules, %d more by prose detection", c, files, bytes, rules, prose)
		total += prose
	}
	// The budget: a handful over some 1,200 pages.
	if total > 10 {
		t.Errorf("prose detection redacts %d spans of the documentation corpora, budget 10", total)
	}
}
