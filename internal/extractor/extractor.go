// Package extractor is the pure core of the extractor: it turns agent
// transcripts into knowledge entries, privacy first. Nothing here does I/O
// except the LLM extractor's HTTP call; the transport that reads
// transcripts from JetStream or HTTP and saves the entries lives elsewhere.
//
// The life of a transcript:
//
//   - Parse decodes the intake payload ({messages, agent_id, submitted_by,
//     session_key, trigger}) with the OpenClaw, Anthropic and OpenAI message
//     shapes and rejects oversize or malformed input with an error wrapping
//     ErrInvalid, so that nothing is stored.
//   - Sanitizer.Transcript drops system and developer messages and, in
//     Strict mode (the default), replaces home directories, e-mail
//     addresses, phone numbers and IP addresses; secrets are redacted in
//     every mode.
//   - ID hashes the session key and the sanitized messages: the transport
//     skips a transcript whose id it has seen.
//   - An Extractor finds candidate entries: Rules (offline, the default) or
//     LLM (any OpenAI-compatible chat-completions endpoint).
//   - Pipeline.Extract sanitizes the candidates again, adds lineage
//     (transcript id, extractor name and version, agent, submitter),
//     validates them as kb save requests and keeps at most MaxEntries.
//
// Pipeline.Prepare and Pipeline.Extract do these steps in order.
package extractor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/knowhub/knowhub/internal/kb"
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
	Extract(ctx context.Context, t *Transcript, max int) ([]Candidate, error)
}

// Lineage is how entries record which extractor made them: name@version.
func Lineage(x Extractor) string { return x.Name() + "@" + x.Version() }

// Config configures the pipeline.
type Config struct {
	// Privacy is strict (the default) or relaxed.
	Privacy PrivacyMode `json:"privacy_mode,omitempty"`
	// MaxEntries is how many entries a transcript yields at most; zero
	// means DefaultMaxEntries.
	MaxEntries int `json:"max_entries,omitempty"`
	// Limits bound the transcripts Parse accepts.
	Limits Limits `json:"limits,omitzero"`
}

// Validate reports every problem of the configuration, or nil.
func (c Config) Validate() error {
	var errs []error
	if _, err := ParsePrivacyMode(string(c.Privacy)); err != nil {
		errs = append(errs, fmt.Errorf("privacy_mode: %w", err))
	}
	if c.MaxEntries < 0 || c.MaxEntries > MaxEntriesLimit {
		errs = append(errs, fmt.Errorf("max_entries: %d is outside 0–%d", c.MaxEntries, MaxEntriesLimit))
	}
	if c.Limits.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("limits.max_bytes: %d is negative", c.Limits.MaxBytes))
	}
	if c.Limits.MaxMessages < 0 {
		errs = append(errs, fmt.Errorf("limits.max_messages: %d is negative", c.Limits.MaxMessages))
	}
	return errors.Join(errs...)
}

// Pipeline runs the steps from intake payload to kb save requests. It is
// immutable and safe for concurrent use.
type Pipeline struct {
	mode   PrivacyMode
	max    int
	limits Limits
	san    *Sanitizer
	x      Extractor
}

// NewPipeline checks cfg and returns a pipeline that sanitizes with san and
// extracts with x.
func NewPipeline(cfg Config, san *Sanitizer, x Extractor) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extractor config: %w", err)
	}
	if san == nil || x == nil {
		return nil, errors.New("extractor: a sanitizer and an extractor are required")
	}
	mode, _ := ParsePrivacyMode(string(cfg.Privacy))
	max := cfg.MaxEntries
	if max == 0 {
		max = DefaultMaxEntries
	}
	return &Pipeline{mode: mode, max: max, limits: cfg.Limits.withDefaults(), san: san, x: x}, nil
}

// Privacy returns the privacy mode the pipeline sanitizes in.
func (p *Pipeline) Privacy() PrivacyMode { return p.mode }

// MaxEntries returns how many entries a transcript yields at most.
func (p *Pipeline) MaxEntries() int { return p.max }

// Prepare parses and sanitizes an intake payload and returns the sanitized
// transcript and its id. Only the sanitized transcript may be persisted or
// passed on. Errors wrap ErrInvalid.
func (p *Pipeline) Prepare(data []byte) (*Transcript, string, error) {
	t, err := Parse(data, p.limits)
	if err != nil {
		return nil, "", err
	}
	t = p.san.Transcript(t, p.mode)
	return t, ID(t), nil
}

// Result is what Extract found in one transcript.
type Result struct {
	// Requests are ready for kb.save, best first; Owner and Scopes are left
	// to the caller.
	Requests []kb.SaveRequest
	// Dropped says why candidates were left out (invalid, duplicate or over
	// the limit), one error per candidate.
	Dropped []error
}

// Extract runs the extractor over a transcript that Prepare returned and
// turns its candidates into save requests: each is sanitized again,
// stamped with lineage (transcript id, extractor, agent, submitter),
// validated like any save (kb.ValidateSave) and de-duplicated; at most
// MaxEntries are kept.
func (p *Pipeline) Extract(ctx context.Context, t *Transcript, id string) (Result, error) {
	cands, err := p.x.Extract(ctx, t, p.max)
	if err != nil {
		return Result{}, fmt.Errorf("extract with %s: %w", Lineage(p.x), err)
	}
	var res Result
	seen := map[string]bool{}
	for i, c := range cands {
		r := kb.SaveRequest{
			Task:    strings.TrimSpace(p.san.Text(c.Task, p.mode)),
			Content: strings.TrimSpace(p.san.Text(c.Content, p.mode)),
			Types:   append([]string(nil), c.Types...),
			Score:   c.Score,
			Source: kb.Source{
				Category:    SourceCategory,
				AgentID:     t.AgentID,
				SubmittedBy: p.san.Text(t.SubmittedBy, p.mode),
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
