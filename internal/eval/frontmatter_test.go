package eval

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/chunker"
)

func TestStripFrontMatter(t *testing.T) {
	tests := []struct {
		name string
		src  string
		keys []string
		want string
	}{
		{
			name: "scalar",
			src:  "---\nsummary: \"Short text\"\ntitle: \"T\"\n---\n\n# Body\n",
			keys: []string{"summary"},
			want: "---\ntitle: \"T\"\n---\n\n# Body\n",
		},
		{
			name: "list and last key",
			src:  "---\ntitle: T\nread_when:\n  - one\n  - two\n---\nbody\n",
			keys: []string{"read_when"},
			want: "---\ntitle: T\n---\nbody\n",
		},
		{
			name: "compact list, folded scalar, two keys",
			src:  "---\nread_when:\n- a\n- b\nsummary: >\n  folded\n  text\nx-i18n:\n    model: m\n---\nbody\n",
			keys: []string{"summary", "read_when"},
			want: "---\nx-i18n:\n    model: m\n---\nbody\n",
		},
		{
			name: "every key",
			src:  "---\nsummary: s\n---\nbody\n",
			keys: []string{"summary"},
			want: "---\n---\nbody\n",
		},
		{
			name: "dots close the block",
			src:  "---\nsummary: s\ntitle: T\n...\nbody\n",
			keys: []string{"summary"},
			want: "---\ntitle: T\n...\nbody\n",
		},
		{
			name: "crlf",
			src:  "---\r\nsummary: s\r\ntitle: T\r\n---\r\nbody\r\n",
			keys: []string{"summary"},
			want: "---\r\ntitle: T\r\n---\r\nbody\r\n",
		},
		{
			name: "key only in the body",
			src:  "---\ntitle: T\n---\nsummary: not front matter\n",
			keys: []string{"summary"},
			want: "---\ntitle: T\n---\nsummary: not front matter\n",
		},
		{
			name: "nested key of the same name stays",
			src:  "---\nmeta:\n  summary: inner\nsummary: outer\n---\nbody\n",
			keys: []string{"summary"},
			want: "---\nmeta:\n  summary: inner\n---\nbody\n",
		},
		{name: "no front matter", src: "# Title\n\nsummary: x\n", keys: []string{"summary"}, want: "# Title\n\nsummary: x\n"},
		{name: "unclosed fence", src: "---\nsummary: x\n", keys: []string{"summary"}, want: "---\nsummary: x\n"},
		{name: "no keys", src: "---\nsummary: x\n---\n", keys: nil, want: "---\nsummary: x\n---\n"},
		{name: "empty front matter", src: "---\n---\nbody\n", keys: []string{"summary"}, want: "---\n---\nbody\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StripFrontMatter([]byte(tt.src), tt.keys)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	for _, bad := range []string{
		"---\nsummary: \"open\ntitle: [a\n---\nbody\n", // invalid YAML
		"---\n- a\n- b\n---\nbody\n",                   // not a mapping
		"---\n{summary: s, title: T}\n---\nbody\n",     // flow mapping
	} {
		if _, err := StripFrontMatter([]byte(bad), []string{"summary"}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// The stripped copy still chunks as before, without the stripped field.
func TestStripFrontMatterChunks(t *testing.T) {
	src := []byte("---\nsummary: \"Quokka habitats\"\ntitle: \"Marsupials\"\nread_when:\n  - planning a trip\n---\n\n# Intro\n\nText.\n")
	stripped, err := StripFrontMatter(src, []string{"summary"})
	if err != nil {
		t.Fatal(err)
	}
	before, err := chunker.Split("a.md", src, chunker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := chunker.Split("a.md", stripped, chunker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("chunks %d, %d; want 1, 1", len(before), len(after))
	}
	if before[0].Summary != "Quokka habitats" || after[0].Summary != "" {
		t.Errorf("summary before %q, after %q; want it gone after", before[0].Summary, after[0].Summary)
	}
	b, a := before[0], after[0]
	b.Summary = ""
	if b.ID != a.ID || b.Title != a.Title || b.ReadWhen != a.ReadWhen || b.Text != a.Text {
		t.Errorf("stripping changed more than the summary: %+v vs %+v", before[0], after[0])
	}
}

func TestIndexMarkdownStripsFrontMatter(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "---\nsummary: \"Quokka habitats\"\ntitle: \"Marsupials\"\n---\n\n# Intro\n\nKangaroos hop.\n")
	writeFile(t, dir, "b.md", "# Birds\n\nEmus run.\n")
	writeFile(t, dir, "bad.md", "---\nsummary: \"open\ntitle: [a\n---\n\n# Broken\n")
	ctx := context.Background()

	plain, err := IndexMarkdown(ctx, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := plain.Search("quokka", 5); len(hits) != 1 || hits[0].DocID != "a.md" {
		t.Fatalf("unstripped: quokka finds %v, want a.md", hits)
	}
	stripped, err := IndexMarkdownWith(ctx, dir, MarkdownOptions{Workers: 1, StripFrontMatter: []string{"summary"}})
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := stripped.Search("quokka", 5); len(hits) != 0 {
		t.Errorf("stripped: quokka finds %v, want nothing", hits)
	}
	if hits, _ := stripped.Search("marsupials kangaroos", 5); len(hits) != 1 || hits[0].DocID != "a.md" {
		t.Errorf("stripped: title and body find %v, want a.md", hits)
	}
	if stripped.Docs != 2 || len(stripped.Skipped) != 1 || !strings.Contains(stripped.Skipped[0], "bad.md") {
		t.Errorf("stripped: %d files, skipped %v; want 2 and bad.md with a reason", stripped.Docs, stripped.Skipped)
	}
}

// On the real corpora, stripping summary leaves no chunk with a summary
// and changes no title, heading or text.
func TestStripSummaryFromCorpora(t *testing.T) {
	for _, name := range []string{"openclaw-docs", "openclaw-docs-zh-CN"} {
		dir := filepath.Join("../../../shared/corpora", name)
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("corpus %s not available", name)
		}
		t.Run(name, func(t *testing.T) {
			withSummary := 0
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || (filepath.Ext(p) != ".md" && filepath.Ext(p) != ".mdx") {
					return err
				}
				src, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				stripped, err := StripFrontMatter(src, []string{"summary"})
				if err != nil {
					t.Errorf("%s: %v", p, err)
					return nil
				}
				before, err1 := chunker.Split(p, src, chunker.Options{})
				after, err2 := chunker.Split(p, stripped, chunker.Options{})
				if err1 != nil || err2 != nil {
					return nil // invalid files are skipped either way
				}
				if len(before) != len(after) {
					t.Errorf("%s: %d chunks, %d after stripping", p, len(before), len(after))
					return nil
				}
				for i := range after {
					if before[i].Summary != "" {
						withSummary++
					}
					b := before[i]
					b.Summary = ""
					if !reflect.DeepEqual(after[i], b) {
						t.Errorf("%s chunk %d: stripping changed more than the summary", p, i)
					}
					if after[i].Summary != "" {
						t.Errorf("%s chunk %d: summary %q survived", p, i, after[i].Summary)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if withSummary == 0 {
				t.Error("no chunk had a summary to strip")
			}
		})
	}
}

func TestReadMarkdownWithStripsFrontMatter(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "---\nsummary: \"Quokka habitats\"\ntitle: \"Marsupials\"\n---\n\n# Intro\n\nKangaroos hop.\n")
	writeFile(t, dir, "bad.md", "---\nsummary: \"open\ntitle: [a\n---\n\n# Broken\n")
	files, skipped, err := ReadMarkdownWith(context.Background(), dir, MarkdownOptions{Workers: 1, StripFrontMatter: []string{"summary"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "a.md" || len(files[0].Chunks) != 1 {
		t.Fatalf("files %+v; want a.md with one chunk", files)
	}
	if c := files[0].Chunks[0]; c.Summary != "" || c.Title != "Marsupials" {
		t.Errorf("chunk summary %q title %q; want the summary gone and the title kept", c.Summary, c.Title)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "bad.md") {
		t.Errorf("skipped %q; want bad.md", skipped)
	}
}
