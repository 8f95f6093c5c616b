package chunker

import (
	"fmt"
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

// fences returns the fence lines of md and whether every fenced block
// in it is closed.
func fences(md string) (opening []string, closed bool) {
	open := ""
	for line := range strings.SplitSeq(md, "\n") {
		t := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(t, "```") {
			continue
		}
		if open == "" {
			open = strings.TrimRight(t, "`")
			opening = append(opening, strings.TrimSpace(t))
			if open == "" {
				open = "```"
			}
			continue
		}
		if strings.Trim(t, "`") == "" {
			open = ""
		}
	}
	return opening, open == ""
}

func TestSplitPartsCarryMarkdown(t *testing.T) {
	prose := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "Paragraph %d explains the `gateway` and links [the guide](https://example.com/g%d). It goes on for a while to fill the section.\n\n", i, i)
		}
		return b.String()
	}
	code := "```bash\nknowhub up --data ./data\nknowhub search \"install\"\n```\n\n"
	table := "| flag | meaning |\n| --- | --- |\n| `--data` | data directory |\n\n"
	src := "# Long\n\n" + prose(30) + code + table + prose(30)
	chunks, err := Split("long.md", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks, want a section split in parts", len(chunks))
	}
	var all strings.Builder
	for i, c := range chunks {
		if c.Markdown == "" {
			t.Fatalf("part %d carries no Markdown", i)
		}
		if _, closed := fences(c.Markdown); !closed {
			t.Errorf("part %d leaves a fence open:\n%s", i, c.Markdown)
		}
		all.WriteString(c.Markdown + "\n\n")
	}
	// Together the parts hold the section as written, the code block and
	// the table whole, each once.
	for _, want := range []string{strings.TrimSpace(code), strings.TrimSpace(table)} {
		if n := strings.Count(all.String(), want); n != 1 {
			t.Errorf("%q appears %d times in the parts' Markdown, want once", want, n)
		}
	}
	if got, want := dropSpace(all.String()), dropSpace(strings.TrimPrefix(src, "# Long")); got != want {
		t.Errorf("the parts' Markdown is not the section's:\n%s", all.String())
	}
}

func TestSplitCutsLongCodeBlockIntoFencedPieces(t *testing.T) {
	var code strings.Builder
	code.WriteString("```bash\n")
	for i := range 60 {
		fmt.Fprintf(&code, "knowhub search --repo docs \"query number %d\"\n", i)
	}
	code.WriteString("```\n")
	src := "# Script\n\nBefore the script.\n\n" + code.String() + "\nAfter the script.\n"
	chunks, err := Split("script.md", []byte(src), Options{MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want the code block cut in parts", len(chunks))
	}
	lines := 0
	for i, c := range chunks {
		open, closed := fences(c.Markdown)
		if !closed || len(open) != 1 || open[0] != "```bash" {
			t.Errorf("part %d: fences %q (closed %v), want one closed ```bash block:\n%s", i, open, closed, c.Markdown)
		}
		lines += strings.Count(c.Markdown, "knowhub search")
	}
	if lines != 60 {
		t.Errorf("the parts hold %d lines of the script, want 60", lines)
	}
	if !strings.HasPrefix(chunks[0].Markdown, "Before the script.") || !strings.HasSuffix(chunks[len(chunks)-1].Markdown, "After the script.") {
		t.Errorf("the prose around the script is not at the ends: %q ... %q", chunks[0].Markdown, chunks[len(chunks)-1].Markdown)
	}
}
