package chunker

import (
	"strings"
	"unicode/utf8"
)

// EstimateTokens approximates how many tokens a BPE tokenizer (of the
// GPT cl100k family, say) spends on s, in one pass over its bytes and
// without allocating, meaning to err on the high side:
//
//   - a run of word characters (ASCII letters, digits, '_' and two-byte
//     UTF-8 letters such as é, ß or Cyrillic, which weigh two) costs one
//     token per six characters, rounded up: common words cost one token,
//     long identifiers several;
//   - every other ASCII character except white space (punctuation,
//     operators, control characters) costs one token;
//   - every rune of three or four UTF-8 bytes (CJK, emoji, symbols) costs
//     one token;
//   - white space is free.
//
// On the openclaw documentation this gives one token per 3.9 bytes of
// chunk text (3.6 of raw Markdown), a little more tokens than the four
// bytes per token usually quoted for English prose; it was not calibrated
// against a real tokenizer. The estimate never exceeds len(s), and it is
// additive over white space: the estimate of a text joined from parts by
// white space is the sum of the parts' estimates, which the splitter
// relies on.
func EstimateTokens(s string) int { return estimate(s) }

// byteClass classifies every byte value for estimate: 'w' word character,
// 't' lead byte of a two-byte rune, 'c' UTF-8 continuation byte, 's' white
// space, 'p' anything else (punctuation, control characters, lead bytes of
// three- and four-byte runes).
const byteClass = "" +
	"pppppppppssssspppppppppppppppppp" + // 0x00-0x1f: \t \n \v \f \r are white space
	"sppppppppppppppp" + "wwwwwwwwwwpppppp" + // 0x20-0x3f: space, punctuation, digits
	"pwwwwwwwwwwwwwww" + "wwwwwwwwwwwppppw" + // 0x40-0x5f: upper case, '_'
	"pwwwwwwwwwwwwwww" + "wwwwwwwwwwwppppp" + // 0x60-0x7f: lower case
	"cccccccccccccccccccccccccccccccc" + // 0x80-0x9f
	"cccccccccccccccccccccccccccccccc" + // 0xa0-0xbf
	"tttttttttttttttttttttttttttttttt" + // 0xc0-0xdf
	"pppppppppppppppppppppppppppppppp" // 0xe0-0xff

// estimate is EstimateTokens over a string or a byte slice.
func estimate[T string | []byte](s T) int {
	n, _ := measure(s)
	return n
}

// measure returns estimate(b) and whether writeTidy would write b
// unchanged: no blank at either end, no blank run, no blank other than a
// space or a newline. Word runs, most of any text, are scanned by a tight
// inner loop; UTF-8 continuation bytes weigh nothing and never end a run.
func measure[T string | []byte](b T) (tokens int, tidy bool) {
	n := 0
	tidy = true
	blank := true // the previous byte was blank, or there was none
	for i := 0; i < len(b); {
		c := b[i]
		switch byteClass[c] {
		case 'w', 't', 'c':
			w := 0
		run:
			for ; i < len(b); i++ {
				k := byteClass[b[i]]
				if k == 'w' {
					w++
					continue
				}
				if k == 't' {
					w += 2
				} else if k != 'c' {
					break run
				}
			}
			n += (w + 5) / 6
			blank = false
			continue
		case 's':
			if blank || (c != ' ' && c != '\n') {
				tidy = false
			}
			blank = true
		default:
			n++
			blank = false
		}
		i++
	}
	if blank && len(b) > 0 {
		tidy = false
	}
	return n, tidy
}

// counter is estimate as a running sum, for cutting inside a word.
type counter struct {
	done int // tokens of finished runs and symbols
	run  int // weight of the current word run
}

// add accounts for the next byte of the text.
func (c *counter) add(b byte) {
	switch byteClass[b] {
	case 'w':
		c.run++
	case 'c':
	case 't':
		c.run += 2
	case 's':
		c.done += (c.run + 5) / 6
		c.run = 0
	default:
		c.done += (c.run+5)/6 + 1
		c.run = 0
	}
}

// total is the estimate of the bytes added so far.
func (c *counter) total() int { return c.done + (c.run+5)/6 }

// span is a piece of a section's text ready to be packed into a chunk: a
// whole unit, or a sentence, line, word or run of runes cut from one.
type span struct {
	start, end int
	tokens     int
}

// splitUnits turns a section, given as its units (spans of text), into
// chunk texts of at most maxTokens estimated tokens each. Units are packed
// greedily in order; a unit that does not fit alone is cut first at
// sentences (prose) or lines (code), then at words, then between runes.
// Every chunk text is a substring of text, returned as its span, so the
// separators between the pieces it holds are the original ones. A section
// without units yields one empty span.
func splitUnits(text string, units []unit, maxTokens int) []span {
	if len(units) == 0 {
		return []span{{}}
	}
	total := 0
	for _, u := range units {
		total += u.tokens
	}
	if total <= maxTokens {
		return []span{{units[0].start, units[len(units)-1].end, total}}
	}
	s := splitter{text: text, max: maxTokens}
	for _, u := range units {
		switch {
		case u.tokens <= maxTokens:
			s.spans = append(s.spans, span{u.start, u.end, u.tokens})
		case u.code:
			s.lines(u.start, u.end)
		default:
			s.sentences(u.start, u.end)
		}
	}
	return s.pack()
}

// splitter cuts the units of one section that exceed the budget.
type splitter struct {
	text  string
	max   int
	spans []span
}

// pack joins spans greedily into chunk spans of at most max tokens. The
// text between two spans is white space, which costs no tokens, so a
// chunk's estimate is the sum of its spans' (two rune runs of one word
// never share a chunk: each one fills a chunk on its own).
func (s *splitter) pack() []span {
	var out []span
	start, end, cur := -1, 0, 0
	for _, sp := range s.spans {
		if start >= 0 && cur+sp.tokens > s.max {
			out = append(out, span{start, end, cur})
			start, cur = -1, 0
		}
		if start < 0 {
			start = sp.start
		}
		end = sp.end
		cur += sp.tokens
	}
	if start >= 0 {
		out = append(out, span{start, end, cur})
	}
	return out
}

// lines cuts code at line ends; blank lines only separate.
func (s *splitter) lines(start, end int) {
	for start < end {
		lineEnd, next := end, end
		if i := strings.IndexByte(s.text[start:end], '\n'); i >= 0 {
			lineEnd, next = start+i, start+i+1
		}
		s.bounded(start, lineEnd, true)
		start = next
	}
}

// sentences cuts prose after '.', '!' or '?' followed by white space, and
// at line breaks.
func (s *splitter) sentences(start, end int) {
	from := start
	for i := start; i < end; i++ {
		cut := -1
		switch c := s.text[i]; {
		case c == '\n':
			cut = i
		case (c == '.' || c == '!' || c == '?') && i+1 < end && (s.text[i+1] == ' ' || s.text[i+1] == '\n'):
			cut = i + 1
		}
		if cut >= 0 {
			s.bounded(from, cut, false)
			from = cut
		}
	}
	s.bounded(from, end, false)
}

// bounded adds text[start:end] as one span when it fits the budget, else
// its words, cutting a word that alone exceeds the budget between runes.
// Blank text adds nothing; trailing blanks are dropped, and leading ones
// too unless keepIndent is set.
func (s *splitter) bounded(start, end int, keepIndent bool) {
	for end > start && isSpace(s.text[end-1]) {
		end--
	}
	if end == start {
		return
	}
	if !keepIndent {
		for isSpace(s.text[start]) {
			start++
		}
	}
	if t := estimate(s.text[start:end]); t <= s.max {
		s.spans = append(s.spans, span{start, end, t})
		return
	}
	for i := start; i < end; {
		for i < end && isSpace(s.text[i]) {
			i++
		}
		w := i
		for i < end && !isSpace(s.text[i]) {
			i++
		}
		if w == i {
			continue
		}
		if t := estimate(s.text[w:i]); t <= s.max {
			s.spans = append(s.spans, span{w, i, t})
		} else {
			s.runes(w, i)
		}
	}
}

// runes cuts text[start:end] into the longest runs of whole runes that fit
// the budget.
func (s *splitter) runes(start, end int) {
	var c counter
	from := start
	for i := start; i < end; {
		_, size := utf8.DecodeRuneInString(s.text[i:end])
		next := c
		for k := i; k < i+size; k++ {
			next.add(s.text[k])
		}
		if next.total() > s.max && i > from {
			s.spans = append(s.spans, span{from, i, c.total()})
			from = i
			next = counter{}
			for k := i; k < i+size; k++ {
				next.add(s.text[k])
			}
		}
		c = next
		i += size
	}
	s.spans = append(s.spans, span{from, end, c.total()})
}
