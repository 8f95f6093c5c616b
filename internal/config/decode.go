package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// FieldError is one problem with one field of the configuration. Field is
// the location in JSON terms ("repositories[1].priority"); it is empty for
// the document itself.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// errs collects FieldErrors in the order they are found.
type errs []error

func (e *errs) add(field, format string, args ...any) {
	*e = append(*e, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
}

func (e errs) err() error { return errors.Join(e...) }

// stage adds the problems a stage's own Validate found, each phrased
// "key: problem", under the stage's object in the file.
func (e *errs) stage(object string, err error) {
	if err == nil {
		return
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, one := range list {
		key, problem, ok := strings.Cut(one.Error(), ": ")
		if !ok {
			key, problem = "", one.Error()
		}
		*e = append(*e, &FieldError{Field: joinPath(object, key), Problem: problem})
	}
}

// removed names the keys that earlier versions accepted, with what an
// operator should do instead: rejected with that message rather than as an
// unknown field.
var removed = map[string]string{
	"query.allProcessors": "no longer exists: knowhub keeps the runtime's processors; set the GOMAXPROCS environment variable to limit them",
}

// defaulter is implemented by slice elements that have defaults of their
// own; the decoder calls it on each new element before filling it in.
type defaulter interface{ applyDefaults() }

// decodeStrict overlays the JSON document data onto v, a pointer to a
// struct. Unlike encoding/json it reports every problem rather than the
// first, names each by its location, rejects unknown and repeated keys,
// and words type errors for a person ("must be an integer").
func decodeStrict(data []byte, v any) error {
	var probe json.RawMessage // checks syntax only
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return &FieldError{Problem: fmt.Sprintf("line %d, column %d: %v", line, col, se)}
		}
		return &FieldError{Problem: err.Error()}
	}
	var e errs
	decodeValue(&e, "", bytes.TrimSpace(data), reflect.ValueOf(v).Elem())
	return e.err()
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// decodeValue decodes raw, already known to be valid JSON, into v.
func decodeValue(e *errs, path string, raw json.RawMessage, v reflect.Value) {
	if string(raw) == "null" {
		return // null keeps the current (default) value
	}
	switch v.Kind() {
	case reflect.Struct:
		decodeStruct(e, path, raw, v)
	case reflect.Slice:
		decodeSlice(e, path, raw, v)
	case reflect.String:
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			e.add(path, "must be a string")
			return
		}
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, v.Type().Bits())
		switch {
		case errors.Is(err, strconv.ErrRange):
			e.add(path, "is out of range")
		case err != nil:
			e.add(path, "must be an integer")
		default:
			v.SetInt(n)
		}
	case reflect.Bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			e.add(path, "must be true or false")
			return
		}
		v.SetBool(b)
	default:
		// Not used by Config; kept so a new field type fails loudly in
		// tests rather than being skipped.
		if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
			e.add(path, "invalid value: %v", err)
		}
	}
}

func decodeStruct(e *errs, path string, raw json.RawMessage, v reflect.Value) {
	if raw[0] != '{' {
		if path == "" {
			e.add(path, "the configuration must be a JSON object")
		} else {
			e.add(path, "must be an object")
		}
		return
	}
	fields := jsonFields(v.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		e.add(path, "%v", err)
		return
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			e.add(path, "%v", err)
			return
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			e.add(path, "%v", err)
			return
		}
		idx, ok := fields[key]
		if gone, was := removed[joinPath(path, key)]; !ok && was {
			e.add(joinPath(path, key), "%s", gone)
			continue
		}
		if !ok {
			e.add(path, "unknown field %q%s", key, suggest(fields, key))
			continue
		}
		sub := joinPath(path, key)
		if seen[key] {
			e.add(sub, "appears more than once")
			continue
		}
		seen[key] = true
		decodeValue(e, sub, bytes.TrimSpace(val), v.FieldByIndex(idx))
	}
}

func decodeSlice(e *errs, path string, raw json.RawMessage, v reflect.Value) {
	var elems []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		e.add(path, "must be an array")
		return
	}
	out := reflect.MakeSlice(v.Type(), len(elems), len(elems))
	for i, el := range elems {
		item := out.Index(i)
		if d, ok := item.Addr().Interface().(defaulter); ok {
			d.applyDefaults()
		}
		decodeValue(e, fmt.Sprintf("%s[%d]", path, i), bytes.TrimSpace(el), item)
	}
	v.Set(out)
}

// jsonFields maps the JSON names of t's exported fields to their indexes.
func jsonFields(t reflect.Type) map[string][]int {
	m := make(map[string][]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			// An embedded stage configuration: its keys are this
			// object's, as encoding/json reads them.
			for k, idx := range jsonFields(f.Type) {
				if _, ok := m[k]; !ok {
					m[k] = append([]int{i}, idx...)
				}
			}
			continue
		}
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = []int{i}
	}
	return m
}

// suggest names the field that key differs from only in case.
func suggest(fields map[string][]int, key string) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	return ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
