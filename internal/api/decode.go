package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeBody decodes one JSON request body into v, rejecting unknown
// fields unless lenient. Its errors speak of the request's fields, never
// of Go types: "types: must be an array of strings", "scores: unknown
// field", "request body is not valid JSON (at byte 12)". Every HTTP
// endpoint (strict) and every NATS endpoint (lenient, as NATS clients may
// be newer than the server) decodes with it. Both refuse what checkText
// refuses.
func decodeBody(data []byte, v any, lenient bool) error {
	if err := checkText(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !lenient {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return errors.New("request body holds more than one JSON value")
		}
		return nil
	}
	return bodyError(err, reflect.TypeOf(v))
}

// checkText refuses a body that encoding/json would decode into something
// other than what was sent: invalid UTF-8 and escaped lone surrogates
// ("\ud800"), both of which it turns into U+FFFD, and an object member
// named twice, of which it keeps the last. A body that is not JSON at all
// passes, for the decoder to report in its own words.
func checkText(data []byte) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("request body is not valid UTF-8 (at byte %d)", invalidUTF8At(data))
	}
	// jsontext, the JSON text layer of encoding/json's successor, refuses
	// exactly these by default.
	err := jsontext.NewDecoder(bytes.NewReader(data)).SkipValue()
	var syn *jsontext.SyntacticError
	if !errors.As(err, &syn) {
		return nil
	}
	field := pointerField(syn.JSONPointer)
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return fmt.Errorf("%s: appears more than once", field)
	case json.Valid(data):
		// Valid UTF-8 with no repeated name, valid for encoding/json but
		// not for jsontext: the one difference left is a lone surrogate.
		return fmt.Errorf("%s: holds an escaped lone surrogate (\\ud800 to \\udfff without its pair), which is not a character (at byte %d)", field, syn.ByteOffset)
	}
	return nil // a syntax error, which the decoder words
}

// invalidUTF8At is the offset of the first byte of data that is not valid
// UTF-8.
func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// pointerField names the value at a JSON pointer as the errors of
// decodeBody do: "/tools/0/name" is "tools[0].name", the empty pointer
// "request body".
func pointerField(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 0); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	if b.Len() == 0 {
		return "request body"
	}
	return b.String()
}

// bodyError rewords a decoding error of a value of type t.
func bodyError(err error, t reflect.Type) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("request body is empty: send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("request body is not valid JSON: it ends too early")
	case errors.As(err, &syn):
		return fmt.Errorf("request body is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("request body must be %s", describe(t))
		}
		if ft := fieldType(t, typ.Field); ft != nil {
			return fmt.Errorf("%s: must be %s", typ.Field, describe(ft))
		}
		return fmt.Errorf("%s: must be %s", typ.Field, describe(typ.Type))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, err := strconv.Unquote(name); err == nil {
			name = n
		}
		return fmt.Errorf("%s: unknown field", name)
	}
	return errors.New("request body is not valid JSON for this request")
}

// fieldType returns the type of the field at the dotted JSON path within
// t, or nil.
func fieldType(t reflect.Type, path string) reflect.Type {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := jsonField(t, name)
		if !ok {
			return nil
		}
		t = f
	}
	return t
}

// jsonField finds the field named name in JSON, embedded structs included.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			if ft, ok := jsonField(f.Type, name); ok {
				return ft, true
			}
			continue
		}
		if tag == name || tag == "" && strings.EqualFold(f.Name, name) {
			return f.Type, true
		}
	}
	return nil, false
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// describe names what a JSON value of type t looks like.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return "an RFC 3339 time"
	case t == rawType:
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array of " + plural(t.Elem())
	default:
		return "an object"
	}
}

func plural(t reflect.Type) string {
	d := describe(t)
	switch {
	case d == "true or false":
		return "booleans"
	case strings.HasPrefix(d, "an array of "):
		return "arrays"
	}
	_, noun, _ := strings.Cut(d, " ") // "a string" → "string"
	return noun + "s"
}

// checkedBody gives a handler that decodes its body itself (the MCP SDK,
// with encoding/json) the checks of checkText: a body that fails them is
// a 400, one that passes reaches next as it was sent.
func checkedBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		data, ok := readBody(w, r)
		if !ok {
			return
		}
		if err := checkText(data); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		next.ServeHTTP(w, r)
	})
}

// readBody reads a body (bounded by the middleware), answering 413 or 400
// itself.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", tooBig.Limit))
			return nil, false
		}
		writeError(w, http.StatusBadRequest, fmt.Errorf("read request body: %w", err))
		return nil, false
	}
	return data, true
}
