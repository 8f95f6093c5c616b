package chunker

import (
	"strings"
	"testing"
)

// mdSection holds a fenced code block with its language, inline code, a
// link and a table: what an agent needs intact.
const mdSection = "Run `kh up` first; see [the guide](https://example.com/guide).\n\n" +
	"```bash\nknowhub up --data ./data\n```\n\n" +
	"| flag | meaning |\n| --- | --- |\n| `--data` | data directory |\n"

func TestSplitKeepsMarkdown(t *testing.T) {
	src := "---\ntitle: T\n---\nIntro *text*.\n\n# Install\n\n" + mdSection + "\nSetext\n------\n\nbody `x`\n\n## \n\nlost place\n"
	chunks, err := Split("docs/install.md", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"":        "Intro *text*.",
		"Install": strings.TrimSpace(mdSection),
		// The next heading has no text, so goldmark keeps no place for it:
		// the section ends at an unknown place and carries Text alone.
		"Setext": "",
	}
	got := map[string]string{}
	for _, c := range chunks {
		got[strings.Join(c.HeadingPath, " > ")] = c.Markdown
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("section %q: Markdown %q, want %q", k, got[k], w)
		}
	}
	for _, c := range chunks {
		if strings.Contains(c.Text, "```") {
			t.Errorf("Text of %v keeps a fence: %q", c.HeadingPath, c.Text)
		}
	}
}

func TestSplitPartsCarryNoMarkdown(t *testing.T) {
	src := "# Long\n\n" + strings.Repeat("A sentence of prose that goes on. ", 200)
	chunks, err := Split("long.md", []byte(src), Options{MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks, want parts", len(chunks))
	}
	for _, c := range chunks {
		if c.Markdown != "" {
			t.Errorf("part %s carries Markdown", c.ID)
		}
	}
}
