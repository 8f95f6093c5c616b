package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/eval"
)

// evalTune searches the docs page scoring on one half of the judged sets
// (eval.Tune) and prints every step, then the best setting.
func evalTune(ctx context.Context, setsDir, corpora, half string, rounds int, opts eval.Options, stdout io.Writer) error {
	sets, err := eval.LoadSets(setsDir)
	if err != nil {
		return err
	}
	best, steps, err := eval.Tune(ctx, sets, corpora, half, opts, engine.DefaultPageScoring(), rounds)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "param\tvalue\tobjective\t")
	for _, r := range steps[0].Reports {
		fmt.Fprintf(tw, "%s\t", r.Set)
	}
	fmt.Fprintln(tw)
	for _, s := range steps {
		fmt.Fprintf(tw, "%s\t%g\t%.4f\t", s.Param, s.Value, s.Score)
		for _, r := range s.Reports {
			fmt.Fprintf(tw, "%.3f/%.4f\t", r.Hit1, r.NDCG10)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "best: %+v\n", best)
	return err
}

// evalAblate prints the default page scoring and each of its components
// off in turn (eval.Ablation), hit@1 and nDCG@10 of every set.
func evalAblate(ctx context.Context, setsDir, corpora, half string, opts eval.Options, stdout io.Writer) error {
	sets, err := eval.LoadSets(setsDir)
	if err != nil {
		return err
	}
	names, settings := eval.Ablation(engine.DefaultPageScoring())
	reps, err := eval.RunSetsScored(ctx, sets, corpora, half, opts, settings)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s half: hit@1 / nDCG@10\t", half)
	for _, r := range reps[0] {
		fmt.Fprintf(tw, "%s\t", r.Set)
	}
	fmt.Fprintf(tw, "objective\t\n")
	for i, name := range names {
		fmt.Fprintf(tw, "%s\t", name)
		for _, r := range reps[i] {
			fmt.Fprintf(tw, "%d/%d %.4f\t", int(r.Hit1*float64(r.Queries)+0.5), r.Queries, r.NDCG10)
		}
		fmt.Fprintf(tw, "%.4f\t\n", eval.Objective(reps[i]))
	}
	return tw.Flush()
}
