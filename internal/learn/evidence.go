// Package learn finds, in an agent transcript, the docs searches whose
// results the agent then used, and screens the words of their queries, so
// that a section can be found again by the words agents asked for it with.
// It is a pure core: the extractor publishes what it finds as
// contract.LearnedEvent and the indexer folds the events into the docs
// field contract.FieldLearned.
//
// The rule is conservative. A docs search is a tool call named
// search_docs, semantic_doc_search, docsearch or docs_search with a string
// "query", whose result (the tool result that answers the call) is not an
// error and lists sections as knowhub's MCP server and OpenClaw plugin
// print them ("[1] repo:path § heading > heading (score 1.23)" or with
// " > " before the headings) or as a JSON search reply. The messages after
// that result and before the next docs search are its window. One of its
// sections is used when, in the window, the agent
//
//   - quoted it: an assistant text holds a run of QuoteWords consecutive
//     words of the section's text that no other section of the result holds;
//   - read it: a read_docs call whose result is that section alone, or its
//     page when no other section of the result is on that page;
//   - ran it: a later tool call's input holds a line of one of the
//     section's code blocks or inline code spans of at least CodeChars
//     characters;
//   - cited it: anywhere after the result, a kb_update marks helpful a
//     knowledge entry that a kb_search result of the transcript showed
//     citing the section's page as "repo:path".
//
// A search teaches only when exactly one of its sections was used; a
// transcript teaches at most MaxUses sections.
package learn

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/transcript"
)

// Rule constants.
const (
	QuoteWords = 8
	CodeChars  = 12
	MaxUses    = 10
)

// Use is one section an agent used after a docs search.
type Use struct {
	Query       string
	Repo        string
	Path        string
	HeadingPath []string
	// How is "quoted", "read", "ran" or "cited".
	How string
}

// SearchTools are the names of docs search tools; ReadTools those of docs
// reads.
var (
	SearchTools = []string{"search_docs", "semantic_doc_search", "docsearch", "docs_search"}
	ReadTools   = []string{"read_docs"}
	// KBSearchTools show knowledge entries; KBUpdateTools rate them.
	KBSearchTools = []string{"kb_search"}
	KBUpdateTools = []string{"kb_update"}
)

// hit is a section as a search result showed it.
type hit struct {
	repo, path string
	heading    []string
	text       string
}

// event is a transcript part in order, with its message role.
type event struct {
	role string
	part *transcript.Part
}

// Evidence returns the sections the agent used after its docs searches,
// by the rule of the package comment, in transcript order.
func Evidence(t *transcript.Transcript) []Use {
	var evs []event
	for i := range t.Messages {
		m := &t.Messages[i]
		for j := range m.Content {
			evs = append(evs, event{m.Role, &m.Content[j]})
		}
	}
	entries := shownEntries(evs)
	var uses []Use
	for i, ev := range evs {
		if ev.part.Type != transcript.PartToolCall || !slices.Contains(SearchTools, ev.part.Name) {
			continue
		}
		query := inputString(ev.part.Input, "query")
		if strings.TrimSpace(query) == "" {
			continue
		}
		res, at := resultOf(evs, i)
		if res == nil || res.IsError {
			continue
		}
		hits := parseHits(res.Output)
		if len(hits) == 0 {
			continue
		}
		end := len(evs)
		for k := at + 1; k < len(evs); k++ {
			if p := evs[k].part; p.Type == transcript.PartToolCall && slices.Contains(SearchTools, p.Name) {
				end = k
				break
			}
		}
		used, how := -1, ""
		for h := range hits {
			w := usedHow(evs[at+1:end], hits, h)
			if w == "" && citedHelpful(evs[at+1:], entries, &hits[h]) {
				w = "cited"
			}
			if w != "" {
				if used >= 0 {
					used = -2 // two sections used: no telling which answered
					break
				}
				used, how = h, w
			}
		}
		if used < 0 {
			continue
		}
		h := hits[used]
		uses = append(uses, Use{Query: query, Repo: h.repo, Path: h.path, HeadingPath: h.heading, How: how})
		if len(uses) == MaxUses {
			break
		}
	}
	return uses
}

// resultOf returns the tool result that answers the call at evs[i] and its
// index: the one with the call's id, else the next result without one.
func resultOf(evs []event, i int) (*transcript.Part, int) {
	call := evs[i].part
	for k := i + 1; k < len(evs); k++ {
		p := evs[k].part
		if p.Type != transcript.PartToolResult {
			continue
		}
		if call.ID == "" || p.ID == "" || p.ID == call.ID {
			return p, k
		}
	}
	return nil, 0
}

// usedHow says how the window shows hits[h] used, or "".
func usedHow(window []event, hits []hit, h int) string {
	target := &hits[h]
	quotes := distinctRuns(hits, h)
	code := codeLines(target.text)
	for k, ev := range window {
		p := ev.part
		switch {
		case ev.role == transcript.RoleAssistant && p.Type == transcript.PartText && len(quotes) > 0:
			words := strings.Join(wordsOf(p.Text), " ")
			for _, q := range quotes {
				if strings.Contains(" "+words+" ", " "+q+" ") {
					return "quoted"
				}
			}
		case p.Type == transcript.PartToolCall && slices.Contains(ReadTools, p.Name):
			res, _ := resultOf(window, k)
			if res != nil && !res.IsError && readShows(res.Output, hits, h) {
				return "read"
			}
		case p.Type == transcript.PartToolCall && len(code) > 0:
			for _, s := range inputStrings(p.Input) {
				for _, c := range code {
					if strings.Contains(s, c) {
						return "ran"
					}
				}
			}
		}
	}
	return ""
}

// distinctRuns returns the runs of QuoteWords words of hits[h]'s text
// that no other hit's text holds, space-joined.
func distinctRuns(hits []hit, h int) []string {
	words := wordsOf(hits[h].text)
	var others []string
	for i := range hits {
		if i != h {
			others = append(others, " "+strings.Join(wordsOf(hits[i].text), " ")+" ")
		}
	}
	var runs []string
	seen := map[string]bool{}
	for i := 0; i+QuoteWords <= len(words); i++ {
		r := strings.Join(words[i:i+QuoteWords], " ")
		if seen[r] {
			continue
		}
		seen[r] = true
		if !slices.ContainsFunc(others, func(o string) bool { return strings.Contains(o, " "+r+" ") }) {
			runs = append(runs, r)
		}
	}
	return runs
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+(?:['’][\p{L}]+)?`)

// wordsOf returns the lower-cased words of s.
func wordsOf(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

var (
	fenceRE  = regexp.MustCompile("(?s)```[^\n]*\n(.*?)```")
	inlineRE = regexp.MustCompile("`([^`\n]+)`")
)

// codeLines returns the lines of text's fenced code blocks and its inline
// code spans that are at least CodeChars long, trimmed and without a
// leading shell prompt.
func codeLines(text string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "$ "))
		if len(s) >= CodeChars && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, m := range fenceRE.FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(m[1], "\n") {
			add(line)
		}
	}
	for _, m := range inlineRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		add(m[1])
	}
	return out
}

// inputString returns the string field key of a tool call's JSON input.
func inputString(input json.RawMessage, key string) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// inputStrings returns every string in a tool call's JSON input.
func inputStrings(input json.RawMessage) []string {
	var v any
	if json.Unmarshal(input, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// headerRE matches a hit's first line in the MCP server's and the
// OpenClaw plugin's text replies.
var headerRE = regexp.MustCompile(`^\[\d+\] ([A-Za-z0-9_-]{1,64}):(\S+?)(?: (?:§|>) (.+?))? \(score -?[0-9.]+\)$`)

// parseHits reads the sections a docs search result lists.
func parseHits(out string) []hit {
	if hits := parseJSONHits(out); hits != nil {
		return hits
	}
	var hits []hit
	var text []string
	flush := func() {
		if len(hits) > 0 {
			hits[len(hits)-1].text = strings.Join(text, "\n")
		}
		text = text[:0]
	}
	for _, line := range strings.Split(out, "\n") {
		if m := headerRE.FindStringSubmatch(line); m != nil && contract.ValidPath(m[2]) {
			flush()
			var heading []string
			if m[3] != "" {
				heading = strings.Split(m[3], " > ")
			}
			hits = append(hits, hit{repo: m[1], path: m[2], heading: heading})
			continue
		}
		if strings.HasPrefix(line, "shadowed: ") || strings.HasPrefix(line, "shadows ") {
			continue
		}
		text = append(text, line)
	}
	flush()
	return hits
}

// parseJSONHits reads a JSON search reply (contract.SearchResponse), or
// returns nil.
func parseJSONHits(out string) []hit {
	out = strings.TrimSpace(out)
	if !strings.HasPrefix(out, "{") {
		return nil
	}
	var resp contract.SearchResponse
	if json.Unmarshal([]byte(out), &resp) != nil {
		return nil
	}
	var hits []hit
	for _, h := range resp.Hits {
		if !contract.ValidRepoName(h.Repo) || !contract.ValidPath(h.Path) {
			continue
		}
		text := h.Content
		if text == "" {
			text = h.Snippet
		}
		hits = append(hits, hit{repo: h.Repo, path: h.Path, heading: h.HeadingPath, text: text})
	}
	return hits
}

var (
	readHeadRE    = regexp.MustCompile(`^([A-Za-z0-9_-]{1,64}):(\S+) \(\d+ sections? on the page\)$`)
	readSectionRE = regexp.MustCompile(`^§ (.*?) \[id [^\]]+\]$`)
)

// readShows reports whether a read_docs result shows hits[h]: that section
// alone, or its page when no other hit is on that page.
func readShows(out string, hits []hit, h int) bool {
	lines := strings.Split(out, "\n")
	m := readHeadRE.FindStringSubmatch(lines[0])
	if m == nil || m[1] != hits[h].repo || m[2] != hits[h].path {
		return false
	}
	var sections [][]string
	for _, line := range lines[1:] {
		if s := readSectionRE.FindStringSubmatch(line); s != nil {
			var heading []string
			if s[1] != "" {
				heading = strings.Split(s[1], " > ")
			}
			sections = append(sections, heading)
		}
	}
	if len(sections) == 1 {
		return slices.Equal(sections[0], hits[h].heading)
	}
	for i := range hits {
		if i != h && hits[i].repo == hits[h].repo && hits[i].path == hits[h].path {
			return false
		}
	}
	return len(sections) > 1
}

// entryRE matches a knowledge entry in a kb_search result (kb's prompt
// format).
var entryRE = regexp.MustCompile(`(?s)<entry n="\d+" id="([^"]+)"[^>]*>(.*?)</entry>`)

// shownEntries returns the text of every knowledge entry a kb_search result
// of the transcript showed, by id.
func shownEntries(evs []event) map[string]string {
	out := map[string]string{}
	for i, ev := range evs {
		if ev.part.Type != transcript.PartToolCall || !slices.Contains(KBSearchTools, ev.part.Name) {
			continue
		}
		if res, _ := resultOf(evs, i); res != nil && !res.IsError {
			for _, m := range entryRE.FindAllStringSubmatch(res.Output, -1) {
				out[m[1]] += m[2]
			}
		}
	}
	return out
}

// citedHelpful reports whether a kb_update among evs marks helpful an
// entry whose text cites h's page.
func citedHelpful(evs []event, entries map[string]string, h *hit) bool {
	if len(entries) == 0 {
		return false
	}
	cite := h.repo + ":" + h.path
	for _, ev := range evs {
		p := ev.part
		if p.Type != transcript.PartToolCall || !slices.Contains(KBUpdateTools, p.Name) {
			continue
		}
		var in struct {
			ID        string `json:"knowledge_id"`
			IsHelpful bool   `json:"is_helpful"`
		}
		if json.Unmarshal(p.Input, &in) != nil || !in.IsHelpful {
			continue
		}
		if text, ok := entries[in.ID]; ok && strings.Contains(text, cite) {
			return true
		}
	}
	return false
}
