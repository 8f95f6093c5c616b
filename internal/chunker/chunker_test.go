package chunker

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/*.txtar")

// corpusDir holds the openclaw documentation used by the corpus test and
// the benchmark.
const corpusDir = "../../../shared/corpora/openclaw-docs"

// testCase is one testdata/*.txtar file: a comment that may set
// "max_tokens: N", the input document (its name is the path given to
// Split) and a "want" file with the expected chunks as dumped by dump.
type testCase struct {
	file  string
	arc   *archive
	path  string
	input []byte
	opts  Options
}

// loadCases reads every case file in testdata.
func loadCases(tb testing.TB) []testCase {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatal("no case files in testdata")
	}
	var cases []testCase
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		a := parseArchive(data)
		if len(a.files) == 0 || a.files[0].name == "want" {
			tb.Fatalf("%s: first file must be the input document", file)
		}
		c := testCase{file: file, arc: a, path: a.files[0].name, input: a.files[0].data}
		for line := range strings.Lines(string(a.comment)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "max_tokens:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					tb.Fatalf("%s: max_tokens: %v", file, err)
				}
				c.opts.MaxTokens = n
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// dump renders Split's result in the readable form stored in the want
// files.
func dump(chunks []contract.Chunk, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	if len(chunks) == 0 {
		return "no chunks\n"
	}
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "chunk %d id=%s tokens=%d\n", c.Ord, c.ID, EstimateTokens(c.Text))
		fmt.Fprintf(&b, "heading: %s\n", strconv.Quote(strings.Join(c.HeadingPath, " > ")))
		fmt.Fprintf(&b, "title: %q\n", c.Title)
		if c.Summary != "" {
			fmt.Fprintf(&b, "summary: %q\n", c.Summary)
		}
		if c.ReadWhen != "" {
			fmt.Fprintf(&b, "read_when: %q\n", c.ReadWhen)
		}
		if c.Text == "" {
			b.WriteString("text: (empty)\n")
		} else {
			b.WriteString("text:\n")
			for line := range strings.SplitSeq(c.Text, "\n") {
				b.WriteString(strings.TrimRight("| "+line, " ") + "\n")
			}
		}
		// The Markdown is shown where it says more than the text.
		if c.Markdown != "" && c.Markdown != c.Text {
			b.WriteString("markdown:\n")
			for line := range strings.SplitSeq(c.Markdown, "\n") {
				b.WriteString(strings.TrimRight("| "+line, " ") + "\n")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestSplitCases(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(c.file), ".txtar"), func(t *testing.T) {
			chunks, err := Split(c.path, c.input, c.opts)
			if err == nil {
				checkChunks(t, chunks, c.opts)
			}
			got := dump(chunks, err)
			var want *archiveFile
			for i := range c.arc.files {
				if c.arc.files[i].name == "want" {
					want = &c.arc.files[i]
				}
			}
			if *update {
				if want == nil {
					c.arc.files = append(c.arc.files, archiveFile{name: "want"})
					want = &c.arc.files[len(c.arc.files)-1]
				}
				want.data = []byte(got)
				if err := os.WriteFile(c.file, c.arc.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want == nil {
				t.Fatalf("%s has no want section; run go test -update", c.file)
			}
			if got != string(want.data) {
				t.Errorf("chunks differ from %s (run go test -update to accept)\ngot:\n%s\nwant:\n%s", c.file, got, want.data)
			}
		})
	}
}

// checkChunks asserts the invariants every result must hold: IDs unique
// and 16 hex digits, Ord in sequence, valid UTF-8 everywhere, every Text
// within the token budget, no blank heading-less chunk.
func checkChunks(tb testing.TB, chunks []contract.Chunk, opts Options) {
	tb.Helper()
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	ids := make(map[string]int, len(chunks))
	for i, c := range chunks {
		if j, dup := ids[c.ID]; dup {
			tb.Errorf("chunks %d and %d share ID %s", j, i, c.ID)
		}
		ids[c.ID] = i
		if len(c.ID) != 16 || strings.Trim(c.ID, "0123456789abcdef") != "" {
			tb.Errorf("chunk %d: ID %q is not 16 hex digits", i, c.ID)
		}
		if c.Ord != i {
			tb.Errorf("chunk %d: Ord %d", i, c.Ord)
		}
		if !utf8.ValidString(c.Text) || !utf8.ValidString(c.Markdown) || !utf8.ValidString(c.Title) || !utf8.ValidString(c.Summary) || !utf8.ValidString(c.ReadWhen) {
			tb.Errorf("chunk %d: invalid UTF-8", i)
		}
		for _, h := range c.HeadingPath {
			if !utf8.ValidString(h) {
				tb.Errorf("chunk %d: invalid UTF-8 in heading path", i)
			}
		}
		if n := EstimateTokens(c.Text); n > maxTokens {
			tb.Errorf("chunk %d: %d tokens, budget %d", i, n, maxTokens)
		}
		if c.Title == "" {
			tb.Errorf("chunk %d: empty title", i)
		}
		if len(c.HeadingPath) == 0 && strings.TrimSpace(c.Text) == "" {
			tb.Errorf("chunk %d: neither heading nor text", i)
		}
	}
}

func TestSplitInvalidUTF8(t *testing.T) {
	_, err := Split("docs/bad.md", []byte("# Title\n\nbad \xff byte\n"), Options{})
	if !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("err = %v, want ErrInvalidUTF8", err)
	}
	if want := "chunk docs/bad.md: invalid UTF-8"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

// noRedaction is a Redactor that finds nothing.
type noRedaction struct{}

func (noRedaction) String(s string) string { return s }

func TestChunkFileInvalidUTF8(t *testing.T) {
	ev := &contract.FileEvent{Repo: "docs", Path: "bad.md", Content: "# Title\n\nbad \xff byte\n"}
	if _, err := ChunkFile(ev, 1, noRedaction{}, Options{}); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("err = %v, want content not valid UTF-8", err)
	}
	ev.Deleted, ev.Content = true, ""
	if cs, err := ChunkFile(ev, 2, noRedaction{}, Options{}); err != nil || !cs.Deleted {
		t.Fatalf("tombstone: %v, %v", cs, err)
	}
}

func TestSplitDeterministic(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(c.file), ".txtar"), func(t *testing.T) {
			a, errA := Split(c.path, c.input, c.opts)
			b, errB := Split(c.path, c.input, c.opts)
			if dump(a, errA) != dump(b, errB) {
				t.Error("two runs over the same input differ")
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"blank", " \n\t ", 0},
		{"short word", "the", 1},
		{"six letters", "config", 1},
		{"seven letters", "gateway", 2},
		{"sentence", "The quick brown fox jumps.", 6},
		{"identifier", "agents.defaults.model", 6},
		{"punctuation", "{}();", 5},
		{"two-byte letters", "éé", 1},
		{"cjk", "日本語", 3},
		{"emoji", "ok 👍", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.in); got != tt.want {
				t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestEstimateTokensAdditive(t *testing.T) {
	parts := []string{"Hello,", "wörld", "日本", "x_y.z", "{a:1}", "🙂"}
	sum := 0
	for _, p := range parts {
		sum += EstimateTokens(p)
	}
	for _, sep := range []string{" ", "\n", "\n\n", "\t"} {
		if got := EstimateTokens(strings.Join(parts, sep)); got != sum {
			t.Errorf("joined with %q: %d tokens, parts sum to %d", sep, got, sum)
		}
	}
}

// corpusFiles lists the Markdown and MDX files of the corpus, or skips.
func corpusFiles(tb testing.TB) []string {
	tb.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		tb.Skipf("corpus not available: %v", err)
	}
	var files []string
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".md" || ext == ".mdx") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func TestSplitCorpus(t *testing.T) {
	for _, file := range corpusFiles(t) {
		rel, _ := filepath.Rel(corpusDir, file)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		orig := bytes.Clone(src)
		chunks, err := Split(rel, src, Options{})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if !bytes.Equal(src, orig) {
			t.Errorf("%s: Split wrote to its input", rel)
		}
		checkChunks(t, chunks, Options{})
		if len(chunks) == 0 {
			if _, body := splitFrontMatter(src); !isBlank(body) {
				t.Errorf("%s: no chunks", rel)
			}
			continue
		}
		first := chunks[0].Text
		for line := range strings.Lines(first) {
			if strings.TrimSpace(line) == "---" {
				t.Errorf("%s: front matter fence in first chunk", rel)
			}
		}
		if fm, ok := strings.CutPrefix(string(src), "---\n"); ok {
			key, _, _ := strings.Cut(fm, "\n")
			if key != "" && key != "---" && strings.Contains(first, key) {
				t.Errorf("%s: front matter line %q in first chunk", rel, key)
			}
		}
		for _, c := range chunks {
			if strings.Contains(c.Text, "<Note") || strings.Contains(c.Text, "<Card") {
				t.Errorf("%s: chunk %d keeps a component tag", rel, c.Ord)
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.input, uint16(c.opts.MaxTokens))
	}
	f.Fuzz(func(t *testing.T, src []byte, budget uint16) {
		opts := Options{MaxTokens: int(budget % 400)}
		orig := bytes.Clone(src)
		chunks, err := Split("fuzz/doc.md", src, opts)
		if !bytes.Equal(src, orig) {
			t.Fatal("Split wrote to its input") // the handler parses a string in place
		}
		if !utf8.Valid(src) {
			if !errors.Is(err, ErrInvalidUTF8) {
				t.Fatalf("invalid UTF-8 input: err = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("valid input: %v", err)
		}
		checkChunks(t, chunks, opts)

		// Plain paragraphs (letters, digits and white space only) must come
		// out whole: the same non-space characters in the same order.
		plain := plainText(src)
		chunks, err = Split("fuzz/plain.md", plain, opts)
		if err != nil {
			t.Fatalf("plain input: %v", err)
		}
		checkChunks(t, chunks, opts)
		var got strings.Builder
		for _, c := range chunks {
			got.WriteString(c.Text)
		}
		if want := dropSpace(string(plain)); dropSpace(got.String()) != want {
			t.Fatalf("plain input not covered\ninput: %q\nchunks: %q", plain, got.String())
		}
	})
}

// plainText keeps the ASCII letters, digits, spaces and newlines of src, so
// that no Markdown syntax remains.
func plainText(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for _, c := range src {
		if isLetter(c) || (c >= '0' && c <= '9') || c == ' ' || c == '\n' {
			out = append(out, c)
		}
	}
	return out
}

// dropSpace removes all white space from s.
func dropSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func BenchmarkSplitCorpus(b *testing.B) {
	files := corpusFiles(b)
	type doc struct {
		path string
		src  []byte
	}
	docs := make([]doc, 0, len(files))
	size := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, doc{file, src})
		size += len(src)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		chunks = 0
		for _, d := range docs {
			cs, err := Split(d.path, d.src, Options{})
			if err != nil {
				b.Fatal(err)
			}
			chunks += len(cs)
		}
	}
	b.ReportMetric(float64(chunks), "chunks/op")
	b.ReportMetric(float64(len(docs)), "files/op")
}

func TestByteClass(t *testing.T) {
	if len(byteClass) != 256 {
		t.Fatalf("byteClass has %d entries, want 256", len(byteClass))
	}
	for b := 0; b < 256; b++ {
		c := byte(b)
		var want byte
		switch {
		case isLetter(c) || (c >= '0' && c <= '9') || c == '_':
			want = 'w'
		case c >= 0x80 && c < 0xC0:
			want = 'c'
		case c >= 0xC0 && c < 0xE0:
			want = 't'
		case isSpace(c):
			want = 's'
		default:
			want = 'p'
		}
		if byteClass[b] != want {
			t.Errorf("byteClass[%#x] = %q, want %q", b, byteClass[b], want)
		}
	}
}

func TestFrontMatter(t *testing.T) {
	tests := []struct {
		name  string
		yml   string
		want  frontMatter
		quick bool // read without the YAML decoder
	}{
		{"plain", "title: Hello\nsummary: World\n", frontMatter{title: "Hello", summary: "World"}, true},
		{"quoted", "title: \"Q: x\"\nsummary: 'single'\n", frontMatter{title: "Q: x", summary: "single"}, true},
		{"list", "read_when:\n  - one\n  - \"two\"\ntitle: T\n", frontMatter{title: "T", readWhen: "one\ntwo"}, true},
		{"compact list", "read_when:\n- one\n- two\n", frontMatter{readWhen: "one\ntwo"}, true},
		{"null", "title: ~\nsummary:\n", frontMatter{}, true},
		{"comments", "# lead\ntitle: A # not a comment? no: ' #' starts one\n", frontMatter{title: "A"}, false},
		{"escapes", "title: \"tab\\there\"\n", frontMatter{title: "tab\there"}, false},
		{"folded", "summary: >\n  one\n  two\n", frontMatter{summary: "one two"}, false},
		{"nested other key", "meta:\n  a: 1\n  b: \"two\"\ntitle: X\n", frontMatter{title: "X"}, true},
		{"nested then list", "x-i18n:\n    model: m\n    workflow: 16\nread_when:\n    - a\n", frontMatter{readWhen: "a"}, true},
		{"nested read field", "title:\n  a: 1\n", frontMatter{}, false},
		{"nested uneven", "meta:\n  a: 1\n   b: 2\ntitle: X\n", frontMatter{}, false},
		{"nested then sequence", "title: X\nmeta:\n  a: 1\n- x\n", frontMatter{}, false},
		{"nested deeper", "meta:\n  a:\n    b: 1\ntitle: X\n", frontMatter{title: "X"}, false},
		{"duplicate key", "title: A\ntitle: B\n", frontMatter{}, true},
		{"duplicate after complex", "x: {a: 1}\ntitle: A\n\"title\": B\n", frontMatter{}, false},
		{"merge key", "base: &b {title: M}\n<<: *b\n", frontMatter{title: "M"}, false},
		{"alias value", "t: &t Hello\ntitle: *t\n", frontMatter{title: "Hello"}, false},
		{"invalid", "title: \"open\nread_when: [a\n", frontMatter{}, false},
		{"not a mapping", "- a\n- b\n", frontMatter{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseFrontMatter([]byte(tt.yml)); got != tt.want {
				t.Errorf("parseFrontMatter = %+v, want %+v", got, tt.want)
			}
			if got := decodeFrontMatter([]byte(tt.yml)); got != tt.want {
				t.Errorf("decodeFrontMatter = %+v, want %+v", got, tt.want)
			}
			if got := referenceFrontMatter([]byte(tt.yml)); got != tt.want {
				t.Errorf("referenceFrontMatter = %+v, want %+v", got, tt.want)
			}
			if _, ok := quickFrontMatter([]byte(tt.yml)); ok != tt.quick {
				t.Errorf("quickFrontMatter ok = %v, want %v", ok, tt.quick)
			}
		})
	}
}

func FuzzFrontMatter(f *testing.F) {
	for _, c := range loadCases(f) {
		if fm, ok := strings.CutPrefix(string(c.input), "---\n"); ok {
			yml, _, _ := strings.Cut(fm, "\n---")
			f.Add([]byte(yml))
		}
	}
	f.Add([]byte("title: A\nread_when:\n  - x\n  - 'y'\nsummary: \"z\"\n"))
	f.Add([]byte("read_when:\n    - a\nsummary: s\nx-i18n:\n    generated_at: \"2026-07-13T19:41:13Z\"\n    model: gpt-5.6\n    workflow: 16\ntitle: T\n"))
	f.Fuzz(func(t *testing.T, yml []byte) {
		decoded := decodeFrontMatter(yml)
		if len(yml) <= 4<<10 {
			if ref := referenceFrontMatter(yml); decoded != ref {
				t.Fatalf("node reader disagrees with yaml.Unmarshal on %q\nnode: %+v\nref:  %+v", yml, decoded, ref)
			}
		}
		if quick, ok := quickFrontMatter(yml); ok && quick != decoded {
			t.Fatalf("quick reader disagrees with the YAML parser on %q\nquick: %+v\nyaml:  %+v", yml, quick, decoded)
		}
	})
}

func TestMeasure(t *testing.T) {
	tests := []string{"", "a", "a b", "a  b", " a", "a ", "a\nb", "a\n\nb", "a\tb", "a \nb", "é x", "日本 語", "x,\ny"}
	for _, in := range tests {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			tokens, tidy := measure([]byte(in))
			if want := EstimateTokens(in); tokens != want {
				t.Errorf("tokens = %d, want %d", tokens, want)
			}
			var b strings.Builder
			writeTidy(&b, []byte(in))
			if want := b.String() == in; tidy != want {
				t.Errorf("tidy = %v, want %v (writeTidy gives %q)", tidy, want, b.String())
			}
		})
	}
}

func TestEstimateMatchesCounter(t *testing.T) {
	inputs := []string{"a日b", "日x", "x日", "éa", "aé", "ü\u0301", "x\x00y", "a.b c", "🙂a", "a🙂"}
	for _, c := range loadCases(t) {
		inputs = append(inputs, string(c.input))
	}
	for _, in := range inputs {
		var c counter
		for i := 0; i < len(in); i++ {
			c.add(in[i])
		}
		if got := EstimateTokens(in); got != c.total() {
			t.Errorf("EstimateTokens(%.40q) = %d, counter says %d", in, got, c.total())
		}
	}
}

func TestSplitConcurrent(t *testing.T) {
	cases := loadCases(t)
	want := make([]string, len(cases))
	for i, c := range cases {
		chunks, err := Split(c.path, c.input, c.opts)
		want[i] = dump(chunks, err)
	}
	t.Run("parallel", func(t *testing.T) {
		for w := range 4 {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				for i, c := range cases {
					chunks, err := Split(c.path, c.input, c.opts)
					if got := dump(chunks, err); got != want[i] {
						t.Errorf("%s: concurrent result differs", c.file)
					}
				}
			})
		}
	})
}

func TestPathologicalNestingIsRejectedQuickly(t *testing.T) {
	indented := func(marker, lazy string) string {
		var b strings.Builder
		for d := range 1500 {
			b.WriteString(strings.Repeat("  ", d) + marker + " item\n" + lazy)
		}
		return b.String()
	}
	for name, src := range map[string]string{
		"quotes":  strings.Repeat("> ", 5000) + "deep\n",
		"bullets": strings.Repeat("- ", 5000) + "deep\n",
		// Nested by indentation, one level a line, as a 2 MB file of
		// them took seconds of goldmark's time.
		"indented bullets": indented("-", ""),
		"indented ordered": indented("1.", ""),
		// A lazy continuation line keeps the items open.
		"lazy lines": indented("*", "lazy\n"),
		"tabs":       strings.ReplaceAll(indented("+", ""), "    ", "\t"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Split("evil.md", []byte(src), Options{})
			if !errors.Is(err, ErrTooDeep) {
				t.Errorf("err = %v, want ErrTooDeep", err)
			}
		})
	}
	// Rules, setext underlines and ordinary nesting still parse, and a
	// list that goes back out closes its items: a long file of shallow
	// lists is as shallow as its deepest list.
	var shallow strings.Builder
	for range 200 {
		shallow.WriteString("- a\n  - b\n    1. c\n       - d\n\nBack to text.\n\n")
	}
	for name, ok := range map[string]string{
		"ordinary": "# Title\n\nText\n-----------------------------------------------------------------------------\n\n> > > quoted\n\n- a\n  - b\n    - c\n",
		"shallow":  shallow.String(),
	} {
		if chunks, err := Split("ok.md", []byte(ok), Options{}); err != nil || len(chunks) == 0 {
			t.Errorf("%s file: %d chunks, %v", name, len(chunks), err)
		}
	}
}
