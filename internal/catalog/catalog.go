// Package catalog is the pure core of the tools collection: validation of
// tool descriptors and their analysis into index documents.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/semantic"
)

// Limits on descriptors.
const (
	MaxBatch          = 1000
	MaxNameBytes      = 128
	MaxInstanceBytes  = 128
	MaxDescBytes      = 8 << 10
	MaxKeywords       = 32
	MaxKeywordBytes   = 64
	MaxInputSchemaLen = 64 << 10
)

// Validate checks a batch of tools and returns every problem found, each
// naming the tool and the field, or nil.
func Validate(tools []contract.Tool) error {
	var errs []error
	add := func(i int, name, field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("tools[%d] (%q).%s: %s", i, name, field, fmt.Sprintf(format, args...)))
	}
	if len(tools) == 0 {
		return errors.New("tools: at least one tool is required")
	}
	if len(tools) > MaxBatch {
		return fmt.Errorf("tools: %d tools in one batch, the limit is %d", len(tools), MaxBatch)
	}
	seen := make(map[string]int, len(tools))
	for i, t := range tools {
		name := t.Name
		if err := checkName(name); err != nil {
			add(i, name, "name", "%v", err)
		} else if j, dup := seen[strings.ToLower(name)]; dup {
			add(i, name, "name", "duplicate of tools[%d] %q (names are unique regardless of case)", j, tools[j].Name)
		} else {
			seen[strings.ToLower(name)] = i
		}
		switch {
		case strings.TrimSpace(t.Description) == "":
			add(i, name, "description", "required")
		case len(t.Description) > MaxDescBytes:
			add(i, name, "description", "%d bytes, the limit is %d", len(t.Description), MaxDescBytes)
		case !utf8.ValidString(t.Description):
			add(i, name, "description", "not valid UTF-8")
		}
		switch t.Type {
		case contract.ToolCore:
			if t.Instance != "" {
				add(i, name, "instance", "must be empty for a core tool")
			}
		case contract.ToolSourced:
			if t.Instance == "" {
				add(i, name, "instance", "required for a sourced tool")
			}
		default:
			add(i, name, "type", "%q is not core or sourced", t.Type)
		}
		if len(t.Instance) > MaxInstanceBytes || !utf8.ValidString(t.Instance) {
			add(i, name, "instance", "must be valid UTF-8 of at most %d bytes", MaxInstanceBytes)
		}
		if len(t.Keywords) > MaxKeywords {
			add(i, name, "keywords", "%d keywords, the limit is %d", len(t.Keywords), MaxKeywords)
		}
		for k, kw := range t.Keywords {
			if strings.TrimSpace(kw) == "" || len(kw) > MaxKeywordBytes || !utf8.ValidString(kw) {
				add(i, name, fmt.Sprintf("keywords[%d]", k), "must be non-blank UTF-8 of at most %d bytes", MaxKeywordBytes)
			}
		}
		if len(t.InputSchema) > 0 {
			if len(t.InputSchema) > MaxInputSchemaLen {
				add(i, name, "input_schema", "%d bytes, the limit is %d", len(t.InputSchema), MaxInputSchemaLen)
			} else if !isObject(t.InputSchema) {
				add(i, name, "input_schema", "must be a JSON object (a JSON Schema)")
			}
		}
	}
	return errors.Join(errs...)
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// ValidateNames checks the names of a remove request.
func ValidateNames(names []string) error {
	if len(names) == 0 {
		return errors.New("names: at least one name is required")
	}
	if len(names) > MaxBatch {
		return fmt.Errorf("names: %d names in one batch, the limit is %d", len(names), MaxBatch)
	}
	var errs []error
	for i, n := range names {
		if err := checkName(n); err != nil {
			errs = append(errs, fmt.Errorf("names[%d] %q: %v", i, n, err))
		}
	}
	return errors.Join(errs...)
}

func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("required")
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%d bytes, the limit is %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("not valid UTF-8")
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return errors.New("must not contain spaces or control characters")
	case strings.HasPrefix(strings.ToLower(name), "select:"):
		return errors.New(`must not start with "select:", which queries use to pick a tool by name`)
	}
	return nil
}

// GramSize is the length of the character n-grams of the grams field.
const GramSize = 4

// Grams returns the character n-grams of an index term, marked so they
// never collide with terms: "#tour", "#ouri"... A term shorter than
// GramSize has none. They let "tours" meet "tourism" and "astrology" meet
// "strology" at a low weight.
func Grams(term string) []string {
	r := []rune(term)
	if len(r) < GramSize || strings.ContainsRune(term, '_') {
		return nil
	}
	out := make([]string, 0, len(r)-GramSize+1)
	for i := 0; i+GramSize <= len(r); i++ {
		out = append(out, "#"+string(r[i:i+GramSize]))
	}
	return out
}

// IsGram reports whether an index term is one of the n-grams of Grams.
func IsGram(term string) bool { return strings.HasPrefix(term, "#") }

// vectorWeights weigh a tool's fields in its pooled vector: its name's
// words say what it is, and count twice (chosen on MetaTool's dev half:
// nDCG@10 0.638 with the name left out, 0.648 at 1, 0.652 at 2, 0.650 at
// 3, 0.649 at 4, at blend weight 1 or 1.3, whichever is better).
var vectorWeights = map[string]float32{contract.FieldName: 2}

// BuildDoc analyses a tool into its KH_INDEX document: one chunk whose
// fields are the name, the keywords and the description.
func BuildDoc(t *contract.Tool, seq uint64, an *analysis.Analyzer) *contract.IndexDoc {
	terms := map[string]map[string]int{}
	add := func(field, text string) {
		m := map[string]int{}
		if an.TermFreqs(text, m) > 0 {
			terms[field] = m
		}
	}
	add(contract.FieldName, t.Name)
	add(contract.FieldKeywords, strings.Join(t.Keywords, "\n"))
	add(contract.FieldDescription, t.Description)
	grams := map[string]int{}
	for _, f := range []string{contract.FieldName, contract.FieldKeywords, contract.FieldDescription} {
		for term, tf := range terms[f] {
			for _, g := range Grams(term) {
				grams[g] += tf
			}
		}
	}
	if len(grams) > 0 {
		terms[contract.FieldGrams] = grams
	}
	doc := &contract.IndexDoc{
		Schema:     contract.SchemaVersion,
		Analyzer:   analysis.Version,
		Collection: contract.CollectionTools,
		Path:       t.Name,
		SourceSeq:  seq,
		Meta:       contract.RepoMeta{Type: t.Type},
		Tool:       t,
		Chunks: []contract.IndexChunk{{
			ID:    contract.ToolKey(t.Name),
			Title: t.Name,
			Text:  t.Description,
			Terms: terms,
		}},
	}
	semantic.Default().Annotate(doc, vectorWeights)
	return doc
}
