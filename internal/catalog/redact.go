package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/knowhub/knowhub/internal/contract"
)

// Redactor replaces secrets in text; *redact.Redactor is one.
type Redactor interface {
	String(s string) string
}

// Redact replaces, in place, the secrets in every string of the tools
// that is text: the description, the keywords and every string of the
// input schema (property names, descriptions, enum values, defaults,
// examples), which stays valid JSON and keeps its order. A schema that is
// not JSON is left for Validate to refuse.
//
// A name or an instance is an identifier that callers bind to and filter
// on: redacted, it would name another tool. One that holds a secret is
// an error naming the tool by its index and redacted name, never by the
// secret, and Redact changes nothing then.
func Redact(tools []contract.Tool, red Redactor) error {
	var errs []error
	for i := range tools {
		t := &tools[i]
		if name := red.String(t.Name); name != t.Name {
			errs = append(errs, fmt.Errorf("tools[%d] (%q).name: holds a secret; a tool's name is the identifier agents call it by and is never stored redacted", i, name))
		}
		if inst := red.String(t.Instance); inst != t.Instance {
			errs = append(errs, fmt.Errorf("tools[%d] (%q).instance: holds a secret; an instance is an identifier and is never stored redacted", i, red.String(t.Name)))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for i := range tools {
		redactTool(&tools[i], red)
	}
	return nil
}

// redactTool replaces the secrets in t's text, leaving its name and
// instance as they are.
func redactTool(t *contract.Tool, red Redactor) {
	t.Description = red.String(t.Description)
	if len(t.Keywords) > 0 {
		kws := make([]string, len(t.Keywords))
		for k, kw := range t.Keywords {
			kws[k] = red.String(kw)
		}
		t.Keywords = kws
	}
	if len(t.InputSchema) > 0 {
		if s, err := mapStrings(t.InputSchema, red.String); err == nil {
			t.InputSchema = s
		}
	}
}

// mapStrings returns raw with fn applied to every string, object keys
// included; raw itself when fn changes none. The output is compact JSON
// with the input's keys in the input's order.
func mapStrings(raw json.RawMessage, fn func(string) string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	// One frame per open object or array: whether it is an object and
	// how many keys and values it has had so far.
	type frame struct {
		obj bool
		n   int
	}
	var stack []frame
	changed := false
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		switch {
		case f.obj && f.n%2 == 1:
			out.WriteByte(':')
		case f.n > 0:
			out.WriteByte(',')
		}
		f.n++
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				sep()
				stack = append(stack, frame{obj: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			out.WriteByte(byte(v))
		case string:
			sep()
			s := fn(v)
			changed = changed || s != v
			if err := enc.Encode(s); err != nil {
				return nil, err
			}
			out.Truncate(out.Len() - 1) // Encode's newline
		case json.Number:
			sep()
			out.WriteString(v.String())
		case bool:
			sep()
			fmt.Fprint(&out, v)
		case nil:
			sep()
			out.WriteString("null")
		}
	}
	if !changed {
		return raw, nil
	}
	return out.Bytes(), nil
}
