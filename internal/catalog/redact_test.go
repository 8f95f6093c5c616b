package catalog_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/redact"
	"github.com/knowhub/knowhub/internal/redact/redacttest"
)

func newRedactor(t testing.TB) *redact.Redactor {
	t.Helper()
	r, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedactEveryStringOfATool(t *testing.T) {
	tools := []contract.Tool{redacttest.Tool("deploy_service")}
	if err := catalog.Redact(tools, newRedactor(t)); err != nil {
		t.Fatal(err)
	}
	got := tools[0]
	all, _ := json.Marshal(got)
	survived := 0
	for _, s := range redacttest.Planted() {
		if strings.Contains(string(all), s.Value) || strings.Contains(string(all), redacttest.Escaped(s.Value)) {
			survived++
			t.Errorf("%s (%s) survived", s.Name, s.Kind)
		}
	}
	t.Logf("%d of %d planted secrets survived", survived, len(redacttest.Planted()))
	if got.Name != "deploy_service" || got.Type != contract.ToolCore {
		t.Errorf("identity changed: %q %q", got.Name, got.Type)
	}
	if !json.Valid(got.InputSchema) {
		t.Fatalf("schema is no longer JSON: %s", got.InputSchema)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(got.InputSchema, &schema); err != nil || schema.Type != "object" || len(schema.Properties) < 20 {
		t.Fatalf("schema lost its shape (%v): %.300s", err, got.InputSchema)
	}
	if err := catalog.Validate(tools); err != nil {
		t.Errorf("the redacted tool is invalid: %v", err)
	}
}

func TestRedactKeepsACleanSchemaAsItIs(t *testing.T) {
	schema := json.RawMessage(`{ "type": "object",  "properties": {"z": {"type": "integer", "default": 1e400}, "a": {"enum": [true, null, "<b>&"]}} }`)
	tools := []contract.Tool{{Name: "n", Type: contract.ToolCore, Description: "Counts things.", InputSchema: schema}}
	if err := catalog.Redact(tools, newRedactor(t)); err != nil {
		t.Fatal(err)
	}
	if string(tools[0].InputSchema) != string(schema) {
		t.Errorf("clean schema rewritten: %s", tools[0].InputSchema)
	}
	// With a secret in it, the rest keeps its order and its numbers.
	gh := "gh" + "p_" + redacttest.Fake(7, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
	tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"z":{"type":"integer","default":1e400},"a":{"enum":[true,null,"<b>&","` + gh + `"]}}}`)
	if err := catalog.Redact(tools, newRedactor(t)); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"z":{"type":"integer","default":1e400},"a":{"enum":[true,null,"<b>&","[REDACTED:github-pat]"]}}}`
	if string(tools[0].InputSchema) != want {
		t.Errorf("got  %s\nwant %s", tools[0].InputSchema, want)
	}
}

func TestRedactRefusesASecretName(t *testing.T) {
	red := newRedactor(t)
	tried := 0
	for _, s := range redacttest.Planted() {
		// Secrets that are one only in context (a bearer token, a
		// password) are not found in a bare name.
		if strings.ContainsAny(s.Value, " \n") || red.String(s.Value) == s.Value {
			continue
		}
		tried++
		t.Run(s.Name, func(t *testing.T) {
			tool := redacttest.Tool("ok")
			tool.Name = s.Value
			inst := contract.Tool{Name: "tool", Type: contract.ToolSourced, Instance: s.Value, Description: "d"}
			for _, bad := range []contract.Tool{tool, inst} {
				tools := []contract.Tool{{Name: "fine", Type: contract.ToolCore, Description: "d"}, bad}
				before, _ := json.Marshal(tools)
				err := catalog.Redact(tools, newRedactor(t))
				if err == nil || !strings.Contains(err.Error(), "tools[1]") || !strings.Contains(err.Error(), "holds a secret") {
					t.Fatalf("err = %v, want tools[1] refused for holding a secret", err)
				}
				if strings.Contains(err.Error(), s.Value) {
					t.Errorf("the error repeats the secret: %v", err)
				}
				if after, _ := json.Marshal(tools); string(after) != string(before) {
					t.Error("a refused batch was changed")
				}
			}
		})
	}
	if tried < 20 {
		t.Errorf("only %d planted secrets are found in a bare name", tried)
	}
}

// FuzzRedactSchema checks that a schema stays the JSON it was, apart from
// redacted strings: valid, with the same shape.
func FuzzRedactSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"enum":[1,true,null,"x"]}}}`,
		`{"a":"password: Xy7!ab9cQ2 \u00e9\ud83d\ude00","b":[[],{}],"c":-1.5e-7}`,
		`{"k":"` + redacttest.Escaped(redacttest.Planted()[30].Text()) + `"}`,
	} {
		f.Add(s)
	}
	red := newRedactor(f)
	f.Fuzz(func(t *testing.T, in string) {
		var before any
		if json.Unmarshal([]byte(in), &before) != nil {
			return
		}
		if _, ok := before.(map[string]any); !ok {
			return
		}
		tools := []contract.Tool{{Name: "t", Type: contract.ToolCore, Description: "d", InputSchema: json.RawMessage(in)}}
		if err := catalog.Redact(tools, red); err != nil {
			t.Fatal(err)
		}
		var after any
		if err := json.Unmarshal(tools[0].InputSchema, &after); err != nil {
			t.Fatalf("%q became invalid JSON %q: %v", in, tools[0].InputSchema, err)
		}
		if shape(before) != shape(after) {
			t.Fatalf("%q changed shape: %q", in, tools[0].InputSchema)
		}
	})
}

// shape describes a JSON value's structure without its strings.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return fmt.Sprintf("{%d}", len(x))
	case []any:
		s := "["
		for _, e := range x {
			s += shape(e) + ","
		}
		return s + "]"
	case string:
		return "s"
	default:
		return fmt.Sprint(x)
	}
}
