// Package chunker turns one Markdown or MDX document into contract.Chunks:
// one chunk per heading section, carrying its heading path, the file's
// front-matter fields and the section body as plain text. Sections longer
// than a token budget are split into parts.
//
// Documents are parsed with goldmark (CommonMark plus the GFM table,
// strikethrough and task-list extensions) and rendered as readable text:
// Markdown syntax is removed, links keep their text and lose their URL,
// images become their alt text, table cells are separated by spaces and
// rows by newlines, list items and code lines keep their own lines, blocks
// are separated by blank lines. HTML tags are stripped; their text stays.
//
// MDX-style documents (an .mdx file, or any file with a line that starts
// with a JSX component tag such as <Note> or <Tab title="...">) are read as
// MDX reads them: component tags are stripped before parsing, keeping the
// values of their title, path, alt, caption and label attributes as text,
// indentation (of component content, typically) never makes an indented
// code block, as MDX has none, and top-level import and export statements
// are dropped. Tags inside fenced code and code spans are left alone.
//
// The package is a pure core: Split is a function of its arguments only and
// touches neither the network nor the file system, so it is safe for
// concurrent use. Message decoding and publishing live at the edge, in
// handler.go.
package chunker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// DefaultMaxTokens is the chunk budget used when Options.MaxTokens is zero.
const DefaultMaxTokens = 800

// ErrInvalidUTF8 is wrapped by Split when the document is not valid UTF-8.
// The input cannot be chunked however often it is retried, so a caller
// should dead-letter it.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// Options tunes Split.
type Options struct {
	// MaxTokens bounds EstimateTokens of every chunk's Text; a longer
	// section is split into parts. Zero or negative means DefaultMaxTokens.
	MaxTokens int
}

// MaxNesting bounds block-quote and list nesting: goldmark's time grows
// quadratically with it, so a hostile file could stall a worker for
// minutes. Real documentation nests a handful of levels.
const MaxNesting = 64

// ErrTooDeep reports a file nested beyond MaxNesting; it is permanent.
var ErrTooDeep = errors.New("block nesting too deep")

// MaxHeadings bounds the headings of one file, each a section: parsing
// and chunking cost memory and time per heading, so a file within the
// size limit made of a million headings would take a gigabyte and
// seconds, and yield a chunk set larger than a message may be. The
// largest file of the documentation corpora has under 800.
const MaxHeadings = 10000

// ErrTooManyHeadings reports a file with more than MaxHeadings headings;
// it is permanent.
var ErrTooManyHeadings = errors.New("too many headings")

// countHeadings counts the lines that may be headings: ATX ("# x", up to
// three spaces of indent) and setext underlines ("===" or "---" under a
// line of text). It errs on the high side (a "#" line inside a code block
// counts), which only matters near the limit.
func countHeadings(body []byte) int {
	n := 0
	prevText := false
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		l := bytes.TrimLeft(line, " ")
		text := len(bytes.TrimSpace(line)) > 0
		switch {
		case len(line)-len(l) > 3:
		case len(l) > 0 && l[0] == '#':
			k := 0
			for k < len(l) && l[k] == '#' {
				k++
			}
			if k <= 6 && (k == len(l) || l[k] == ' ' || l[k] == '\t') {
				n++
			}
		case prevText && len(l) > 0 && (l[0] == '=' || l[0] == '-') && len(bytes.Trim(bytes.TrimSpace(l), string(l[0]))) == 0:
			n++
			text = false
		}
		prevText = text
	}
	return n
}

// maxNesting returns how deeply blocks nest, counted from the text alone
// so that it is known before goldmark parses: the run of block-quote
// markers and list bullets that opens a line ("> > >", "- - -", "* > -"),
// plus the list items it sits in by indentation ("- a" then "  - b" then
// "    - c"). A less indented line closes the items it is left of, unless
// it may be a lazy continuation of the paragraph above (the line before
// it is not blank), which keeps them open as goldmark does. The count
// errs on the high side (a bullet inside a code block counts), which only
// matters near the limit.
func maxNesting(body []byte) int {
	deepest := 0
	var open []int // indentation of the list items the line may sit in
	prevBlank := true
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		indent, depth := 0, 0
		first := -1 // column of the line's first marker
		col := 0
	scan:
		for i, c := range line {
			switch {
			case c == ' ':
				col++
			case c == '\t':
				col += 4 - col%4
			case c == '>':
				depth++
				col++
			case listMarker(line, i) > 0:
				depth++ // a bullet; "-----" rules and underlines do not count
				if first < 0 {
					first = col
				}
				col += listMarker(line, i)
			default:
				break scan
			}
			if depth == 0 {
				indent = col
			}
		}
		blank := len(bytes.TrimSpace(line)) == 0
		switch {
		case first >= 0:
			for len(open) > 0 && open[len(open)-1] >= first {
				open = open[:len(open)-1]
			}
			depth += len(open)
			open = append(open, first)
		case !blank && prevBlank:
			for len(open) > 0 && open[len(open)-1] >= indent {
				open = open[:len(open)-1]
			}
			depth += len(open)
		case !blank:
			depth += len(open)
		}
		deepest = max(deepest, depth)
		prevBlank = blank
	}
	return deepest
}

// listMarker returns the length of the list marker at line[i] ("- ",
// "* ", "+ ", "1. ", "12) ") including the space after it, or 0.
func listMarker(line []byte, i int) int {
	j := i
	switch c := line[i]; {
	case c == '-' || c == '*' || c == '+':
		j++
	case c >= '0' && c <= '9':
		for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j == len(line) || (line[j] != '.' && line[j] != ')') {
			return 0
		}
		j++
	default:
		return 0
	}
	if j < len(line) && (line[j] != ' ' && line[j] != '\t') {
		return 0
	}
	if j == len(line) {
		return j - i
	}
	return j - i + 1
}

// Split chunks the Markdown (or MDX) document src found at path, a
// slash-separated repository-relative path used for the fallback title and
// the chunk IDs.
//
// Every top-level heading (ATX or setext, h1–h6) starts a section whose
// HeadingPath is the text of the enclosing headings, nested by level. Text
// before the first heading becomes a chunk with an empty HeadingPath when it
// is not blank. A section whose body is empty still yields a chunk, so its
// heading stays searchable, unless the next heading is one of its children:
// the child's HeadingPath already carries the parent's heading.
//
// YAML front matter is never part of any Text; its title, summary and
// read_when fields are copied onto every chunk. Title falls back to the
// first h1, then to the file name without extension.
//
// Chunk IDs are the first 16 hex digits of a SHA-256 over the path, the
// heading path, the occurrence index of that heading path in the file and
// the part index. They are stable across edits of a section's body and
// unique within the file.
//
// Chunk texts are substrings of one string per document, so a kept chunk
// keeps the document's text alive.
//
// An empty, blank or front-matter-only document yields no chunks and no
// error. The errors are ErrInvalidUTF8, ErrTooDeep and
// ErrTooManyHeadings, wrapped with the path; all are permanent.
func Split(path string, src []byte, opts Options) ([]contract.Chunk, error) {
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("chunk %s: %w", path, ErrInvalidUTF8)
	}
	return split(path, src, opts)
}

// split is Split of a src known to be valid UTF-8.
func split(path string, src []byte, opts Options) ([]contract.Chunk, error) {
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	fm, body := splitFrontMatter(normalizeNewlines(src))
	if isBlank(body) {
		return nil, nil
	}
	if depth := maxNesting(body); depth > MaxNesting {
		return nil, fmt.Errorf("chunk %s: %w (%d levels, the limit is %d)", path, ErrTooDeep, depth, MaxNesting)
	}
	if n := countHeadings(body); n > MaxHeadings {
		return nil, fmt.Errorf("chunk %s: %w (%d, the limit is %d)", path, ErrTooManyHeadings, n, MaxHeadings)
	}

	r := &renderer{parser: mdParser}
	if isMDX(path, body) {
		// MDX has no indented code blocks and treats component tags as
		// structure: strip the tags and the indentation of their content
		// before parsing, so that the content parses as Markdown.
		var b bytes.Buffer
		b.Grow(len(body))
		r.stripMarkup(&b, string(body), true)
		body = b.Bytes()
		r.mdx = true
	}
	r.text.Grow(len(body))
	r.units = make([]unit, 0, len(body)/128+8)
	doc := r.parser.Parse(text.NewReader(body))
	sections, firstH1 := r.sections(doc, body)
	all := r.text.String()

	title := fm.title
	if title == "" {
		title = firstH1
	}
	if title == "" {
		title = fileTitle(path)
	}

	chunks := make([]contract.Chunk, 0, len(sections))
	seen := make(map[string]int, len(sections))
	for _, s := range sections {
		key := pathKey(s.path)
		occ := seen[key]
		seen[key] = occ + 1
		units := r.units[s.first:s.last]
		parts := splitUnits(all, units, maxTokens)
		for part, sp := range parts {
			hp := s.path
			if part > 0 {
				hp = slices.Clone(hp) // no two chunks share a slice
			}
			chunks = append(chunks, contract.Chunk{
				ID:          chunkID(path, key, occ, part),
				Ord:         len(chunks),
				HeadingPath: hp,
				Title:       title,
				Summary:     fm.summary,
				ReadWhen:    fm.readWhen,
				Text:        all[sp.start:sp.end],
				Markdown:    partMarkdown(body, all, s, units, parts, part),
			})
		}
	}
	return chunks, nil
}

// mdParser is the goldmark parser shared by all Split calls. Like a
// compiled regular expression it is built once and never changed; goldmark
// parsers are safe for concurrent use, and building one costs more than
// parsing a small document.
var mdParser = newParser()

// newParser builds a goldmark parser with the GitHub Flavored Markdown
// extensions that change the plain text: tables, strikethrough and task
// lists. GFM's fourth, Linkify, is left out on purpose: it only turns bare
// URLs into autolinks whose label is the same text, so it would cost parse
// time for no change in the output.
func newParser() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(
		extension.Table,
		extension.Strikethrough,
		extension.TaskList,
	)).Parser()
}

// section is one heading section before it is split into parts.
type section struct {
	path        []string // heading path; nil for the preamble
	level       int      // heading level, 0 for the preamble
	first, last int      // its units are r.units[first:last]
	// mdStart and mdEnd bound its body in the source, heading line left
	// out; mdEnd is 0 when the heading's place is unknown.
	mdStart, mdEnd int
}

// sections walks the top-level blocks of doc and groups them by heading. It
// returns the sections to emit and the text of the first h1.
func (r *renderer) sections(doc ast.Node, src []byte) ([]section, string) {
	type open struct {
		level int
		text  string
	}
	var (
		out     []section
		stack   []open
		firstH1 string
		foundH1 bool
		cur     section
	)
	keep := func(next, at int) {
		cur.last = len(r.units)
		if at >= 0 && cur.mdStart >= 0 {
			cur.mdEnd = at
		}
		empty := cur.first == cur.last
		switch {
		case cur.level == 0 && empty:
			// Blank preamble.
		case cur.level > 0 && empty && next > cur.level:
			// Empty parent directly followed by its child.
		default:
			out = append(out, cur)
		}
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok {
			r.sep = sepBlock
			r.block(n, src, 0, true)
			continue
		}
		hStart, hEnd := headingLines(h, src)
		keep(h.Level, hStart)
		txt := r.headingText(h, src)
		if h.Level == 1 && !foundH1 {
			firstH1, foundH1 = txt, true
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, open{h.Level, txt})
		hp := make([]string, len(stack))
		for i, o := range stack {
			hp[i] = o.text
		}
		cur = section{path: hp, level: h.Level, first: len(r.units), mdStart: hEnd}
		r.secStart = r.text.Len()
	}
	keep(0, len(src))
	return out, firstH1
}

// headingLines returns where the source lines of the heading h start and
// end (after the newline of its last line, a setext underline included),
// or -1, -1 for an ATX heading without text, whose place goldmark does not
// record.
func headingLines(h *ast.Heading, src []byte) (int, int) {
	lines := h.Lines()
	if lines.Len() == 0 {
		return -1, -1
	}
	start := lines.At(0).Start
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end := nextLine(src, lines.At(lines.Len()-1).Stop)
	if !isATX(src[start:]) {
		end = nextLine(src, end) // the setext underline
	}
	return start, end
}

// nextLine returns the offset after the newline at or after i, or
// len(src).
func nextLine(src []byte, i int) int {
	if i > len(src) {
		return len(src)
	}
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// isATX reports whether line, a heading's first source line, is an ATX
// heading: up to three spaces, then '#'.
func isATX(line []byte) bool {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	return i < len(line) && line[i] == '#'
}

// pathKey encodes a heading path injectively: every heading is prefixed
// with its length, so no two different paths share a key.
func pathKey(hp []string) string {
	var b strings.Builder
	for _, h := range hp {
		b.WriteString(strconv.Itoa(len(h)))
		b.WriteByte(':')
		b.WriteString(h)
	}
	return b.String()
}

// chunkID derives a chunk's ID from the file path, the encoded heading path,
// the occurrence index of that heading path in the file and the part index
// within the section.
func chunkID(path, key string, occ, part int) string {
	b := make([]byte, 0, len(path)+len(key)+24)
	b = append(b, path...)
	b = append(b, 0)
	b = append(b, key...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(occ), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(part), 10)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// fileTitle is the base name of p without its extension.
func fileTitle(p string) string {
	base := path.Base(p)
	if t := strings.TrimSuffix(base, path.Ext(base)); t != "" {
		return t
	}
	return base
}

// normalizeNewlines drops a leading byte-order mark and turns CRLF and lone
// CR line endings into LF. It never modifies src in place.
func normalizeNewlines(src []byte) []byte {
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		src = src[3:]
	}
	if bytes.IndexByte(src, '\r') < 0 {
		return src
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\r' {
			if i+1 < len(src) && src[i+1] == '\n' {
				continue
			}
			c = '\n'
		}
		out = append(out, c)
	}
	return out
}

// isBlank reports whether b holds only ASCII white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
