package chunker

import (
	"strings"
)

// partMarkdown returns the Markdown of part i of section s, whose units
// were split into parts (spans of all, the document's text). A section
// kept whole has its body as written. A section split in parts has its
// source cut where its text is cut, at the start of the block that opens
// each part, so that every part's Markdown holds the blocks of its Text,
// with what lies between them (a rule, a comment) kept with the block
// before.
//
// A block cut in parts because it alone exceeds the budget is cut as its
// text is: a code block at lines, each piece fenced again with the
// block's info string (language) so that every part holds a closed code
// block; a paragraph, list item or table row at sentences or words, each
// piece as its plain text. The Markdown is "" when the section's place in
// the source is not known, or a cut falls in a block whose place is not
// (one parsed again from HTML); its Text then stands alone.
func partMarkdown(body []byte, all string, s section, units []unit, parts []span, i int) string {
	if s.mdStart < 0 || s.mdEnd <= s.mdStart {
		return ""
	}
	if len(parts) == 1 {
		return strings.TrimSpace(string(body[s.mdStart:s.mdEnd]))
	}
	p := parts[i]
	var b mdBuilder
	from := s.mdStart // where the source of the part begins
	head := ""        // a table's header rows, repeated
	if i > 0 {
		u := unitAt(units, p.start)
		if u == nil {
			return ""
		}
		// A part that begins past u's start holds a piece of u cut in
		// parts when the part before it holds some of u too; else it
		// holds u's beginning (leading blanks dropped).
		inside := p.start > u.start && parts[i-1].end > u.start
		switch {
		case !inside && u.mdStart >= 0:
			from = u.mdStart
			if u.headStart >= 0 && u.headEnd <= u.mdStart {
				head = string(body[u.headStart:u.headEnd])
			}
		case !inside:
			return ""
		default: // the part begins inside u, cut in parts
			if u.mdEnd < 0 {
				return ""
			}
			b.add(piece(u, all[p.start:min(p.end, u.end)]))
			if p.end <= u.end {
				return b.String()
			}
			from = u.mdEnd
		}
	}
	to, tail := s.mdEnd, (*unit)(nil) // where the source of the part ends
	if i < len(parts)-1 {
		next := parts[i+1].start
		u := unitAt(units, next)
		if u == nil || u.mdStart < 0 {
			return ""
		}
		to = u.mdStart
		if next > u.start && p.end > u.start { // the next part begins inside u
			tail = u
		}
	}
	if from < to {
		b.add(head + string(body[from:to]))
	}
	if tail != nil {
		b.add(piece(tail, all[max(p.start, tail.start):p.end]))
	}
	return b.String()
}

// mdBuilder joins pieces of Markdown as blocks, one blank line apart.
type mdBuilder struct{ strings.Builder }

// add appends a piece, dropping the blank lines around it.
func (b *mdBuilder) add(s string) {
	s = strings.TrimRight(s, " \t\n")
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(s)
}

// unitAt returns the unit whose text holds offset at, or nil.
func unitAt(units []unit, at int) *unit {
	for k := range units {
		if units[k].start <= at && at < units[k].end {
			return &units[k]
		}
	}
	return nil
}

// piece returns a piece of the text of u, a block cut in parts, as
// Markdown: code fenced again with u's info string, prose as it is.
func piece(u *unit, text string) string {
	if !u.code {
		return text
	}
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + u.info + "\n" + text + "\n" + fence
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
