package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/knowhub/knowhub/internal/eval"
)

// evalSets evaluates one half of every judged docs set under setsDir and
// prints one row per set: set, queries, hit@1, hit@5, nDCG@10.
func evalSets(ctx context.Context, setsDir, corpora, half string, opts eval.Options, asJSON bool, stdout, stderr io.Writer) error {
	if half != eval.Dev && half != eval.Test {
		return usageError{fmt.Errorf("--half %q: want %s or %s", half, eval.Dev, eval.Test)}
	}
	sets, err := eval.LoadSets(setsDir)
	if err != nil {
		return err
	}
	reps, err := eval.RunSets(ctx, sets, corpora, half, opts)
	if err != nil {
		return err
	}
	for _, r := range reps {
		for _, s := range r.Skipped {
			fmt.Fprintf(stderr, "knowhub eval: %s: skipped %s\n", r.Set, s)
		}
		if r.Missing > 0 {
			fmt.Fprintf(stderr, "knowhub eval: %s: %d judged queries are not in the queries and were not evaluated\n", r.Set, r.Missing)
		}
	}
	if asJSON {
		return printJSON(stdout, reps)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "set\tcorpus\thalf\tqueries\thit@1\thit@5\tnDCG@10\t\n")
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.4f\t\n", r.Set, r.Corpus, r.Half, r.Queries, r.Hit1, r.Hit5, r.NDCG10)
	}
	return tw.Flush()
}

// frontMatterKeys parses the value of --strip-front-matter: keys separated
// by commas, blanks around them ignored.
func frontMatterKeys(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var keys []string
	for k := range strings.SplitSeq(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("--strip-front-matter %q: empty key", v)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
