package extractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/learn"
	"github.com/knowhub/knowhub/internal/transcript"
)

// DefaultMaxEntries is how many entries one transcript yields at most.
const DefaultMaxEntries = 3

// MaxEntriesLimit bounds Config.MaxEntries.
const MaxEntriesLimit = 20

// SourceCategory is the source category of the entries the extractor saves.
const SourceCategory = "transcript"

// Candidate is an entry an extractor found: the situation (Task), the
// knowledge (Content), its kb types, a score 1–5 and, for review, the
// evidence it was drawn from (which messages, or which model).
type Candidate struct {
	Task     string   `json:"task"`
	Content  string   `json:"content"`
	Types    []string `json:"types"`
	Score    int      `json:"score"`
	Evidence string   `json:"evidence,omitempty"`
}

// LogValue logs a candidate without its content.
func (c Candidate) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Any("types", c.Types),
		slog.Int("score", c.Score),
		slog.Int("content_bytes", len(c.Content)),
		slog.String("evidence", c.Evidence),
	)
}

// Extractor finds knowledge in a sanitized transcript. Extract returns at
// most max candidates, best first, and an error only when it could not run
// (a model that cannot be reached or replies with garbage); finding nothing
// is not an error. Implementations keep no reference to t and are safe for
// concurrent use.
type Extractor interface {
	// Name is a short stable name, such as "rules" or "llm".
	Name() string
	// Version changes whenever the same transcript may yield other
	// entries; for a model it names the model.
	Version() string
	Extract(ctx context.Context, t *transcript.Transcript, max int) ([]Candidate, error)
}

// Lineage is how entries record which extractor made them: name@version.
func Lineage(x Extractor) string { return x.Name() + "@" + x.Version() }

// Config configures the extractor stage: its transcript intake and the
// pipeline.
type Config struct {
	// The transcript intake's privacy mode and limits.
	transcript.Config
	// MaxEntries is how many entries a transcript yields at most; zero
	// means DefaultMaxEntries.
	MaxEntries int `json:"maxEntries,omitempty"`
	// Vocabulary, unless false, learns query words from the docs searches
	// whose results the agent used (package learn) and publishes them to
	// KH_LEARNED.
	Vocabulary *bool `json:"vocabulary,omitempty"`
}

// Validate reports every problem of the configuration, or nil.
func (c Config) Validate() error {
	var errs []error
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxEntries < 0 || c.MaxEntries > MaxEntriesLimit {
		errs = append(errs, fmt.Errorf("maxEntries: %d is outside 0–%d", c.MaxEntries, MaxEntriesLimit))
	}
	return errors.Join(errs...)
}

// Pipeline turns sanitized transcripts into kb save requests. It is
// immutable and safe for concurrent use.
type Pipeline struct {
	max   int
	in    *transcript.Intake
	x     Extractor
	learn bool
	an    *analysis.Analyzer
}

// NewPipeline checks cfg and returns a pipeline that extracts with x from
// the transcripts in prepares, and sanitizes what x finds as in does.
func NewPipeline(cfg Config, in *transcript.Intake, x Extractor) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extractor config: %w", err)
	}
	if in == nil || x == nil {
		return nil, errors.New("extractor: a transcript intake and an extractor are required")
	}
	max := cfg.MaxEntries
	if max == 0 {
		max = DefaultMaxEntries
	}
	return &Pipeline{max: max, in: in, x: x, learn: cfg.Vocabulary == nil || *cfg.Vocabulary, an: analysis.New()}, nil
}

// Learn returns the learned-vocabulary events of a sanitized transcript:
// one per docs section the agent used after a search (learn.Evidence),
// with the search's query sanitized again like any extracted text and
// screened by learn.Words. It returns nil when the pipeline does not
// learn vocabulary.
func (p *Pipeline) Learn(t *transcript.Transcript, id string) []contract.LearnedEvent {
	if !p.learn {
		return nil
	}
	var evs []contract.LearnedEvent
	for _, u := range learn.Evidence(t) {
		words := learn.Words(p.in.Text(u.Query), p.an)
		if len(words) == 0 {
			continue
		}
		heading := make([]string, len(u.HeadingPath))
		for i, h := range u.HeadingPath {
			heading[i] = p.in.Text(h)
		}
		ev := contract.LearnedEvent{Schema: contract.SchemaVersion, Op: contract.LearnedAdd, TranscriptID: id,
			Repo: u.Repo, Path: u.Path, HeadingPath: heading, Words: words, How: u.How}
		if p.in.Text(u.Path) != u.Path || ev.Check(contract.LearnedSubject(u.Repo, u.Path)) != nil {
			continue // a path that held something to sanitize, or too long a heading path
		}
		evs = append(evs, ev)
	}
	return evs
}

// Intake returns the transcript intake the pipeline extracts from.
func (p *Pipeline) Intake() *transcript.Intake { return p.in }

// MaxEntries returns how many entries a transcript yields at most.
func (p *Pipeline) MaxEntries() int { return p.max }

// Result is what Extract found in one transcript.
type Result struct {
	// Requests are ready for kb.save, best first; Owner and Scopes are left
	// to the caller.
	Requests []kb.SaveRequest
	// Dropped says why candidates were left out (invalid, duplicate or over
	// the limit), one error per candidate.
	Dropped []error
}

// Extract runs the extractor over a transcript that the intake prepared and
// turns its candidates into save requests: each is sanitized again,
// stamped with lineage (transcript id, extractor, agent, submitter),
// validated like any save (kb.ValidateSave) and de-duplicated; at most
// MaxEntries are kept.
func (p *Pipeline) Extract(ctx context.Context, t *transcript.Transcript, id string) (Result, error) {
	cands, err := p.x.Extract(ctx, t, p.max)
	if err != nil {
		return Result{}, fmt.Errorf("extract with %s: %w", Lineage(p.x), err)
	}
	var res Result
	seen := map[string]bool{}
	for i, c := range cands {
		r := kb.SaveRequest{
			Task:    strings.TrimSpace(p.in.Text(c.Task)),
			Content: strings.TrimSpace(p.in.Text(c.Content)),
			Types:   append([]string(nil), c.Types...),
			Score:   c.Score,
			Source: kb.Source{
				Category:    SourceCategory,
				AgentID:     t.AgentID,
				SubmittedBy: p.in.Text(t.SubmittedBy),
			},
			TranscriptID: id,
			Extractor:    Lineage(p.x),
		}
		if err := kb.ValidateSave(&r); err != nil {
			res.Dropped = append(res.Dropped, fmt.Errorf("candidate %d: %w", i, err))
			continue
		}
		key := kb.Normalize(r.Content)
		if seen[key] {
			res.Dropped = append(res.Dropped, fmt.Errorf("candidate %d: duplicate content", i))
			continue
		}
		if len(res.Requests) == p.max {
			res.Dropped = append(res.Dropped, fmt.Errorf("candidate %d: over the limit of %d entries", i, p.max))
			continue
		}
		seen[key] = true
		res.Requests = append(res.Requests, r)
	}
	return res, nil
}
