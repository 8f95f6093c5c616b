// Command gen writes knowhub's judged docs sets under
// internal/eval/testdata/docs from their sources: the summary front matter
// of the OpenClaw docs, and the questions written and judged by hand in
// internal/eval/gen/questions. Run it from the repository root:
//
//	go run ./internal/eval/gen
//
// It checks that every judged page exists in its corpus, and splits every
// set into dev and test halves with eval.Half.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/knowhub/knowhub/internal/eval"
)

// source is how one set is made.
type source struct {
	name   string
	corpus string
	// summary makes the set from the corpus's summary front matter, and
	// strips it from the indexed copy; otherwise the set is the file
	// questions/<name>.jsonl.
	summary bool
}

var sources = []source{
	{name: "summary-en", corpus: "openclaw-docs", summary: true},
	{name: "summary-zh", corpus: "openclaw-docs-zh-CN", summary: true},
	{name: "questions-nats", corpus: "nats-docs"},
	{name: "questions-prometheus", corpus: "prometheus-docs"},
	{name: "questions-openclaw", corpus: "openclaw-docs"},
	{name: "questions-zh", corpus: "openclaw-docs-zh-CN"},
	{name: "symptoms-nats", corpus: "nats-docs"},
	{name: "symptoms-prometheus", corpus: "prometheus-docs"},
	{name: "symptoms-openclaw", corpus: "openclaw-docs"},
}

func main() {
	corpora := flag.String("corpora", "../shared/corpora", "the corpora `dir`")
	questions := flag.String("questions", "internal/eval/gen/questions", "the `dir` of the hand-judged question files")
	out := flag.String("out", "internal/eval/testdata/docs", "the sets `dir` to write")
	flag.Parse()
	if err := run(*corpora, *questions, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(corpora, questions, out string) error {
	for _, s := range sources {
		judged, set, err := build(s, corpora, questions)
		if err != nil {
			return err
		}
		if err := eval.WriteSet(filepath.Join(out, s.name), set, judged); err != nil {
			return fmt.Errorf("set %s: %w", s.name, err)
		}
		dev := 0
		for _, j := range judged {
			if eval.Half(j.ID) == eval.Dev {
				dev++
			}
		}
		fmt.Printf("%-22s %4d queries: %d dev, %d test\n", s.name, len(judged), dev, len(judged)-dev)
	}
	return nil
}

// build reads one set's source and checks its pages.
func build(s source, corpora, questions string) ([]eval.Judged, eval.Set, error) {
	dir := filepath.Join(corpora, s.corpus)
	if _, err := os.Stat(dir); err != nil {
		return nil, eval.Set{}, fmt.Errorf("set %s: corpus: %w", s.name, err)
	}
	set := eval.Set{Corpus: s.corpus}
	var judged []eval.Judged
	var err error
	if s.summary {
		set.StripFrontMatter = []string{"summary"}
		judged, err = eval.SummaryQueries(dir)
	} else {
		judged, err = eval.LoadJudged(filepath.Join(questions, s.name+".jsonl"))
	}
	if err != nil {
		return nil, set, fmt.Errorf("set %s: %w", s.name, err)
	}
	if len(judged) == 0 {
		return nil, set, errors.New("set " + s.name + ": no query")
	}
	if err := eval.CheckPages(judged, dir); err != nil {
		return nil, set, fmt.Errorf("set %s: %w", s.name, err)
	}
	return judged, set, nil
}
