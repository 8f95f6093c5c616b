package eval

import (
	"bytes"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// StripFrontMatter returns src with the named top-level keys, and their
// values, removed from its YAML front matter (a block fenced by "---"
// lines at the very start; the closing fence may also be "..."). Every
// other byte is kept as it was, so the rest of the front matter and the
// body index exactly as before. A document without front matter, or with
// none of the keys, is returned unchanged. Front matter that is not valid
// YAML, or whose root is not a mapping, is an error: the keys could not be
// found, so the document cannot be guaranteed free of them.
func StripFrontMatter(src []byte, keys []string) ([]byte, error) {
	if len(keys) == 0 {
		return src, nil
	}
	yml, start, end, ok := frontMatterBlock(src)
	if !ok {
		return src, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		return nil, fmt.Errorf("parse front matter: %w", err)
	}
	if len(doc.Content) == 0 {
		return src, nil // empty or comment-only front matter
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return src, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("parse front matter: not a mapping")
	}
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	// A key's entry runs from its line to the line before the next key;
	// the last one runs to the end of the front matter. Keys of the root
	// mapping start lines of their own (flow mappings aside, which are
	// rejected below when a key to drop is inside one).
	lines := bytes.SplitAfter(yml, []byte{'\n'})
	removed := make([]bool, len(lines))
	changed := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !drop[k.Value] {
			continue
		}
		if root.Style&yaml.FlowStyle != 0 {
			return nil, fmt.Errorf("strip front matter key %q: flow-style front matter is not supported", k.Value)
		}
		from := k.Line - 1
		to := len(lines)
		if i+2 < len(root.Content) {
			to = root.Content[i+2].Line - 1
		}
		if from < 0 || from >= to || to > len(lines) {
			return nil, fmt.Errorf("strip front matter key %q: unexpected layout", k.Value)
		}
		for l := from; l < to; l++ {
			removed[l] = true
		}
		changed = true
	}
	if !changed {
		return src, nil
	}
	out := make([]byte, 0, len(src))
	out = append(out, src[:start]...)
	for i, l := range lines {
		if !removed[i] {
			out = append(out, l...)
		}
	}
	if len(out) > start && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, src[end:]...)
	return out, nil
}

// frontMatterBlock finds the front matter of src: yml is the text between
// the fences, src[start:end] holds it, and src[end:] starts with the
// closing fence. Line ends may be "\n" or "\r\n".
func frontMatterBlock(src []byte) (yml []byte, start, end int, ok bool) {
	first, _, found := bytes.Cut(src, []byte{'\n'})
	if !found || !isFence(first, "---") {
		return nil, 0, 0, false
	}
	start = len(first) + 1
	for off := start; off < len(src); {
		line, _, _ := bytes.Cut(src[off:], []byte{'\n'})
		if isFence(line, "---") || isFence(line, "...") {
			return src[start:off], start, off, true
		}
		off += len(line) + 1
	}
	return nil, 0, 0, false
}

// isFence reports whether line is fence, optionally followed by blanks
// and a carriage return, as the chunker reads it.
func isFence(line []byte, fence string) bool {
	return bytes.HasPrefix(line, []byte(fence)) && len(bytes.TrimRight(line[len(fence):], " \t\r")) == 0
}
