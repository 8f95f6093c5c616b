package chunker

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Separators placed before a unit when units are joined into a chunk.
const (
	sepBlock = "\n\n" // before the first unit of a top-level block
	sepLine  = "\n"   // between units of one block: list items, table rows
)

// maxTagLen bounds how far a tag is scanned for its closing '>', keeping
// the scan linear on pathological input.
const maxTagLen = 1 << 10

// unit is one leaf block rendered as plain text: the largest piece the
// splitter keeps whole when it fits the token budget. It is a span of the
// rendered text; the separator before it is the text between it and the
// previous unit of its section.
type unit struct {
	start, end int
	code       bool // code is split at lines, prose at sentences
	tokens     int  // EstimateTokens of the span
	// mdStart and mdEnd bound the source lines of the unit's block in the
	// document (a fenced code block's fences included), or are -1 when
	// the unit comes from markup parsed again, whose place is not known.
	// Parts of a split section take their Markdown from them.
	mdStart, mdEnd int
	// info is a fenced code unit's info string (its language), which
	// the Markdown of each piece of a code block cut in parts repeats.
	info string
	// headStart and headEnd bound the header and delimiter rows of the
	// table a unit is a later row of, or are -1: a part that begins at
	// such a row repeats them, so that its rows still read as a table.
	headStart, headEnd int
}

// renderer turns goldmark blocks into units. It is used by one Split call
// only.
type renderer struct {
	parser parser.Parser
	// mdx is set for MDX-style documents, whose component tags were
	// stripped before parsing and whose top level may hold import and
	// export statements.
	mdx bool
	// text holds the units of all sections; a section's units are joined
	// by their separators and sections follow each other directly.
	text     strings.Builder
	units    []unit
	secStart int          // length of text when the current section began
	sep      string       // separator of the next unit
	inline   bytes.Buffer // text of the current leaf block, reused
	// mdStart, mdEnd and info describe the leaf block being rendered,
	// for the units it emits (see unit).
	mdStart, mdEnd     int
	info               string
	headStart, headEnd int
	nest               int      // depth of lists, block quotes and tables
	vals               []string // attribute values kept by the last parseTag
	// noComment and noMDXComment are lengths of a suffix of the text
	// being stripped known to hold no "-->" or "*/}", so that a run of
	// unclosed openers is scanned once, not once per opener; -1 when
	// nothing is known.
	noComment, noMDXComment int
}

// emit appends b to the section as a unit, unless it is blank. Prose is
// trimmed and its blanks collapsed; code keeps its indentation.
func (r *renderer) emit(b []byte, code bool) {
	if code {
		b = trimCode(b)
	} else {
		b = bytes.TrimSpace(b)
	}
	if len(b) == 0 {
		return
	}
	if r.text.Len() > r.secStart {
		r.text.WriteString(r.sep)
	}
	start := r.text.Len()
	var tokens int
	if code {
		tokens = estimate(b)
		r.text.Write(b)
	} else {
		// Tidying changes only white space, which costs no tokens.
		var tidy bool
		tokens, tidy = measure(b)
		if tidy {
			r.text.Write(b)
		} else {
			writeTidy(&r.text, b)
		}
	}
	r.units = append(r.units, unit{start: start, end: r.text.Len(), code: code, tokens: tokens,
		mdStart: r.mdStart, mdEnd: r.mdEnd, info: r.info, headStart: r.headStart, headEnd: r.headEnd})
	r.sep = sepLine
}

// flush emits the inline text collected so far as a prose unit.
func (r *renderer) flush() {
	r.emit(r.inline.Bytes(), false)
	r.inline.Reset()
}

// emitCode emits the lines of a code block as a code unit.
func (r *renderer) emitCode(lines *text.Segments, src []byte) {
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		r.inline.Write(seg.Value(src))
	}
	r.emit(r.inline.Bytes(), true)
	r.inline.Reset()
}

// headingText is the plain text of a heading on one line.
func (r *renderer) headingText(h *ast.Heading, src []byte) string {
	r.inlines(h, src)
	s := r.inline.String()
	r.inline.Reset()
	return strings.Join(strings.Fields(s), " ")
}

// block renders the block n of src. depth counts how often the text has
// been re-parsed from HTML or MDX content; root marks children of the
// document root, where an MDX document may hold import and export
// statements.
func (r *renderer) block(n ast.Node, src []byte, depth int, root bool) {
	if depth == 0 {
		// Only blocks of the document itself have a place in it.
		r.mdStart, r.mdEnd, r.info = -1, -1, ""
		r.headStart, r.headEnd = -1, -1
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			r.mdStart, r.mdEnd = lineSpan(n.Lines(), src)
		}
	}
	switch n := n.(type) {
	case *ast.Paragraph:
		if root && r.mdx && isESM(n, src) {
			return
		}
		r.inlines(n, src)
		r.flush()
	case *ast.TextBlock, *ast.Heading:
		r.inlines(n, src)
		r.flush()
	case *ast.FencedCodeBlock:
		if depth == 0 {
			r.fenceSpan(n, src)
		}
		r.emitCode(n.Lines(), src)
	case *ast.CodeBlock:
		r.emitCode(n.Lines(), src)
	case *ast.HTMLBlock:
		raw := linesText(n.Lines(), src)
		if n.HasClosure() {
			raw += string(n.ClosureLine.Value(src))
			if depth == 0 && r.mdStart >= 0 {
				r.mdEnd = nextLine(src, n.ClosureLine.Start)
			}
		}
		// What the markup holds is parsed again: its units share the
		// block's place.
		r.markup(raw, depth)
	case *ast.ThematicBreak:
	case *east.Table:
		r.nest++
		for row := n.FirstChild(); row != nil; row = row.NextSibling() {
			if depth == 0 {
				r.mdStart, r.mdEnd = rowSpan(row, src)
				if row == n.FirstChild() && r.mdStart >= 0 {
					// The header row, then the delimiter row below it.
					r.headStart, r.headEnd = r.mdStart, nextLine(src, r.mdEnd)
				} else if row == n.FirstChild() {
					r.headStart, r.headEnd = -1, -1
				}
			}
			for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
				r.inlines(cell, src)
				r.inline.WriteByte(' ')
			}
			r.flush()
		}
		r.nest--
	case *ast.Document:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if r.nest == 0 {
				r.sep = sepBlock
			}
			r.block(c, src, depth, false)
		}
	default: // lists, list items, block quotes
		r.nest++
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			r.block(c, src, depth, false)
		}
		r.nest--
	}
}

// lineSpan returns where the source lines of a block start and end (after
// the newline of its last line).
func lineSpan(lines *text.Segments, src []byte) (int, int) {
	start := lineStart(src, lines.At(0).Start)
	last := lines.At(lines.Len() - 1)
	end := last.Stop
	if end == 0 || end > len(src) || src[end-1] != '\n' {
		end = nextLine(src, end)
	}
	return start, end
}

// lineStart returns the offset of the start of the line holding src[i].
func lineStart(src []byte, i int) int {
	i = min(i, len(src))
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return i
}

// fenceSpan sets the place of the fenced code block n, its opening and
// closing fences included, and its info string. The opening fence is the
// line of the info string, or the line above the first line of code; the
// closing one is the line below the last, when it is a fence.
func (r *renderer) fenceSpan(n *ast.FencedCodeBlock, src []byte) {
	if n.Info != nil {
		r.info = strings.TrimSpace(string(n.Info.Segment.Value(src)))
	}
	lines := n.Lines()
	if lines.Len() == 0 {
		return
	}
	first, after := lineSpan(lines, src)
	switch {
	case n.Info != nil:
		r.mdStart = lineStart(src, n.Info.Segment.Start)
	case first > 0:
		r.mdStart = lineStart(src, first-1)
	default:
		r.mdStart = -1
		return
	}
	r.mdEnd = after
	if after < len(src) {
		line := bytes.TrimLeft(src[after:nextLine(src, after)], " \t>")
		if bytes.HasPrefix(line, []byte("```")) || bytes.HasPrefix(line, []byte("~~~")) {
			r.mdEnd = nextLine(src, after)
		}
	}
}

// rowSpan returns the place of a table row: the line of its first cell
// that has text, or -1, -1.
func rowSpan(row ast.Node, src []byte) (int, int) {
	for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
		if cell.Lines().Len() > 0 {
			seg := cell.Lines().At(0)
			return lineStart(src, seg.Start), nextLine(src, seg.Start)
		}
		for c := cell.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				return lineStart(src, t.Segment.Start), nextLine(src, t.Segment.Start)
			}
		}
	}
	return -1, -1
}

// markup renders an HTML block: tags are stripped (keeping meaningful
// attribute values), indentation is removed outside fenced code, and the
// remaining Markdown is parsed again so that its emphasis, links and code
// render like the rest of the document. A block inside re-parsed content
// is emitted as stripped text.
func (r *renderer) markup(raw string, depth int) {
	var b bytes.Buffer
	b.Grow(len(raw))
	r.stripMarkup(&b, raw, depth == 0)
	src := b.Bytes()
	if depth > 0 {
		r.emit(src, false)
		return
	}
	if isBlank(src) {
		return
	}
	r.block(r.parser.Parse(text.NewReader(src)), src, depth+1, false)
}

// inlines writes the plain text of n's inline children to r.inline.
func (r *renderer) inlines(n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if c.IsRaw() {
				r.inline.Write(v)
			} else {
				writeUnescaped(&r.inline, v)
			}
			switch {
			case c.HardLineBreak():
				r.inline.WriteByte('\n')
			case c.SoftLineBreak():
				r.inline.WriteByte(' ')
			}
		case *ast.String:
			r.inline.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				switch t := t.(type) {
				case *ast.Text:
					v := t.Segment.Value(src)
					if len(v) > 0 && v[len(v)-1] == '\n' {
						r.inline.Write(v[:len(v)-1])
						r.inline.WriteByte(' ')
					} else {
						r.inline.Write(v)
					}
				case *ast.String:
					r.inline.Write(t.Value)
				}
			}
		case *ast.AutoLink:
			r.inline.Write(c.Label(src))
		case *ast.RawHTML:
			r.rawHTML(c, src)
		case *east.TaskCheckBox:
		default: // emphasis, links, images (alt text), strikethrough
			r.inlines(c, src)
		}
	}
}

// rawHTML renders an inline HTML tag: markup tags become the values of
// their meaningful attributes, comments vanish, anything else (such as a
// <placeholder> in prose) is kept as written.
func (r *renderer) rawHTML(c *ast.RawHTML, src []byte) {
	var raw string
	if c.Segments.Len() == 1 {
		seg := c.Segments.At(0)
		raw = string(seg.Value(src))
	} else {
		raw = linesText(c.Segments, src)
	}
	r.noComment = -1
	end, strip := r.tagAt(raw, 0)
	if end == 0 || !strip {
		r.inline.WriteString(strings.ReplaceAll(raw, "\n", " "))
		return
	}
	if !isInlineElement(tagName(raw)) {
		r.inline.WriteByte(' ')
	}
	for _, v := range r.vals {
		r.inline.WriteString(v)
		r.inline.WriteByte(' ')
	}
}

// stripMarkup writes s to dst without markup tags and without indentation,
// leaving fenced code blocks and code spans untouched (a fenced block loses
// only its fence's indentation). With escape set, kept attribute values
// are backslash-escaped so that a re-parse reads them as plain text.
func (r *renderer) stripMarkup(dst *bytes.Buffer, s string, escape bool) {
	r.noComment, r.noMDXComment = -1, -1
	var f fence
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		col, body := indentOf(line)
		switch {
		case f.open:
			if f.closedBy(unquote(body)) {
				f.open = false
				dst.WriteString(body)
			} else {
				dst.WriteString(dedent(line, f.indent))
			}
			dst.WriteByte('\n')
			s = rest
		case f.opensAfterMarker(body, col):
			dst.WriteString(body)
			dst.WriteByte('\n')
			s = rest
		case strings.IndexByte(body, '<') < 0 && !strings.Contains(body, "{/*"):
			dst.WriteString(body)
			dst.WriteByte('\n')
			s = rest
		default:
			s = r.stripLine(dst, s[len(line)-len(body):], escape)
		}
	}
}

// stripLine strips tags from the first line of s and returns the text after
// it; a tag may span lines, and the line ends at the first newline outside
// one.
func (r *renderer) stripLine(dst *bytes.Buffer, s string, escape bool) string {
	hasText := false
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], "\n`<{")
		if j < 0 {
			dst.WriteString(s[i:])
			return ""
		}
		if j > 0 {
			dst.WriteString(s[i : i+j])
			hasText = hasText || strings.TrimSpace(s[i:i+j]) != ""
			i += j
		}
		switch s[i] {
		case '\n':
			dst.WriteByte('\n')
			return s[i+1:]
		case '`':
			n := runLen(s[i:], '`')
			end := i + n
			if k := closingTicks(s[end:], n); k >= 0 {
				end += k
			}
			dst.WriteString(s[i:end])
			hasText = true
			i = end
		case '{':
			// An MDX comment, {/* ... */}, vanishes.
			if rem := len(s) - i - 3; strings.HasPrefix(s[i:], "{/*") && rem > r.noMDXComment {
				if k := strings.Index(s[i+3:], "*/}"); k >= 0 {
					i += 3 + k + 3
					continue
				}
				r.noMDXComment = rem
			}
			dst.WriteByte('{')
			hasText = true
			i++
		case '<':
			end, strip := r.tagAt(s, i)
			if end == 0 || !strip {
				dst.WriteByte('<')
				hasText = true
				i++
				continue
			}
			name := tagName(s[i:end])
			i = end
			if len(r.vals) > 0 {
				// A tag that starts its line, like <Card title="X">, turns
				// into a paragraph of its kept values; inside a line the
				// values stay inline, so headings and rows stay whole.
				for _, v := range r.vals {
					if hasText {
						dst.WriteByte(' ')
					}
					if escape {
						writeEscaped(dst, v)
					} else {
						dst.WriteString(strings.Join(strings.Fields(v), " "))
					}
					if hasText {
						dst.WriteByte(' ')
					} else {
						dst.WriteString("\n\n")
					}
				}
				if !hasText {
					for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
						i++
					}
				}
				continue
			}
			if hasText && i < len(s) && !isSpace(s[i]) && s[i] != '<' && !isInlineElement(name) {
				dst.WriteByte(' ')
			}
		}
	}
	return ""
}

// tagAt scans the tag, comment or declaration starting at s[i] == '<'. It
// returns the offset just past it (0 when s[i:] is not a tag) and whether
// it is markup to strip: a comment, a JSX component (PascalCase name or
// fragment) or a known HTML element. The attribute values to keep are left
// in r.vals.
func (r *renderer) tagAt(s string, i int) (end int, strip bool) {
	r.vals = r.vals[:0]
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		if rem := len(rest) - 4; rem > r.noComment {
			if k := strings.Index(rest[4:], "-->"); k >= 0 {
				return i + 4 + k + 3, true
			}
			r.noComment = rem
		}
		return 0, false
	case strings.HasPrefix(rest, "<!"), strings.HasPrefix(rest, "<?"):
		if k := strings.IndexByte(rest[:min(len(rest), maxTagLen)], '>'); k >= 0 {
			return i + k + 1, true
		}
		return 0, false
	}
	end, name, ok := r.parseTag(s, i)
	if !ok {
		return 0, false
	}
	return end, isMarkupTag(name)
}

// parseTag parses an HTML or JSX tag at s[i] == '<': a name, attributes
// with quoted, unquoted or {expression} values, JSX spreads, an optional
// self-closing slash. It returns the offset just past '>' and the name
// ("" for a fragment). Values of kept attributes are appended to r.vals.
func (r *renderer) parseTag(s string, i int) (end int, name string, ok bool) {
	limit := min(len(s), i+maxTagLen)
	j := i + 1
	if j < limit && s[j] == '/' {
		j++
	}
	start := j
	if j < limit && isLetter(s[j]) {
		j++
		for j < limit && isNameByte(s[j]) {
			j++
		}
	}
	name = s[start:j]
	if name == "" {
		if j < limit && s[j] == '>' {
			return j + 1, "", true
		}
		return 0, "", false
	}
	if j < limit && !isSpace(s[j]) && s[j] != '>' && s[j] != '/' {
		return 0, "", false
	}
	for j < limit {
		c := s[j]
		switch {
		case c == '>':
			return j + 1, name, true
		case c == '/' || isSpace(c):
			j++
		case c == '{':
			if j = skipBraces(s, j, limit); j < 0 {
				return 0, "", false
			}
		case isLetter(c) || c == '_' || c == ':' || c == '@':
			ns := j
			for j < limit && isNameByte(s[j]) {
				j++
			}
			attr := s[ns:j]
			k := j
			for k < limit && isSpace(s[k]) {
				k++
			}
			if k >= limit || s[k] != '=' {
				continue
			}
			j = k + 1
			for j < limit && isSpace(s[j]) {
				j++
			}
			if j >= limit {
				return 0, "", false
			}
			var val string
			switch q := s[j]; q {
			case '"', '\'':
				e := strings.IndexByte(s[j+1:limit], q)
				if e < 0 {
					return 0, "", false
				}
				val = s[j+1 : j+1+e]
				j += e + 2
			case '{':
				if j = skipBraces(s, j, limit); j < 0 {
					return 0, "", false
				}
			default:
				vs := j
				for j < limit && !isSpace(s[j]) && s[j] != '>' && s[j] != '"' && s[j] != '\'' && s[j] != '`' && s[j] != '<' && s[j] != '=' {
					j++
				}
				val = s[vs:j]
			}
			if isKeptAttr(attr) && strings.TrimSpace(val) != "" {
				r.vals = append(r.vals, val)
			}
		default:
			return 0, "", false
		}
	}
	return 0, "", false
}

// skipBraces returns the offset just past the '}' matching s[i] == '{',
// skipping quoted strings, or -1 when it is not closed before limit.
func skipBraces(s string, i, limit int) int {
	depth := 0
	for j := i; j < limit; j++ {
		switch c := s[j]; c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '"', '\'', '`':
			e := strings.IndexByte(s[j+1:limit], c)
			if e < 0 {
				return -1
			}
			j += e + 1
		}
	}
	return -1
}

// tagName returns the element name of a scanned tag.
func tagName(tag string) string {
	j := 1
	if j < len(tag) && tag[j] == '/' {
		j++
	}
	start := j
	for j < len(tag) && isNameByte(tag[j]) {
		j++
	}
	return tag[start:j]
}

// isKeptAttr reports whether an attribute's value is meaningful text: the
// title of a <Card>, <Tab>, <Accordion> or <Step>, the path of a
// <ParamField>, an image's alt text, a figure's caption.
func isKeptAttr(name string) bool {
	switch name {
	case "title", "path", "alt", "caption", "label":
		return true
	}
	return false
}

// isMarkupTag reports whether a tag name is stripped: a JSX fragment, a
// JSX component (upper-case first letter and some lower-case letter, so
// that an all-caps <PLACEHOLDER> stays) or a known HTML element.
func isMarkupTag(name string) bool {
	if name == "" || isComponent(name) {
		return true
	}
	return isHTMLElement(strings.ToLower(name))
}

// isComponent reports whether name is a PascalCase JSX component name.
func isComponent(name string) bool {
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if name[i] >= 'a' && name[i] <= 'z' {
			return true
		}
	}
	return false
}

// isHTMLElement reports whether name (lower case) is a common HTML element.
func isHTMLElement(name string) bool {
	switch name {
	case "a", "abbr", "address", "article", "aside", "audio", "b", "bdi", "bdo",
		"blockquote", "body", "br", "button", "caption", "center", "cite",
		"code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl",
		"dt", "em", "embed", "figcaption", "figure", "font", "footer", "form",
		"h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "i",
		"iframe", "img", "input", "ins", "kbd", "label", "li", "main", "mark",
		"nav", "ol", "p", "picture", "pre", "q", "s", "samp", "section",
		"small", "source", "span", "strike", "strong", "sub", "summary", "sup",
		"table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt", "u",
		"ul", "var", "video", "wbr":
		return true
	}
	return false
}

// isInlineElement reports whether removing the tag name must not separate
// the words around it, as for <b>bold</b>.
func isInlineElement(name string) bool {
	switch strings.ToLower(name) {
	case "a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em",
		"font", "i", "ins", "kbd", "mark", "q", "s", "samp", "small", "span",
		"strike", "strong", "sub", "sup", "time", "tt", "u", "var":
		return true
	}
	return false
}

// isMDX reports whether a document is MDX-style: an .mdx file, or one
// with a line, outside fenced code and indented less than four columns
// (deeper, it could be an indented code block showing JSX), that starts
// with a JSX component tag such as <Note> or </Tab>.
func isMDX(p string, src []byte) bool {
	if strings.EqualFold(path.Ext(p), ".mdx") {
		return true
	}
	var f fence
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		j := 0
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		if j == len(line) {
			continue
		}
		switch c := line[j]; {
		case c == '`' || c == '~':
			body := string(line[j:])
			if f.open {
				if f.closedBy(body) {
					f.open = false
				}
			} else {
				f.opens(body, j)
			}
		case c == '<' && !f.open && j <= 3:
			name := bytes.TrimPrefix(line[j+1:], []byte{'/'})
			k := 0
			for k < len(name) && isNameByte(name[k]) {
				k++
			}
			if isComponent(string(name[:k])) {
				return true
			}
		}
	}
	return false
}

// isESM reports whether a top-level paragraph is an MDX import or export
// statement.
func isESM(p *ast.Paragraph, src []byte) bool {
	if p.Lines().Len() == 0 {
		return false
	}
	seg := p.Lines().At(0)
	line := seg.Value(src)
	if rest, ok := bytes.CutPrefix(line, []byte("import ")); ok {
		rest = bytes.TrimSpace(rest)
		return bytes.Contains(rest, []byte(" from ")) || (len(rest) > 0 && bytes.IndexByte([]byte(`{*"'`), rest[0]) >= 0)
	}
	if rest, ok := bytes.CutPrefix(line, []byte("export ")); ok {
		for _, kw := range [...]string{"const ", "let ", "var ", "function ", "function*", "default ", "class ", "async ", "{", "*"} {
			if bytes.HasPrefix(rest, []byte(kw)) {
				return true
			}
		}
	}
	return false
}

// fence tracks a fenced code block inside raw markup.
type fence struct {
	open   bool
	char   byte
	n      int // length of the opening run
	indent int // columns of indentation of the opening fence
}

// opens reports whether body, indented by col columns, opens a fenced code
// block, and records it.
func (f *fence) opens(body string, col int) bool {
	if body == "" || (body[0] != '`' && body[0] != '~') {
		return false
	}
	n := runLen(body, body[0])
	if n < 3 || (body[0] == '`' && strings.IndexByte(body[n:], '`') >= 0) {
		return false
	}
	*f = fence{open: true, char: body[0], n: n, indent: col}
	return true
}

// opensAfterMarker is opens for a line that may start with block quote
// markers and a list marker, as in "- ```bash".
func (f *fence) opensAfterMarker(body string, col int) bool {
	if body == "" || (body[0] != '`' && body[0] != '~' && body[0] != '>' && body[0] != '-' &&
		body[0] != '*' && body[0] != '+' && (body[0] < '0' || body[0] > '9')) {
		return false
	}
	rest := unquote(body)
	if len(rest) > 0 && rest[0] != '`' && rest[0] != '~' {
		rest = strings.TrimLeft(skipListMarker(rest), " ")
	}
	return f.opens(rest, col+len(body)-len(rest))
}

// unquote drops leading block quote markers ("> ") from a line.
func unquote(body string) string {
	for strings.HasPrefix(body, ">") {
		body = strings.TrimLeft(body[1:], " ")
	}
	return body
}

// skipListMarker drops a leading list marker ("- ", "* ", "+ ", "1. ",
// "1) ") from a line, or returns it unchanged.
func skipListMarker(body string) string {
	if len(body) >= 2 && (body[0] == '-' || body[0] == '*' || body[0] == '+') && body[1] == ' ' {
		return body[2:]
	}
	n := 0
	for n < len(body) && n < 9 && body[n] >= '0' && body[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(body) && (body[n] == '.' || body[n] == ')') && body[n+1] == ' ' {
		return body[n+2:]
	}
	return body
}

// closedBy reports whether body closes the open fence.
func (f *fence) closedBy(body string) bool {
	n := runLen(body, f.char)
	return n >= f.n && strings.TrimSpace(body[n:]) == ""
}

// indentOf returns the indentation of line in columns (tabs stop every four
// columns) and the line without it.
func indentOf(line string) (int, string) {
	col := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col, line[i:]
		}
	}
	return col, ""
}

// dedent removes up to cols columns of indentation from line.
func dedent(line string, cols int) string {
	col := 0
	i := 0
	for ; i < len(line) && col < cols; i++ {
		switch line[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return line[i:]
		}
	}
	return line[i:]
}

// runLen counts the leading bytes of s equal to c.
func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingTicks finds a run of exactly n backticks on the first line of s
// and returns the offset just past it, or -1.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s) && s[i] != '\n'; {
		if s[i] != '`' {
			i++
			continue
		}
		m := runLen(s[i:], '`')
		if m == n {
			return i + m
		}
		i += m
	}
	return -1
}

// linesText concatenates the segments of a block's lines.
func linesText(lines *text.Segments, src []byte) string {
	var b strings.Builder
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// writeUnescaped writes Markdown text with backslash escapes and entity
// and numeric character references resolved.
func writeUnescaped(dst *bytes.Buffer, v []byte) {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		dst.Write(v)
		return
	}
	for i := 0; i < len(v); {
		c := v[i]
		if c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]) {
			dst.WriteByte(v[i+1])
			i += 2
			continue
		}
		if c == '&' {
			if n := writeReference(dst, v[i:]); n > 0 {
				i += n
				continue
			}
		}
		dst.WriteByte(c)
		i++
	}
}

// writeReference decodes the character reference at the start of v
// ("&amp;", "&#35;", "&#x23;"), writes it and returns its length, or
// returns 0 when v does not start with a valid reference.
func writeReference(dst *bytes.Buffer, v []byte) int {
	semi := bytes.IndexByte(v[:min(len(v), 40)], ';')
	if semi < 2 {
		return 0
	}
	ref := v[1:semi]
	if ref[0] != '#' {
		for _, c := range ref {
			if !util.IsAlphaNumeric(c) {
				return 0
			}
		}
		e, ok := util.LookUpHTML5EntityByName(string(ref))
		if !ok {
			return 0
		}
		dst.Write(e.Characters)
		return semi + 1
	}
	digits, base := ref[1:], 10
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 7 {
		return 0
	}
	var cp rune
	for _, c := range digits {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0
		}
		cp = cp*rune(base) + d
	}
	var buf [utf8.UTFMax]byte
	dst.Write(buf[:utf8.EncodeRune(buf[:], util.ToValidRune(cp))])
	return semi + 1
}

// writeEscaped writes an attribute value on one line with its ASCII
// punctuation backslash-escaped, so Markdown parsing keeps it literal.
func writeEscaped(dst *bytes.Buffer, v string) {
	for i, f := range strings.Fields(v) {
		if i > 0 {
			dst.WriteByte(' ')
		}
		for j := 0; j < len(f); j++ {
			if util.IsPunct(f[j]) {
				dst.WriteByte('\\')
			}
			dst.WriteByte(f[j])
		}
	}
}

// writeTidy writes trimmed prose with every line trimmed, runs of blanks
// collapsed into one space and empty lines dropped.
func writeTidy(dst *strings.Builder, b []byte) {
	space, newline := false, false
	wrote := false
	for _, c := range b {
		switch {
		case c == '\n':
			newline = wrote
			space = false
		case isSpace(c):
			space = wrote
		default:
			if newline {
				dst.WriteByte('\n')
			} else if space {
				dst.WriteByte(' ')
			}
			newline, space = false, false
			dst.WriteByte(c)
			wrote = true
		}
	}
}

// trimCode drops blank lines around code and trailing blanks, keeping the
// indentation of its first line.
func trimCode(b []byte) []byte {
	b = bytes.TrimRight(b, " \t\n\r\f\v")
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || len(bytes.TrimSpace(b[:i])) > 0 {
			break
		}
		b = b[i+1:]
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
}

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isNameByte reports whether c may continue a tag or attribute name.
func isNameByte(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == ':'
}
