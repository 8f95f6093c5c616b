package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Judged is a query with its judgments, as a set's author writes it: one
// JSON object a line, {"id", "text", "rel": {"path": grade}}. Grade 2
// marks the page that answers best, 1 a page that also answers.
type Judged struct {
	ID   string         `json:"id"`
	Text string         `json:"text"`
	Rel  map[string]int `json:"rel"`
}

// LoadJudged reads a file of Judged lines. IDs must be single words and
// unique; every query needs a text and a relevant page.
func LoadJudged(path string) ([]Judged, error) {
	var out []Judged
	seen := map[string]bool{}
	err := readJSONL(path, func(data []byte) error {
		var j Judged
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return err
		}
		if err := j.check(); err != nil {
			return err
		}
		if seen[j.ID] {
			return fmt.Errorf("query id %q repeats", j.ID)
		}
		seen[j.ID] = true
		out = append(out, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (j Judged) check() error {
	switch {
	case j.ID == "" || strings.ContainsFunc(j.ID, unicode.IsSpace):
		return fmt.Errorf("query id %q: want one word", j.ID)
	case strings.TrimSpace(j.Text) == "":
		return fmt.Errorf("query %s has no text", j.ID)
	case len(j.Rel) == 0:
		return fmt.Errorf("query %s has no relevant page", j.ID)
	}
	for p, g := range j.Rel {
		if g <= 0 || strings.ContainsFunc(p, unicode.IsSpace) || p == "" {
			return fmt.Errorf("query %s: page %q grade %d: want a path without blanks and a grade above 0", j.ID, p, g)
		}
	}
	return nil
}

// CheckPages reports the first judged page that is not a file of
// corpusDir.
func CheckPages(judged []Judged, corpusDir string) error {
	for _, j := range judged {
		for p := range j.Rel {
			fi, err := os.Stat(filepath.Join(corpusDir, filepath.FromSlash(p)))
			if err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("query %s: page %s is not a file of %s", j.ID, p, corpusDir)
			}
		}
	}
	return nil
}

// SummaryQueries makes a judged query of the summary front-matter field
// of every .md and .mdx page under corpusDir: the summary is the query,
// its page the relevant document (grade 1). Pages sharing one summary form
// one query with all of them relevant. The query ID is the path, without
// its extension, of the first such page. Pages whose front matter does not
// parse, or has no summary, are left out, and so are redirect stubs (see
// isRedirect): their summary names another page, which is the better
// answer, so judging the stub relevant would reward the wrong ranking.
// The queries come sorted by ID.
func SummaryQueries(corpusDir string) ([]Judged, error) {
	byText := map[string][]string{}
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != corpusDir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext != ".md" && ext != ".mdx" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		yml, _, _, ok := frontMatterBlock(data)
		if !ok {
			return nil
		}
		var fm struct {
			Summary any `yaml:"summary"`
		}
		if yaml.Unmarshal(yml, &fm) != nil {
			return nil
		}
		s, _ := fm.Summary.(string)
		s = strings.Join(strings.Fields(s), " ")
		if s == "" || isRedirect(s) {
			return nil
		}
		rel, err := filepath.Rel(corpusDir, p)
		if err != nil {
			return err
		}
		byText[s] = append(byText[s], filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read summaries of %s: %w", corpusDir, err)
	}
	out := make([]Judged, 0, len(byText))
	for text, pages := range byText {
		sort.Strings(pages)
		j := Judged{ID: strings.TrimSuffix(pages[0], filepath.Ext(pages[0])), Text: text, Rel: map[string]int{}}
		for _, p := range pages {
			j.Rel[p] = 1
		}
		if err := j.check(); err != nil {
			return nil, fmt.Errorf("summary of %s: %w", pages[0], err)
		}
		out = append(out, j)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out, nil
}

// isRedirect reports whether a summary marks its page as a redirect stub:
// it starts with "Redirect" (English) or "重定向" (Chinese).
func isRedirect(summary string) bool {
	return strings.HasPrefix(summary, "Redirect") || strings.HasPrefix(summary, "重定向")
}

// WriteSet writes a set folder: set.json, and dev/ and test/ with the
// queries of that half (see Half) in the order given, and their judgments,
// pages sorted. Existing files are replaced.
func WriteSet(dir string, set Set, judged []Judged) error {
	if len(judged) == 0 {
		return errors.New("write set: no query")
	}
	meta, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return fmt.Errorf("write set: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write set: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SetFile), append(meta, '\n'), 0o644); err != nil {
		return fmt.Errorf("write set: %w", err)
	}
	for _, half := range []string{Dev, Test} {
		var qs, rels strings.Builder
		for _, j := range judged {
			if err := j.check(); err != nil {
				return fmt.Errorf("write set: %w", err)
			}
			if Half(j.ID) != half {
				continue
			}
			line, err := json.Marshal(Query{ID: j.ID, Text: j.Text})
			if err != nil {
				return fmt.Errorf("write set: %w", err)
			}
			qs.Write(line)
			qs.WriteByte('\n')
			pages := make([]string, 0, len(j.Rel))
			for p := range j.Rel {
				pages = append(pages, p)
			}
			sort.Strings(pages)
			for _, p := range pages {
				fmt.Fprintf(&rels, "%s\t%s\t%d\n", j.ID, p, j.Rel[p])
			}
		}
		hd := filepath.Join(dir, half)
		if err := os.MkdirAll(hd, 0o755); err != nil {
			return fmt.Errorf("write set: %w", err)
		}
		if err := writeFileAtomic(filepath.Join(hd, "queries.jsonl"), qs.String()); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(hd, "qrels.tsv"), "query-id\tcorpus-id\tscore\n"+rels.String()); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the
// same folder, so a failed write leaves the old file in place.
func writeFileAtomic(path, data string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	_, err = w.WriteString(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
