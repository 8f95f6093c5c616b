package highlight

import "strings"

// ANSI bold on and off (normal intensity), the styles a terminal shows a
// matched word in.
const (
	ansiBold   = "\x1b[1m"
	ansiNormal = "\x1b[22m"
)

// Terminal renders a snippet marked as **word** for a reader rather than
// a Markdown renderer: with ansi, each marked span in bold; without, the
// marks removed. An odd mark (text that held "**" itself) is left as it
// stands.
func Terminal(marked string, ansi bool) string {
	parts := strings.Split(marked, "**")
	if len(parts)%2 == 0 { // an unpaired mark: not ours to read
		return marked
	}
	var b strings.Builder
	b.Grow(len(marked) + len(parts)*4)
	for i, p := range parts {
		if i%2 == 1 && ansi {
			b.WriteString(ansiBold)
			b.WriteString(p)
			b.WriteString(ansiNormal)
			continue
		}
		b.WriteString(p)
	}
	return b.String()
}
