package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/eval"
)

// cmdEval scores retrieval on a judged collection: a corpus.jsonl folder
// or a Markdown folder, indexed and searched in process.
func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// eval runs offline: none of the shared NATS and config flags apply.
	c := &common{fs: flag.NewFlagSet("knowhub eval", flag.ContinueOnError), help: stdout, synopsis: "eval DIR | --markdown DOCS_DIR | --sets SETS_DIR [flags]"}
	c.fs.SetOutput(io.Discard)
	markdown := c.fs.String("markdown", "", "evaluate the Markdown `dir` through the chunker (needs --queries and --qrels)")
	queriesPath := c.fs.String("queries", "", "queries `file`, JSONL {\"id\", \"text\"} (default DIR/queries.jsonl)")
	qrelsPath := c.fs.String("qrels", "", "judgments `file`, query-id TAB doc-id TAB grade (default DIR/qrels.tsv)")
	asJSON := c.fs.Bool("json", false, "print the figures as JSON")
	runPath := c.fs.String("run", "", "write a TREC run file (top 100 per query) to `file`")
	tag := c.fs.String("tag", "knowhub", "run tag written in the run file")
	limit := c.fs.Int("limit", 0, "evaluate only the first `N` judged queries (0: all)")
	collection := c.fs.String("collection", "docs", "how DIR's documents are indexed and searched: docs or tools")
	strip := c.fs.String("strip-front-matter", "", "with --markdown, remove these front-matter `keys` (comma-separated) from every file before indexing")
	setsDir := c.fs.String("sets", "", "evaluate every judged docs set under `dir` (one folder per set, see internal/eval/testdata/docs)")
	half := c.fs.String("half", "", "the `half` of the queries evaluated, dev or test (see eval.Half); with --sets the default is dev, otherwise all")
	semantic := c.fs.String("semantic", "default", "semantic matching: `mode` off, expand (neighbour expansion only), fuse (the blended vector retriever only), both, or default (both for tools, off for docs; docs have expansion only)")
	corpora := c.fs.String("corpora", "../shared/corpora", "with --sets, the `dir` holding the sets' corpora")
	tune := c.fs.Int("tune", 0, "with --sets, search the docs page scoring on the half for `N` rounds of coordinate ascent and print every step")
	ablate := c.fs.Bool("ablate", false, "with --sets, print the default page scoring with each component off in turn")
	together := c.fs.Bool("together", false, "with --sets, index the corpora of the sets that strip no front matter into one engine, each a repository of its own: a judged page must then also come from its set's repository")
	embedURL := c.fs.String("embeddings-url", "", "with --sets, also rank by the vectors of this OpenAI-compatible embeddings `URL` (the API root, as semantic.embeddings.url)")
	embedModel := c.fs.String("embeddings-model", "", "with --embeddings-url, the `model`")
	embedKeyEnv := c.fs.String("embeddings-key-env", "", "with --embeddings-url, the environment `variable` holding the API key")
	embedWeight := c.fs.Float64("embeddings-weight", engine.DefaultEmbeddingWeight, "with --embeddings-url, the vectors' `share` of the fused score, 0 to 1")
	c.usage = func(w io.Writer) {
		fmt.Fprint(w, `Usage:
  knowhub eval DIR                  DIR holds corpus.jsonl, queries.jsonl and qrels.tsv
  knowhub eval DIR --half dev|test  only the queries of one half (see --sets)
  knowhub eval DIR --collection tools
                                    each document is a tool (id = name, text = description)
  knowhub eval --markdown DOCS_DIR --queries Q.jsonl --qrels QRELS.tsv [--strip-front-matter KEY,...]
                                    qrels name files by their path relative to DOCS_DIR
  knowhub eval --sets SETS_DIR --half dev|test [--corpora CORPORA_DIR] [--together] [--tune N | --ablate]
               [--embeddings-url URL --embeddings-model M [--embeddings-weight W]]
                                    every set of SETS_DIR, one table; --tune searches the
                                    docs page scoring, --ablate turns each component off;
                                    --together indexes the corpora as repositories of one engine

Prints nDCG@10, Recall@10, Recall@100 and MRR@10 (trec_eval conventions),
and hit@1 and hit@5 (the share of queries with a relevant document in the
first 1 or 5; for Markdown, a page is hit when one of its sections is
returned), averaged over the queries that have a relevant document.

`)
	}
	c.fs.Usage = func() {}
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	mode, err := engine.ParseSemanticMode(*semantic)
	if err != nil {
		return usageError{err}
	}
	if *setsDir != "" {
		if *markdown != "" || len(pos) > 0 || *queriesPath != "" || *qrelsPath != "" || *runPath != "" || *strip != "" {
			return usageError{errors.New("--sets runs alone: drop DIR, --markdown, --queries, --qrels, --run and --strip-front-matter")}
		}
		if *half == "" {
			*half = eval.Dev
		}
		if *half != eval.Dev && *half != eval.Test {
			return usageError{fmt.Errorf("--half %q: want %s or %s", *half, eval.Dev, eval.Test)}
		}
		switch {
		case *tune < 0:
			return usageError{fmt.Errorf("--tune %d: want a number of rounds", *tune)}
		case *tune > 0 && *ablate:
			return usageError{errors.New("--tune and --ablate run alone: choose one")}
		case *tune > 0:
			return evalTune(ctx, *setsDir, *corpora, *half, *tune, eval.Options{Limit: *limit, Together: *together}, stdout)
		case *ablate:
			return evalAblate(ctx, *setsDir, *corpora, *half, eval.Options{Limit: *limit, Together: *together}, stdout)
		}
		opts := eval.Options{Limit: *limit, Together: *together, Semantic: &mode}
		if *embedURL != "" {
			if *embedWeight < 0 || *embedWeight > 1 {
				return usageError{fmt.Errorf("--embeddings-weight %g: want 0 to 1", *embedWeight)}
			}
			ec := embedding.Config{BaseURL: *embedURL, Model: *embedModel}
			if *embedKeyEnv != "" {
				ec.APIKey = os.Getenv(*embedKeyEnv)
			}
			client, err := embedding.New(ec)
			if err != nil {
				return usageError{fmt.Errorf("--embeddings-url: %w", err)}
			}
			opts.Embed, opts.EmbedWeight = client, *embedWeight
		}
		return evalSets(ctx, *setsDir, *corpora, *half, opts, *asJSON, stdout, stderr)
	}
	stripKeys, err := frontMatterKeys(*strip)
	if err != nil {
		return usageError{err}
	}
	var dir string
	switch {
	case len(stripKeys) > 0 && *markdown == "":
		return usageError{errors.New("--strip-front-matter applies to --markdown")}
	case *tag == "" || strings.ContainsFunc(*tag, unicode.IsSpace):
		return usageError{fmt.Errorf("--tag %q: want one word", *tag)}
	case *collection != "docs" && *collection != "tools":
		return usageError{fmt.Errorf("--collection %q: want docs or tools", *collection)}
	case *markdown != "" && *collection != "docs":
		return usageError{errors.New("--markdown evaluates docs; drop --collection")}
	case *half != "" && *half != eval.Dev && *half != eval.Test:
		return usageError{fmt.Errorf("--half %q: want %s or %s", *half, eval.Dev, eval.Test)}
	case *limit < 0:
		return usageError{fmt.Errorf("--limit %d: want 0 or more", *limit)}
	case *markdown != "" && len(pos) > 0:
		return usageError{errors.New("give either DIR or --markdown DOCS_DIR, not both")}
	case *markdown != "" && (*queriesPath == "" || *qrelsPath == ""):
		return usageError{errors.New("--markdown needs --queries and --qrels")}
	case *markdown == "" && len(pos) != 1:
		return usageError{errors.New("want one collection DIR (corpus.jsonl, queries.jsonl, qrels.tsv), or --markdown DOCS_DIR")}
	case *markdown == "":
		dir = pos[0]
		if *queriesPath == "" {
			*queriesPath = filepath.Join(dir, "queries.jsonl")
		}
		if *qrelsPath == "" {
			*qrelsPath = filepath.Join(dir, "qrels.tsv")
		}
	}
	// Check every input before indexing, which takes a while.
	inputs := []string{*queriesPath, *qrelsPath, *markdown}
	if *markdown == "" {
		inputs[2] = filepath.Join(dir, "corpus.jsonl")
	}
	for _, p := range inputs {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist", p)
		} else if err != nil {
			return err
		}
	}
	queries, err := eval.LoadQueries(*queriesPath)
	if err != nil {
		return fmt.Errorf("load queries: %w", err)
	}
	qrels, err := eval.LoadQrels(*qrelsPath)
	if err != nil {
		return fmt.Errorf("load judgments: %w", err)
	}
	if *half != "" {
		queries = slices.DeleteFunc(queries, func(q eval.Query) bool { return eval.Half(q.ID) != *half })
		for id := range qrels {
			if eval.Half(id) != *half {
				delete(qrels, id)
			}
		}
	}
	var runFile *os.File
	if *runPath != "" {
		if runFile, err = os.Create(*runPath); err != nil {
			return err
		}
		defer runFile.Close()
	}

	// With --json, stdout carries only the JSON; the account goes to stderr.
	out := stdout
	if *asJSON {
		out = stderr
	}
	var col *eval.Collection
	if *markdown != "" {
		if col, err = eval.IndexMarkdownWith(ctx, *markdown, eval.MarkdownOptions{StripFrontMatter: stripKeys}); err != nil {
			return fmt.Errorf("index %s: %w", *markdown, err)
		}
		for _, s := range col.Skipped {
			fmt.Fprintf(stderr, "knowhub eval: skipped %s\n", s)
		}
		fmt.Fprintf(out, "indexed   %d files, %d sections of %s in %s\n", col.Docs, col.Chunks, *markdown, shortDuration(col.IndexTime))
	} else {
		docs, err := eval.LoadCorpus(filepath.Join(dir, "corpus.jsonl"))
		if err != nil {
			return fmt.Errorf("load corpus: %w", err)
		}
		index := eval.IndexDocs
		if *collection == "tools" {
			index = eval.IndexTools
		}
		if col, err = index(ctx, docs, 0); err != nil {
			return fmt.Errorf("index %s: %w", dir, err)
		}
		fmt.Fprintf(out, "indexed   %d documents of %s in %s\n", col.Docs, dir, shortDuration(col.IndexTime))
	}

	col.SetSemantic(mode)
	rep, err := eval.Run(ctx, col, queries, qrels, eval.Options{Limit: *limit})
	if err != nil {
		return err
	}
	if rep.Missing > 0 {
		fmt.Fprintf(stderr, "knowhub eval: %d judged queries are not in %s and were not evaluated\n", rep.Missing, *queriesPath)
	}
	fmt.Fprintf(out, "searched  %d queries in %s (%.0f queries/s on %d workers)\n",
		rep.Queries, shortDuration(rep.SearchTime), float64(rep.Queries)/rep.SearchTime.Seconds(), runtime.GOMAXPROCS(0))
	if *asJSON {
		if err := printJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "\nnDCG@10     %.4f\nRecall@10   %.4f\nRecall@100  %.4f\nMRR@10      %.4f\nhit@1       %.4f\nhit@5       %.4f\nqueries     %d\n",
			rep.NDCG10, rep.Recall10, rep.Recall100, rep.MRR10, rep.Hit1, rep.Hit5, rep.Queries)
	}
	if runFile != nil {
		if err := eval.WriteRun(runFile, rep.Results, *tag); err != nil {
			return fmt.Errorf("write run %s: %w", *runPath, err)
		}
		if err := runFile.Close(); err != nil {
			return fmt.Errorf("write run %s: %w", *runPath, err)
		}
		fmt.Fprintf(out, "run file  %s\n", *runPath)
	}
	return nil
}

// shortDuration shortens a duration for display.
func shortDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(100 * time.Nanosecond)
	}
}
