package eval

import (
	"context"
	"fmt"

	"github.com/knowhub/knowhub/internal/engine"
)

// Objective is what tuning maximises over one half of the judged sets:
// the mean over sets, each counted once, of nDCG@10 and hit@1 averaged.
func Objective(reps []SetReport) float64 {
	if len(reps) == 0 {
		return 0
	}
	sum := 0.0
	for _, r := range reps {
		sum += (r.NDCG10 + r.Hit1) / 2
	}
	return sum / float64(len(reps))
}

// PageParam is one tunable parameter of engine.PageScoring and the values
// the search tries.
type PageParam struct {
	Name   string
	Values []float64
	set    func(*engine.PageScoring, float64)
}

// PageParams are the parameters Tune searches, each over its values.
func PageParams() []PageParam {
	return []PageParam{
		{"coord", []float64{0, 0.1, 0.25, 0.5, 1, 2}, func(p *engine.PageScoring, v float64) { p.Coord = v }},
		{"page_coord", []float64{0, 0.1, 0.25, 0.5, 1, 2}, func(p *engine.PageScoring, v float64) { p.PageCoord = v }},
		{"siblings", []float64{0, 0.02, 0.05, 0.1, 0.2, 0.4}, func(p *engine.PageScoring, v float64) { p.Siblings = v }},
		{"focus", []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5}, func(p *engine.PageScoring, v float64) { p.Focus = v }},
		{"focus_sections", []float64{4, 8, 16, 32, 64}, func(p *engine.PageScoring, v float64) { p.FocusSections = int(v) }},
		{"outline", []float64{0, 0.05, 0.1, 0.2, 0.3, 0.5, 1}, func(p *engine.PageScoring, v float64) { p.Outline = v }},
		{"cjk_damp", []float64{0, 0.2, 0.35, 0.5, 0.65}, func(p *engine.PageScoring, v float64) { p.CJKDamp = v }},
		{"cjk_run_power", []float64{0, 0.15, 0.25, 0.35, 0.5}, func(p *engine.PageScoring, v float64) { p.CJKRunPower = v }},
		{"legacy", []float64{0, 0.2, 0.35, 0.5, 0.65, 0.8}, func(p *engine.PageScoring, v float64) { p.Legacy = v }},
		{"dated", []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5}, func(p *engine.PageScoring, v float64) { p.Dated = v }},
		{"repo_focus", []float64{0, 0.25, 0.5, 1, 2}, func(p *engine.PageScoring, v float64) { p.RepoFocus = v }},
		{"other_language", []float64{0, 0.3, 0.5, 0.7, 0.9}, func(p *engine.PageScoring, v float64) { p.OtherLanguage = v }},
		{"depth", []float64{30, 40, 50, 70, 100}, func(p *engine.PageScoring, v float64) { p.Depth = int(v) }},
	}
}

// Step is one setting Tune tried.
type Step struct {
	Param   string
	Value   float64
	Scoring engine.PageScoring
	Score   float64
	Reports []SetReport
}

// Tune searches the page scoring by coordinate ascent from start: for
// each parameter of PageParams in turn it tries every value with the
// others fixed and keeps the best by Objective (a tie keeps the current
// value), for rounds passes. Every corpus is indexed once. It returns the
// best scoring and every step tried, in order.
func Tune(ctx context.Context, sets []Set, corporaDir, half string, opts Options, start engine.PageScoring, rounds int) (engine.PageScoring, []Step, error) {
	best := start
	reps, err := RunSetsScored(ctx, sets, corporaDir, half, opts, []engine.PageScoring{best})
	if err != nil {
		return best, nil, err
	}
	bestScore := Objective(reps[0])
	steps := []Step{{Param: "start", Scoring: best, Score: bestScore, Reports: reps[0]}}
	for range rounds {
		for _, pp := range PageParams() {
			tries := make([]engine.PageScoring, len(pp.Values))
			for i, v := range pp.Values {
				tries[i] = best
				pp.set(&tries[i], v)
			}
			reps, err := RunSetsScored(ctx, sets, corporaDir, half, opts, tries)
			if err != nil {
				return best, steps, fmt.Errorf("tune %s: %w", pp.Name, err)
			}
			cur := best
			for i, v := range pp.Values {
				score := Objective(reps[i])
				steps = append(steps, Step{Param: pp.Name, Value: v, Scoring: tries[i], Score: score, Reports: reps[i]})
				if score > bestScore+1e-9 {
					cur, bestScore = tries[i], score
				}
			}
			best = cur
		}
	}
	return best, steps, nil
}

// Ablation is scoring p with each of its components off in turn (or on,
// for one p leaves off), first p itself.
func Ablation(p engine.PageScoring) (names []string, settings []engine.PageScoring) {
	add := func(name string, f func(*engine.PageScoring)) {
		q := p
		f(&q)
		names, settings = append(names, name), append(settings, q)
	}
	add("default", func(*engine.PageScoring) {})
	// A component the default leaves off is turned on instead, at 1.
	if p.Coord > 0 {
		add("no coordination", func(q *engine.PageScoring) { q.Coord = 0 })
	} else {
		add("with coordination 1", func(q *engine.PageScoring) { q.Coord = 1 })
	}
	if p.PageCoord > 0 {
		add("no page coordination", func(q *engine.PageScoring) { q.PageCoord = 0 })
	} else {
		add("with page coordination 1", func(q *engine.PageScoring) { q.PageCoord = 1 })
	}
	add("no sibling sections", func(q *engine.PageScoring) { q.Siblings = 0 })
	if p.Outline > 0 {
		add("no heading outline", func(q *engine.PageScoring) { q.Outline = 0 })
	} else {
		add("with heading outline 0.2", func(q *engine.PageScoring) { q.Outline = 0.2 })
	}
	add("no focus (generic pages)", func(q *engine.PageScoring) { q.Focus = 0 })
	add("no CJK damping", func(q *engine.PageScoring) { q.CJKDamp, q.CJKRunPower = 0, 0 })
	add("no legacy pages below", func(q *engine.PageScoring) { q.Legacy = 0 })
	add("no dated pages below", func(q *engine.PageScoring) { q.Dated = 0 })
	add("no repository focus", func(q *engine.PageScoring) { q.RepoFocus = 0 })
	add("no language preference", func(q *engine.PageScoring) { q.OtherLanguage = 0 })
	for _, v := range []float64{0.5, 0.95} {
		if v != p.OtherLanguage {
			add(fmt.Sprintf("language preference %g", v), func(q *engine.PageScoring) { q.OtherLanguage = v })
		}
	}
	add("no page evidence at all", func(q *engine.PageScoring) { *q = engine.PageScoring{} })
	return names, settings
}
