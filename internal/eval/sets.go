package eval

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/knowhub/knowhub/internal/engine"
)

// The halves of a judged set: weights are tuned on Dev; Test is looked at
// only to report.
const (
	Dev  = "dev"
	Test = "test"
)

// Half returns the half a query belongs to, Dev or Test, from the first
// byte of the SHA-256 of its ID: even is Dev, odd is Test. It depends on
// nothing but the ID, so adding or removing a query never moves another.
func Half(queryID string) string {
	if sum := sha256.Sum256([]byte(queryID)); sum[0]&1 == 0 {
		return Dev
	}
	return Test
}

// SetFile is the file in a set's folder that names its corpus.
const SetFile = "set.json"

// Set is a judged set of docs questions on one Markdown corpus, stored as
// a folder: set.json, then dev/ and test/, each with queries.jsonl and
// qrels.tsv (query-id TAB path-relative-to-the-corpus TAB grade).
type Set struct {
	// Name is the folder's name.
	Name string `json:"-"`
	// Dir is the folder.
	Dir string `json:"-"`
	// Corpus is the corpus folder's name, relative to a corpora folder
	// (../shared/corpora from the repository root).
	Corpus string `json:"corpus"`
	// StripFrontMatter names the front-matter keys removed before
	// indexing: those the queries were made from.
	StripFrontMatter []string `json:"strip_front_matter,omitempty"`
}

// LoadSets reads every set under dir: each sub-folder holding a set.json,
// sorted by name.
func LoadSets(dir string) ([]Set, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read sets folder: %w", err)
	}
	var sets []Set
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		s, err := LoadSet(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no folder of %s holds a %s", dir, SetFile)
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i].Name < sets[j].Name })
	return sets, nil
}

// LoadSet reads the set in folder dir. A missing set.json is an error
// wrapping fs.ErrNotExist.
func LoadSet(dir string) (Set, error) {
	data, err := os.ReadFile(filepath.Join(dir, SetFile))
	if err != nil {
		return Set{}, fmt.Errorf("read set: %w", err)
	}
	var s Set
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Set{}, fmt.Errorf("read set %s: %w", filepath.Join(dir, SetFile), err)
	}
	if s.Corpus == "" || s.Corpus != filepath.Base(s.Corpus) || strings.HasPrefix(s.Corpus, ".") {
		return Set{}, fmt.Errorf("read set %s: corpus %q: want the name of a folder of the corpora folder", filepath.Join(dir, SetFile), s.Corpus)
	}
	s.Name, s.Dir = filepath.Base(dir), dir
	return s, nil
}

// Load reads one half of the set. Every judged query must be in the
// queries and in that half (see Half), and every query must be judged.
func (s Set) Load(half string) ([]Query, Qrels, error) {
	if half != Dev && half != Test {
		return nil, nil, fmt.Errorf("half %q: want %s or %s", half, Dev, Test)
	}
	dir := filepath.Join(s.Dir, half)
	queries, err := LoadQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, nil, fmt.Errorf("load queries of %s/%s: %w", s.Name, half, err)
	}
	qrels, err := LoadQrels(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		return nil, nil, fmt.Errorf("load judgments of %s/%s: %w", s.Name, half, err)
	}
	ids := make(map[string]bool, len(queries))
	for _, q := range queries {
		ids[q.ID] = true
		if Half(q.ID) != half {
			return nil, nil, fmt.Errorf("set %s: query %s belongs to the %s half, not %s", s.Name, q.ID, Half(q.ID), half)
		}
		if len(qrels[q.ID]) == 0 {
			return nil, nil, fmt.Errorf("set %s/%s: query %s has no relevant page", s.Name, half, q.ID)
		}
	}
	for qid := range qrels {
		if !ids[qid] {
			return nil, nil, fmt.Errorf("set %s/%s: judged query %s is not in the queries", s.Name, half, qid)
		}
	}
	return queries, qrels, nil
}

// SetReport is one set's half, evaluated.
type SetReport struct {
	Set    string `json:"set"`
	Half   string `json:"half"`
	Corpus string `json:"corpus"`
	*Report
	// Pages and Sections count what was indexed.
	Pages    int `json:"pages"`
	Sections int `json:"sections"`
	// Skipped lists files left out of the index, with why.
	Skipped []string `json:"skipped,omitempty"`
}

// RunSets evaluates one half of every set on its corpus, found under
// corporaDir. Sets on the same corpus with the same stripped keys share
// one index. Reports come in the order of sets.
func RunSets(ctx context.Context, sets []Set, corporaDir, half string, opts Options) ([]SetReport, error) {
	reps, err := RunSetsScored(ctx, sets, corporaDir, half, opts, nil)
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// RunSetsScored is RunSets for each of several page scorings, every corpus
// indexed once: reports[i] holds the sets' reports under pages[i]. No
// scorings means the engine's default alone.
func RunSetsScored(ctx context.Context, sets []Set, corporaDir, half string, opts Options, pages []engine.PageScoring) ([][]SetReport, error) {
	type loaded struct {
		queries []Query
		qrels   Qrels
	}
	// Read every set before indexing, which takes a while.
	halves := make([]loaded, len(sets))
	for i, s := range sets {
		q, r, err := s.Load(half)
		if err != nil {
			return nil, err
		}
		halves[i] = loaded{q, r}
		if _, err := os.Stat(filepath.Join(corporaDir, s.Corpus)); err != nil {
			return nil, fmt.Errorf("set %s: corpus: %w", s.Name, err)
		}
	}
	n := max(len(pages), 1)
	out := make([][]SetReport, n)
	cols := map[string]*Collection{}
	var shared *Collection
	if opts.Together {
		var dirs []RepoDir
		for _, s := range sets {
			if len(s.StripFrontMatter) == 0 && !slices.ContainsFunc(dirs, func(d RepoDir) bool { return d.Repo == s.Corpus }) {
				dirs = append(dirs, RepoDir{Repo: s.Corpus, Dir: filepath.Join(corporaDir, s.Corpus)})
			}
		}
		var err error
		if shared, err = IndexMarkdownRepos(ctx, dirs, MarkdownOptions{Workers: opts.Workers, Embed: opts.Embed}); err != nil {
			return nil, err
		}
		if opts.Semantic != nil {
			shared.SetSemantic(*opts.Semantic)
		}
	}
	for i, s := range sets {
		strip := slices.Clone(s.StripFrontMatter)
		sort.Strings(strip)
		key := s.Corpus + "\x00" + strings.Join(strip, ",")
		col := cols[key]
		if shared != nil && len(strip) == 0 {
			col = shared
			prefixed := make(Qrels, len(halves[i].qrels))
			for q, rel := range halves[i].qrels {
				m := make(map[string]int, len(rel))
				for doc, g := range rel {
					m[s.Corpus+"/"+doc] = g
				}
				prefixed[q] = m
			}
			halves[i].qrels = prefixed
		}
		if col == nil {
			dir := filepath.Join(corporaDir, s.Corpus)
			var err error
			col, err = IndexMarkdownWith(ctx, dir, MarkdownOptions{Workers: opts.Workers, StripFrontMatter: strip, Embed: opts.Embed})
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", dir, err)
			}
			if opts.Semantic != nil {
				col.SetSemantic(*opts.Semantic)
			}
			cols[key] = col
		}
		col.SetEmbeddings(opts.Embed, opts.EmbedWeight)
		for k := range n {
			c := col
			if len(pages) > 0 {
				c = col.WithPageScoring(pages[k])
			}
			rep, err := Run(ctx, c, halves[i].queries, halves[i].qrels, opts)
			if err != nil {
				return nil, fmt.Errorf("evaluate set %s/%s: %w", s.Name, half, err)
			}
			out[k] = append(out[k], SetReport{Set: s.Name, Half: half, Corpus: s.Corpus, Report: rep,
				Pages: col.Docs, Sections: col.Chunks, Skipped: col.Skipped})
		}
	}
	return out, nil
}
