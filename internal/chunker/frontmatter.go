package chunker

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// frontMatter holds the searchable fields of a document's YAML front matter.
type frontMatter struct {
	title    string
	summary  string
	readWhen string
}

// splitFrontMatter separates a leading YAML front matter block, fenced by a
// "---" line at the very start and a later "---" or "..." line, from the
// Markdown body. Front matter that is not valid YAML, or not a mapping, is
// treated as absent but is still cut from the body. Without a closing fence
// there is no front matter.
func splitFrontMatter(src []byte) (frontMatter, []byte) {
	first, rest, ok := bytes.Cut(src, []byte{'\n'})
	if !ok || !isFence(first, "---") {
		return frontMatter{}, src
	}
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte{'\n'})
		if isFence(line, "---") || isFence(line, "...") {
			body := rest[min(off+len(line)+1, len(rest)):]
			return parseFrontMatter(rest[:off]), body
		}
		off += len(line) + 1
	}
	return frontMatter{}, src
}

// isFence reports whether line is fence, optionally followed by blanks.
func isFence(line []byte, fence string) bool {
	return bytes.HasPrefix(line, []byte(fence)) && len(bytes.TrimRight(line[len(fence):], " \t")) == 0
}

// parseFrontMatter decodes the fields Split copies onto chunks. It never
// fails: front matter that is not valid YAML, or not a mapping, yields
// empty fields. The common simple shape is read by quickFrontMatter;
// anything else goes to the YAML parser.
func parseFrontMatter(yml []byte) frontMatter {
	if fm, ok := quickFrontMatter(yml); ok {
		return fm
	}
	return decodeFrontMatter(yml)
}

// maxMergeFrontMatter bounds the front matter with YAML merge keys that is
// handed to the YAML decoder, whose duplicate-key check is quadratic.
const maxMergeFrontMatter = 4 << 10

// decodeFrontMatter parses front matter into a YAML node tree and reads the
// root mapping itself, in linear time. It gives the same result as
// yaml.Unmarshal into a struct (referenceFrontMatter): a root that is not a
// mapping, or a root mapping with a repeated key, yields empty fields.
// Front matter using merge keys ("<<") goes to that decoder when small and
// is otherwise ignored. A panic inside the YAML parser yields empty fields.
func decodeFrontMatter(yml []byte) (fm frontMatter) {
	defer func() {
		if recover() != nil {
			fm = frontMatter{}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		return frontMatter{}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return frontMatter{}
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return frontMatter{}
	}
	if root.Kind != yaml.MappingNode {
		return frontMatter{}
	}
	type key struct {
		kind  yaml.Kind
		value string
	}
	seen := make(map[key]bool, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind == yaml.ScalarNode && (k.Tag == "!!merge" || (k.Value == "<<" && k.Style == 0)) {
			if len(yml) > maxMergeFrontMatter {
				return frontMatter{}
			}
			return referenceFrontMatter(yml)
		}
		if seen[key{k.Kind, k.Value}] {
			return frontMatter{}
		}
		seen[key{k.Kind, k.Value}] = true
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!binary" {
			continue
		}
		switch k.Value {
		case "title":
			fm.title = nodeText(v)
		case "summary":
			fm.summary = nodeText(v)
		case "read_when":
			fm.readWhen = nodeText(v)
		}
	}
	return fm
}

// referenceFrontMatter decodes front matter with yaml.Unmarshal into a
// struct: the reference decodeFrontMatter follows, used directly only for
// merge keys.
func referenceFrontMatter(yml []byte) (fm frontMatter) {
	defer func() {
		if recover() != nil {
			fm = frontMatter{}
		}
	}()
	var raw struct {
		Title    yaml.Node `yaml:"title"`
		Summary  yaml.Node `yaml:"summary"`
		ReadWhen yaml.Node `yaml:"read_when"`
	}
	if err := yaml.Unmarshal(yml, &raw); err != nil {
		return frontMatter{}
	}
	return frontMatter{
		title:    nodeText(&raw.Title),
		summary:  nodeText(&raw.Summary),
		readWhen: nodeText(&raw.ReadWhen),
	}
}

// nodeText renders a scalar as its trimmed value and a sequence as its
// scalar items joined by newlines. Anything else is empty.
func nodeText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return ""
		}
		return strings.TrimSpace(n.Value)
	case yaml.SequenceNode:
		var items []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				continue
			}
			if v := strings.TrimSpace(c.Value); v != "" {
				items = append(items, v)
			}
		}
		return strings.Join(items, "\n")
	case yaml.AliasNode:
		if n.Alias != nil && n.Alias.Kind != yaml.AliasNode {
			return nodeText(n.Alias)
		}
	}
	return ""
}

// quickFrontMatter reads, without the YAML decoder, front matter made only
// of top-level "key: value" lines whose value is a one-line plain or quoted
// scalar, or empty and followed by a block sequence of such scalars or, for
// a key Split does not read (such as a translation tool's metadata), by a
// block mapping of "key: scalar" lines, with comment and blank lines. A
// repeated key makes the front matter invalid, as for the YAML decoder. It reports false for anything else, so that the
// YAML parser decides; where it reports true it agrees with
// decodeFrontMatter (FuzzFrontMatter checks this).
func quickFrontMatter(yml []byte) (frontMatter, bool) {
	if !yamlSafe(yml) {
		return frontMatter{}, false
	}
	var (
		fm       frontMatter
		keys     = make(map[string]bool)
		field    *string  // field receiving the current sequence
		items    []string // items of the current sequence
		seqOpen  bool     // the last key had an empty value
		seqInd   = -1     // indentation of the current sequence's items
		mapInd   = -1     // indentation of the current nested mapping's keys
		mapKeys  = make(map[string]bool)
		endValue = func() {
			if field != nil && len(items) > 0 {
				*field = strings.Join(items, "\n")
			}
			field, items, seqOpen, seqInd, mapInd = nil, nil, false, -1, -1
			clear(mapKeys)
		}
	)
	for len(yml) > 0 {
		line := yml
		if i := bytes.IndexByte(yml, '\n'); i >= 0 {
			line, yml = yml[:i], yml[i+1:]
		} else {
			yml = nil
		}
		trimmed := bytes.TrimLeft(line, " ")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		ind := len(line) - len(trimmed)
		if trimmed[0] == '-' && seqOpen {
			if seqInd >= 0 && ind != seqInd {
				return frontMatter{}, false
			}
			seqInd = ind
			rest, ok := bytes.CutPrefix(trimmed, []byte("- "))
			if !ok {
				return frontMatter{}, false
			}
			v, ok := quickScalar(rest)
			if !ok {
				return frontMatter{}, false
			}
			if v != "" {
				items = append(items, v)
			}
			continue
		}
		if ind != 0 {
			// A nested mapping, only under a key whose value is not read.
			switch {
			case field != nil || seqInd >= 0:
				return frontMatter{}, false
			case mapInd < 0 && seqOpen:
				mapInd, seqOpen = ind, false // no sequence may follow
			case mapInd < 0 || ind != mapInd:
				return frontMatter{}, false
			}
			key, val, ok := quickKey(trimmed)
			if !ok || len(val) == 0 || mapKeys[key] {
				return frontMatter{}, false
			}
			mapKeys[key] = true
			if _, ok := quickScalar(val); !ok {
				return frontMatter{}, false
			}
			continue
		}
		endValue()
		key, val, ok := quickKey(line)
		if !ok {
			return frontMatter{}, false
		}
		if keys[key] {
			return frontMatter{}, true // a repeated root key makes it invalid
		}
		keys[key] = true
		var dst *string
		switch key {
		case "title":
			dst = &fm.title
		case "summary":
			dst = &fm.summary
		case "read_when":
			dst = &fm.readWhen
		}
		if len(val) == 0 {
			field, seqOpen = dst, true
			continue
		}
		v, ok := quickScalar(val)
		if !ok {
			return frontMatter{}, false
		}
		if dst != nil {
			*dst = v
		}
	}
	endValue()
	return fm, true
}

// quickKey splits a "key: value" line whose key is a plain word that the
// decoder reads as a string, and returns the trimmed value.
func quickKey(line []byte) (key string, val []byte, ok bool) {
	k := 0
	for k < len(line) && (isLetter(line[k]) || (line[k] >= '0' && line[k] <= '9') || line[k] == '_' || line[k] == '-') {
		k++
	}
	if k == 0 || k == len(line) || line[k] != ':' || (k+1 < len(line) && line[k+1] != ' ') || !isLetter(line[0]) {
		return "", nil, false
	}
	key = string(line[:k])
	switch strings.ToLower(key) {
	case "true", "false", "null", "y", "n", "yes", "no", "on", "off":
		return "", nil, false // keys the decoder may resolve to non-strings
	}
	return key, bytes.TrimSpace(line[k+1:]), true
}

// quickScalar reads a one-line scalar: plain (not starting with a YAML
// indicator, without ": ", " #" or a trailing ':'), or double-quoted
// without escapes, or single-quoted without quotes inside. A null plain
// scalar reads as empty.
func quickScalar(v []byte) (string, bool) {
	v = bytes.Trim(v, " ")
	if len(v) == 0 {
		return "", false
	}
	switch q := v[0]; q {
	case '"', '\'':
		if len(v) < 2 || v[len(v)-1] != q {
			return "", false
		}
		inner := v[1 : len(v)-1]
		if bytes.IndexByte(inner, q) >= 0 || bytes.IndexByte(inner, '\\') >= 0 {
			return "", false
		}
		return strings.TrimSpace(string(inner)), true
	}
	if bytes.IndexByte([]byte("-?:,[]{}#&*!|>%@`"), v[0]) >= 0 ||
		bytes.Contains(v, []byte(": ")) || bytes.Contains(v, []byte(" #")) || v[len(v)-1] == ':' {
		return "", false
	}
	switch string(v) {
	case "~", "null", "Null", "NULL":
		return "", true
	}
	return string(v), true
}

// yamlSafe reports whether yml holds no character the YAML decoder treats
// specially beyond the quick reader's grammar: tabs, control characters,
// byte-order marks, and the Unicode line breaks NEL, LS and PS.
func yamlSafe(yml []byte) bool {
	for i := 0; i < len(yml); {
		c := yml[i]
		if c < utf8.RuneSelf {
			if (c < ' ' && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(yml[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r >= 0xFFFE && r <= 0xFFFF:
			return false
		}
		i += size
	}
	return true
}
