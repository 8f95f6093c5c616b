package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeOpenClaw(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "openclaw.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The doc-engine plugin's config block is read as it is: repositories
// (name, path, priority, type, glob), secretPatterns and chunkMaxTokens;
// its other keys and the rest of openclaw.json are left alone.
func TestLoadOpenClawDocEngineEntry(t *testing.T) {
	home, _ := os.UserHomeDir()
	p := writeOpenClaw(t, `{
	  "gateway": {"port": 18789},
	  "plugins": {"entries": {
	    "doc-engine": {"enabled": true, "config": {
	      "repositories": [
	        {"name": "openclaw-docs", "path": "~/openclaw/docs", "priority": 1, "type": "core"},
	        {"name": "skills", "path": "skills", "priority": 10, "type": "extension", "glob": "**/SKILL.md"}
	      ],
	      "storage": "./storage", "topK": 5, "watchEnabled": true, "watchDebounceMs": 2000,
	      "chunkMaxTokens": 500, "secretPatterns": ["CUSTOM-[A-Z]{10}"]
	    }},
	    "other": {"config": {"x": 1}}
	  }}
	}`)
	oc, err := LoadOpenClaw(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Repository{
		{Name: "openclaw-docs", Path: filepath.Join(home, "openclaw/docs"), Priority: 1, Type: "core", Glob: DefaultGlob},
		{Name: "skills", Path: filepath.Join(filepath.Dir(p), "skills"), Priority: 10, Type: "extension", Glob: "**/SKILL.md"},
	}
	if oc.Entry != "doc-engine" || len(oc.Repositories) != 2 || oc.ChunkMaxTokens != 500 || strings.Join(oc.SecretPatterns, ",") != "CUSTOM-[A-Z]{10}" {
		t.Fatalf("LoadOpenClaw = %+v", oc)
	}
	for i, r := range oc.Repositories {
		if r.Name != want[i].Name || r.Path != want[i].Path || r.Priority != want[i].Priority || r.Type != want[i].Type || r.Glob != want[i].Glob {
			t.Errorf("repositories[%d] = %+v, want %+v", i, r, want[i])
		}
	}
	for i, r := range oc.Repositories {
		if !slices.Equal(r.Languages, []string{"en"}) {
			t.Errorf("repositories[%d].languages = %q, want [en], as doc-engine indexes English only", i, r.Languages)
		}
	}
	c := Default()
	c.ApplyOpenClaw(oc)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Chunker.ChunkMaxTokens != 500 || len(c.Redaction.AllPatterns()) != 1 {
		t.Errorf("applied: chunkMaxTokens %d, patterns %+v", c.Chunker.ChunkMaxTokens, c.Redaction.AllPatterns())
	}
}

// A knowhub plugin entry with repositories works the same; bad values are
// field errors once applied.
func TestLoadOpenClawKnowhubEntryAndErrors(t *testing.T) {
	oc, err := LoadOpenClaw(writeOpenClaw(t, `{"plugins":{"entries":{"knowhub":{"config":{"apiUrl":"http://127.0.0.1:7700",
		"repositories":[{"name":"docs","path":"/srv/docs","priority":0,"type":"core"}]}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.ApplyOpenClaw(oc)
	if oc.Entry != "knowhub" {
		t.Errorf("entry %q", oc.Entry)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "repositories[0].priority: must be a number of at least 1") {
		t.Errorf("priority 0 from openclaw.json: %v", err)
	}
	for doc, want := range map[string]string{
		`{"plugins":{"entries":{}}}`: "neither plugins.entries.doc-engine.config nor plugins.entries.knowhub.config lists repositories",
		`{"plugins":{"entries":{"doc-engine":{"config":{"repositories":"docs"}}}}}`:                                    "plugins.entries.doc-engine.config.repositories: must be an array",
		`{"plugins":{"entries":{"doc-engine":{"config":{"repositories":[{"name":"a","path":"/a","priority":1.5}]}}}}}`: "repositories[0].priority: must be a whole number",
		"{\n  // a comment\n}": "line 2, column 3: not JSON",
	} {
		if _, err := LoadOpenClaw(writeOpenClaw(t, doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}

// doc-engine's englishOnly: false indexes every language; a repository's
// own languages win over the block's default.
func TestLoadOpenClawLanguages(t *testing.T) {
	for _, c := range []struct {
		name, block string
		want        [][]string
	}{
		{"default", `"repositories":[{"name":"a","path":"/a"}]`, [][]string{{"en"}}},
		{"englishOnly true", `"englishOnly":true,"repositories":[{"name":"a","path":"/a"}]`, [][]string{{"en"}}},
		{"englishOnly false", `"englishOnly":false,"repositories":[{"name":"a","path":"/a"}]`, [][]string{nil}},
		{"own languages", `"repositories":[{"name":"a","path":"/a","languages":["zh-CN","en"]},{"name":"b","path":"/b"}]`,
			[][]string{{"zh-CN", "en"}, {"en"}}},
	} {
		for _, entry := range []string{"doc-engine", "knowhub"} {
			oc, err := LoadOpenClaw(writeOpenClaw(t, `{"plugins":{"entries":{"`+entry+`":{"config":{`+c.block+`}}}}}`))
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, entry, err)
			}
			for i, r := range oc.Repositories {
				if !slices.Equal(r.Languages, c.want[i]) {
					t.Errorf("%s %s: repositories[%d].languages = %q, want %q", c.name, entry, i, r.Languages, c.want[i])
				}
			}
		}
	}
	oc, err := LoadOpenClaw(writeOpenClaw(t, `{"plugins":{"entries":{"doc-engine":{"config":{"repositories":[{"name":"a","path":"/a","languages":["klingon"]}]}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	cfg.ApplyOpenClaw(oc)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `repositories[0].languages[0]: "klingon" is not a language tag`) {
		t.Errorf("a bad language from openclaw.json: %v", err)
	}
}
