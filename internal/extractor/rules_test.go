package extractor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/redact"
	"github.com/knowhub/knowhub/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata/*.expected.json from the rules' output")

// newTestSanitizer returns a sanitizer with the shared redactor.
func newTestSanitizer(t testing.TB) *transcript.Sanitizer {
	t.Helper()
	red, err := redact.New(nil)
	if err != nil {
		t.Fatalf("redact.New: %v", err)
	}
	return transcript.NewSanitizer(red)
}

// newTestIntake returns an intake with cfg and the shared redactor.
func newTestIntake(t testing.TB, cfg transcript.Config) *transcript.Intake {
	t.Helper()
	in, err := transcript.NewIntake(cfg, newTestSanitizer(t))
	if err != nil {
		t.Fatalf("NewIntake: %v", err)
	}
	return in
}

// loadTranscript parses and sanitizes (strict) a testdata transcript.
func loadTranscript(t testing.TB, san *transcript.Sanitizer, name string) *transcript.Transcript {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transcript.Parse(data, transcript.Limits{})
	if err != nil {
		t.Fatalf("Parse %s: %v", name, err)
	}
	return san.Transcript(tr, transcript.Strict)
}

// TestRulesGolden runs the rules over every transcript in testdata and
// compares the candidates with NAME.expected.json. The types each
// transcript must yield are also listed here, so that a careless -update
// cannot turn a transcript that must yield nothing into one that yields
// junk.
func TestRulesGolden(t *testing.T) {
	want := map[string][][]string{
		"vitest_watch_mode":     {{"strategy"}},
		"pnpm_preference":       {{"user_profile"}},
		"remember_staging_port": {{"definition"}},
		"deploy_plan":           {{"plan"}},
		"docker_platform":       {{"strategy", "tool"}},
		"chitchat":              nil,
		"read_only_session":     nil,
		"unfixed_failure":       nil,
		"go_mod_tidy":           {{"strategy"}},
		"dont_touch_prod":       {{"user_profile"}},
		"test_fixed_by_edit":    nil,
		"confirmed_find":        {{"tool"}},
		"flaky_retry":           nil,
		"python3_not_found":     {{"strategy"}},
		"tool_retry":            {{"tool", "strategy"}},
		"remember_usecase":      {{"usecase"}},
		"false_preferences":     nil,
		"incomplete_plan":       nil,
		"busy_session":          {{"definition"}, {"user_profile"}, {"strategy"}},
		"privacy_strict":        {{"definition"}, {"definition"}},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".expected.json") {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
		}
	}
	if len(names) < 12 {
		t.Fatalf("%d transcripts in testdata, want at least 12", len(names))
	}
	san := newTestSanitizer(t)
	rules := NewRules()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			wantTypes, ok := want[name]
			if !ok {
				t.Fatalf("testdata/%s.json is not listed in the want table", name)
			}
			tr := loadTranscript(t, san, name)
			got, err := rules.Extract(context.Background(), tr, DefaultMaxEntries)
			if err != nil {
				t.Fatal(err)
			}
			var gotTypes [][]string
			for _, c := range got {
				gotTypes = append(gotTypes, c.Types)
			}
			if !slices.EqualFunc(gotTypes, wantTypes, slices.Equal) {
				t.Errorf("types = %v, want %v", gotTypes, wantTypes)
			}
			if got == nil {
				got = []Candidate{}
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".expected.json")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(exp, b.Bytes()) {
				t.Errorf("entries differ from %s (run go test -update to accept)\ngot:\n%s\nwant:\n%s", golden, b.Bytes(), exp)
			}
		})
	}
}
