package engine

import (
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/search"
)

func hit(repo, path string, prio int, typ string, score float64, heading ...string) search.Hit {
	return search.Hit{Score: score, Entry: &search.Entry{
		ID:          repo + path + strings.Join(heading, "/"),
		HeadingPath: heading,
		SectionKey:  contract.SectionKey(path, heading),
		Source:      &search.Source{Key: repo + ":" + path, Repo: repo, Path: path, Meta: search.Meta{Priority: prio, Type: typ}},
	}}
}

func TestResolve(t *testing.T) {
	core, ext := contract.RepoCore, contract.RepoExtension
	tests := []struct {
		name       string
		hits       []search.Hit
		kept       []string // repos of kept hits in order
		shadowed   []string
		reasonPart string
	}{
		{
			name:       "lower priority number wins even with a lower score",
			hits:       []search.Hit{hit("ext", "guide.md", 20, core, 9, "Setup"), hit("main", "guide.md", 10, core, 5, "Setup")},
			kept:       []string{"main"},
			shadowed:   []string{"ext"},
			reasonPart: "priority 10",
		},
		{
			name:       "core beats extension at equal priority",
			hits:       []search.Hit{hit("plugin", "a/b.md", 10, ext, 9, "X"), hit("docs", "a/b.md", 10, core, 1, "X")},
			kept:       []string{"docs"},
			shadowed:   []string{"plugin"},
			reasonPart: "core repository docs",
		},
		{
			name:       "higher score breaks a full tie",
			hits:       []search.Hit{hit("one", "p.md", 10, core, 9, "H"), hit("two", "p.md", 10, core, 3, "H")},
			kept:       []string{"one"},
			shadowed:   []string{"two"},
			reasonPart: "scored higher",
		},
		{
			name:     "normalisation: case, extension and spacing",
			hits:     []search.Hit{hit("one", "Guide.MDX", 10, core, 9, "Getting  Started"), hit("two", "guide.md", 5, core, 3, "getting started")},
			kept:     []string{"two"},
			shadowed: []string{"one"},
		},
		{
			name: "different sections do not conflict",
			hits: []search.Hit{hit("one", "p.md", 10, core, 9, "A"), hit("two", "p.md", 5, core, 3, "B")},
			kept: []string{"one", "two"},
		},
		{
			name: "same repository never shadows itself",
			hits: []search.Hit{hit("one", "p.md", 10, core, 9, "A"), hit("one", "p.md", 10, core, 3, "A")},
			kept: []string{"one", "one"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, shadowed := Resolve(tc.hits, nil)
			var got []string
			for _, h := range kept {
				got = append(got, h.Entry.Source.Repo)
			}
			if strings.Join(got, ",") != strings.Join(tc.kept, ",") {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
			got = nil
			for _, s := range shadowed {
				got = append(got, s.Hit.Entry.Source.Repo)
				if !strings.Contains(s.Reason, tc.reasonPart) {
					t.Errorf("reason %q does not mention %q", s.Reason, tc.reasonPart)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.shadowed, ",") {
				t.Errorf("shadowed %v, want %v", got, tc.shadowed)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in, text string
		phrases  []string
	}{
		{`plain words`, `plain words`, nil},
		{`"fallback model" chain`, ` fallback model  chain`, []string{"fallback model"}},
		{`unbalanced "quote`, `unbalanced  quote`, nil},
		{`“curly quotes” too`, ` curly quotes  too`, []string{"curly quotes"}},
		{`"a" "b c" "unterminated`, ` a   b c   unterminated`, []string{"a", "b c"}},
		{`echo: ripgrep~1 (((`, `echo: ripgrep~1 (((`, nil},
	}
	for _, tc := range tests {
		text, phrases := parseQuery(tc.in)
		if text != tc.text || strings.Join(phrases, "|") != strings.Join(tc.phrases, "|") {
			t.Errorf("parseQuery(%q) = %q %q, want %q %q", tc.in, text, phrases, tc.text, tc.phrases)
		}
	}
}
