// Package kb is the pure core of the knowledge hub: what agents have learned
// and saved for each other. It validates save, update and search requests,
// folds the append-only KH_KNOWLEDGE event log into the current record of
// each entry (counts, quality score, state), detects exact and near
// duplicates, screens content for prompt injection, decides visibility by
// scope, ranks hits and renders them safely for a prompt. Nothing here does
// I/O; the transport that reads and writes NATS lives elsewhere.
//
// The life of an entry:
//
//   - kb.save: ValidateSave, then PlanSave turns the request into the events
//     to append (or into the id of the exact duplicate that already exists).
//     Content that Screen flags is saved as quarantined: it is kept for
//     review and never served.
//   - kb.update: ValidateUpdate, then UpdateRequest.Event gives the event to
//     append: feedback (helpful or harmful, with a case), superseded,
//     revoked or released.
//   - The indexer folds each event into the KH_KB record with Fold and
//     rebuilds the entry's KH_INDEX document with BuildDoc; a record that is
//     not active becomes a tombstone there.
//   - kb.search: ValidateSearch, a BM25F pool from the index (SearchParams),
//     then Rank filters (state, scope, types, min score), blends relevance
//     with quality and cuts to the limit; FormatPrompt renders the hits for a
//     prompt when format=prompt.
package kb

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
)

// Entry types. An entry has one or more of them.
const (
	TypeUserProfile = "user_profile" // what a user prefers and how they work
	TypeStrategy    = "strategy"     // an approach that worked (or did not)
	TypeTool        = "tool"         // how to use a tool well
	TypeUsecase     = "usecase"      // a worked example of a task
	TypeDefinition  = "definition"   // what a term means here
	TypePlan        = "plan"         // steps for a recurring task
)

// KnownTypes returns the entry types in documentation order.
func KnownTypes() []string {
	return []string{TypeUserProfile, TypeStrategy, TypeTool, TypeUsecase, TypeDefinition, TypePlan}
}

// States of an entry. Only an active entry is ever served by search.
const (
	StateActive      = "active"      // served
	StateQuarantined = "quarantined" // flagged by screening, waiting for review
	StateSuperseded  = "superseded"  // replaced by SupersededBy
	StateRevoked     = "revoked"     // withdrawn for good
)

// Limits on requests.
const (
	MaxTaskBytes    = 1 << 10
	MaxContentBytes = 16 << 10
	MaxTypes        = 6
	MaxScopes       = 16
	MaxScopeBytes   = 128
	MaxURLs         = 16
	MaxURLBytes     = 2048
	// MaxFieldBytes bounds the short free-text fields: owner, the source
	// fields other than urls, transcript_id, extractor, a case's outcome.
	MaxFieldBytes  = 256
	MaxReasonBytes = 1 << 10
	MaxQueryBytes  = 1 << 10
	// MaxRecentCases is how many feedback cases an entry keeps, newest last.
	MaxRecentCases = 10
	DefaultScore   = 3
	MinScore       = 1
	MaxScore       = 5
	DefaultLimit   = 5
	MaxLimit       = 50
)

// Search output formats (SearchRequest.Format).
const (
	OutputJSON   = "json"   // hits as JSON (the default)
	OutputPrompt = "prompt" // hits rendered by FormatPrompt, ready for a prompt
)

// Update actions of kb.update.
const (
	ActionFeedback  = "feedback"
	ActionSupersede = "supersede"
	ActionRevoke    = "revoke"
	ActionRelease   = "release"
)

// scopeRE is the shape of a scope: kind:value, e.g. org:acme or
// agent:coder.
var scopeRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*:[A-Za-z0-9_.@/-]+$`)

// idRE is the shape of an entry id: a subject and KV key token.
var idRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidID reports whether id can name an entry: it becomes a subject token
// (kh.kb.<id>) and a KV key, so only letters, digits, '_' and '-' are
// allowed, at most 64 of them. NewID always returns a valid id.
func ValidID(id string) bool { return idRE.MatchString(id) }

// ValidScope reports whether s is a well-formed scope (kind:value).
func ValidScope(s string) bool { return len(s) <= MaxScopeBytes && scopeRE.MatchString(s) }

// Subject is the KH_KNOWLEDGE subject of an entry's events.
func Subject(id string) string { return contract.SubjectKnowledge + "." + id }

// IndexKey is the KH_INDEX key of an entry.
func IndexKey(id string) string { return contract.CollectionKB + "." + id }

// Source says where an entry came from.
type Source struct {
	Name        string   `json:"name,omitempty"`
	Category    string   `json:"category,omitempty"`
	URLs        []string `json:"urls,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	SubmittedBy string   `json:"submitted_by,omitempty"`
	MessageID   string   `json:"message_id,omitempty"`
}

// Case is one use of an entry reported with feedback: the task it was used
// for, what happened and why it helped or harmed.
type Case struct {
	Task      string    `json:"task,omitempty"`
	Outcome   string    `json:"outcome,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// Eval is the evaluation of an entry: the author's score and the feedback
// history.
type Eval struct {
	// Score is the author's own rating, 1 (weak) to 5 (strong).
	Score   int `json:"score"`
	Helpful int `json:"helpful"`
	Harmful int `json:"harmful"`
	// RecentCases are the last MaxRecentCases feedback cases, oldest first.
	RecentCases []Case `json:"recent_cases,omitempty"`
}

// Entry is the current record of a knowledge entry: the KH_KB value, a fold
// of its KH_KNOWLEDGE events.
type Entry struct {
	ID      string   `json:"id"`
	Task    string   `json:"task"`
	Content string   `json:"content"`
	Types   []string `json:"types"`
	Eval    Eval     `json:"eval"`
	// QualityScore in [0,1] is computed by the fold from Eval (see
	// QualityScore); it is never taken from a request.
	QualityScore float64  `json:"quality_score"`
	Scopes       []string `json:"scopes,omitempty"`
	Owner        string   `json:"owner,omitempty"`
	Source       Source   `json:"source"`
	State        string   `json:"state"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	// DuplicateOf links a near duplicate to the entry it resembles; search
	// shows only the better of the two.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Quarantine is why screening flagged the entry; empty unless the entry
	// is or was quarantined and not yet released.
	Quarantine string `json:"quarantine_reason,omitempty"`
	// StateReason is the reason given with the last state change (revoked,
	// superseded, released).
	StateReason string    `json:"state_reason,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Seq is the KH_KNOWLEDGE sequence of the last event that changed the
	// entry; an event at or below it is a replay and changes nothing.
	Seq          uint64 `json:"seq"`
	TranscriptID string `json:"transcript_id,omitempty"`
	Extractor    string `json:"extractor,omitempty"`
}

// SaveRequest is the body of kb.save.
type SaveRequest struct {
	Task    string   `json:"task"`
	Content string   `json:"content"`
	Types   []string `json:"types"`
	// Score is the author's rating 1–5; zero means DefaultScore.
	Score  int      `json:"score,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	Owner  string   `json:"owner,omitempty"`
	Source Source   `json:"source"`
	// TranscriptID and Extractor record lineage when the extractor, not an
	// agent, saved the entry.
	TranscriptID string `json:"transcript_id,omitempty"`
	Extractor    string `json:"extractor,omitempty"`
}

// SaveResponse is the reply of kb.save.
type SaveResponse struct {
	ID string `json:"id"`
	// State is the state the entry was saved in (active or quarantined), or
	// the current state of the existing entry for an exact duplicate.
	State string `json:"state"`
	// Duplicate is "exact" when the entry already existed (nothing was
	// written) and "near" when it was linked to or superseded a similar one.
	Duplicate   string  `json:"duplicate,omitempty"`
	DuplicateOf string  `json:"duplicate_of,omitempty"`
	Supersedes  string  `json:"supersedes,omitempty"`
	Similarity  float64 `json:"similarity,omitempty"`
	Quarantine  string  `json:"quarantine_reason,omitempty"`
	Seq         uint64  `json:"seq,omitempty"`
}

// UpdateRequest is the body of kb.update. Revoke and release are operator
// actions: the transport must check that the caller may moderate.
type UpdateRequest struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	// Helpful is required for feedback: true counts as helpful, false as
	// harmful.
	Helpful *bool `json:"helpful,omitempty"`
	Case    *Case `json:"case,omitempty"`
	// By is the id of the replacing entry, required for supersede.
	By     string `json:"superseded_by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// UpdateResponse is the reply of kb.update.
type UpdateResponse struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
}

// SearchRequest is the body of kb.search. Scopes are the caller's scopes;
// the transport should take them from the caller's identity when it has
// one rather than trust the body.
type SearchRequest struct {
	Query string `json:"query"`
	// MinSeq, when set, waits (bounded) until the index has applied the
	// KH_KNOWLEDGE event at this sequence: an agent reads its own writes.
	MinSeq uint64   `json:"min_seq,omitempty"`
	Limit  int      `json:"limit,omitempty"`
	Types  []string `json:"types,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	// AllScopes sees entries of every scope. Only the API edge sets it,
	// for a caller of an open node (no tokens) that names no scopes; it is
	// never read from a request body.
	AllScopes bool `json:"-"`
	// MinScore keeps only entries whose author score is at least this; zero
	// means no filter.
	MinScore int    `json:"min_score,omitempty"`
	Format   string `json:"format,omitempty"`
}

// Hit is one ranked entry in a search response.
type Hit struct {
	Entry
	// Relevance is the text score from the index; Score is the final score
	// (see Rank).
	Relevance float64 `json:"relevance"`
	Score     float64 `json:"score"`
}

// SearchResponse is the reply of kb.search. With format=prompt, Prompt holds
// the hits rendered by FormatPrompt and Hits is still filled.
type SearchResponse struct {
	Query      string `json:"query"`
	Hits       []Hit  `json:"hits"`
	Total      int    `json:"total"`
	Prompt     string `json:"prompt,omitempty"`
	TookMicros int64  `json:"took_us"`
}

// problems collects validation errors, each naming its field.
type problems []error

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func (p problems) err() error { return errors.Join(p...) }

// text checks a free-text field: required or not, byte limit, UTF-8.
func (p *problems) text(field, s string, required bool, limit int) {
	switch {
	case required && strings.TrimSpace(s) == "":
		p.add(field, "required")
	case len(s) > limit:
		p.add(field, "%d bytes, the limit is %d", len(s), limit)
	case !utf8.ValidString(s):
		p.add(field, "not valid UTF-8")
	case strings.ContainsRune(s, 0):
		p.add(field, "contains a NUL byte")
	}
}

// types normalizes a type list in place (trim, lower-case, drop duplicates)
// and checks it.
func (p *problems) types(field string, ts []string, required bool) []string {
	if required && len(ts) == 0 {
		p.add(field, "at least one type is required (%s)", strings.Join(KnownTypes(), ", "))
		return ts
	}
	if len(ts) > MaxTypes {
		p.add(field, "%d types, the limit is %d", len(ts), MaxTypes)
		return ts
	}
	out := ts[:0]
	for i, t := range ts {
		t = strings.ToLower(strings.TrimSpace(t))
		if !slices.Contains(KnownTypes(), t) {
			p.add(fmt.Sprintf("%s[%d]", field, i), "%q is not a known type (%s)", ts[i], strings.Join(KnownTypes(), ", "))
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// scopes normalizes a scope list in place (trim, drop duplicates) and checks
// it.
func (p *problems) scopes(field string, ss []string) []string {
	if len(ss) > MaxScopes {
		p.add(field, "%d scopes, the limit is %d", len(ss), MaxScopes)
		return ss
	}
	out := ss[:0]
	for i, s := range ss {
		s = strings.TrimSpace(s)
		if !ValidScope(s) {
			p.add(fmt.Sprintf("%s[%d]", field, i), "%q is not kind:value (e.g. org:acme, agent:coder; at most %d bytes)", ss[i], MaxScopeBytes)
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ValidateSave checks a save request and returns every problem found, each
// naming its field, or nil. It also normalizes the request in place: a zero
// score becomes DefaultScore, types are trimmed, lower-cased and
// de-duplicated, scopes are trimmed and de-duplicated.
func ValidateSave(r *SaveRequest) error {
	if r == nil {
		return errors.New("save request: missing")
	}
	var p problems
	p.text("task", r.Task, true, MaxTaskBytes)
	p.text("content", r.Content, true, MaxContentBytes)
	r.Types = p.types("types", r.Types, true)
	if r.Score == 0 {
		r.Score = DefaultScore
	} else if r.Score < MinScore || r.Score > MaxScore {
		p.add("score", "%d is outside %d–%d", r.Score, MinScore, MaxScore)
	}
	r.Scopes = p.scopes("scopes", r.Scopes)
	p.text("owner", r.Owner, false, MaxFieldBytes)
	p.text("source.name", r.Source.Name, false, MaxFieldBytes)
	p.text("source.category", r.Source.Category, false, MaxFieldBytes)
	p.text("source.agent_id", r.Source.AgentID, false, MaxFieldBytes)
	p.text("source.submitted_by", r.Source.SubmittedBy, false, MaxFieldBytes)
	p.text("source.message_id", r.Source.MessageID, false, MaxFieldBytes)
	if len(r.Source.URLs) > MaxURLs {
		p.add("source.urls", "%d urls, the limit is %d", len(r.Source.URLs), MaxURLs)
	} else {
		for i, u := range r.Source.URLs {
			if err := checkURL(u); err != nil {
				p.add(fmt.Sprintf("source.urls[%d]", i), "%v", err)
			}
		}
	}
	p.text("transcript_id", r.TranscriptID, false, MaxFieldBytes)
	p.text("extractor", r.Extractor, false, MaxFieldBytes)
	return p.err()
}

func checkURL(s string) error {
	if len(s) > MaxURLBytes {
		return fmt.Errorf("%d bytes, the limit is %d", len(s), MaxURLBytes)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

// feedbackCase checks a feedback case.
func (p *problems) feedbackCase(field string, c *Case) {
	if c == nil {
		return
	}
	p.text(field+".task", c.Task, false, MaxTaskBytes)
	p.text(field+".outcome", c.Outcome, false, MaxFieldBytes)
	p.text(field+".reason", c.Reason, false, MaxReasonBytes)
}

// ValidateUpdate checks an update request and returns every problem found,
// each naming its field, or nil.
func ValidateUpdate(r *UpdateRequest) error {
	if r == nil {
		return errors.New("update request: missing")
	}
	var p problems
	if !ValidID(r.ID) {
		p.add("id", "%q is not an entry id", r.ID)
	}
	switch r.Action {
	case ActionFeedback:
		if r.Helpful == nil {
			p.add("helpful", "required for feedback (true for helpful, false for harmful)")
		}
		p.feedbackCase("case", r.Case)
	case ActionSupersede:
		switch {
		case !ValidID(r.By):
			p.add("superseded_by", "%q is not an entry id", r.By)
		case r.By == r.ID:
			p.add("superseded_by", "an entry cannot supersede itself")
		}
	case ActionRevoke, ActionRelease:
	default:
		p.add("action", "%q is not one of %s, %s, %s, %s", r.Action, ActionFeedback, ActionSupersede, ActionRevoke, ActionRelease)
	}
	if r.Action != ActionFeedback && r.Case != nil {
		p.add("case", "only feedback carries a case")
	}
	p.text("reason", r.Reason, false, MaxReasonBytes)
	return p.err()
}

// Event returns the KH_KNOWLEDGE event of a validated update request.
func (r *UpdateRequest) Event(at time.Time) *Event {
	ev := &Event{Schema: contract.SchemaVersion, ID: r.ID, At: at, Reason: r.Reason}
	switch r.Action {
	case ActionFeedback:
		ev.Type = EventFeedback
		ev.Helpful = r.Helpful != nil && *r.Helpful
		if r.Case != nil {
			c := *r.Case
			ev.Case = &c
		}
	case ActionSupersede:
		ev.Type = EventSuperseded
		ev.By = r.By
	case ActionRevoke:
		ev.Type = EventRevoked
	case ActionRelease:
		ev.Type = EventReleased
	}
	return ev
}

// ValidateSearch checks a search request and returns every problem found,
// each naming its field, or nil. It normalizes the request in place: the
// default limit, types and scopes as in ValidateSave, and an empty format
// becomes OutputJSON.
func ValidateSearch(r *SearchRequest) error {
	if r == nil {
		return errors.New("search request: missing")
	}
	var p problems
	p.text("query", r.Query, true, MaxQueryBytes)
	switch {
	case r.Limit == 0:
		r.Limit = DefaultLimit
	case r.Limit < 0 || r.Limit > MaxLimit:
		p.add("limit", "%d is outside 1–%d", r.Limit, MaxLimit)
	}
	r.Types = p.types("types", r.Types, false)
	r.Scopes = p.scopes("scopes", r.Scopes)
	if r.MinScore < 0 || r.MinScore > MaxScore {
		p.add("min_score", "%d is outside 0–%d", r.MinScore, MaxScore)
	}
	switch r.Format {
	case "":
		r.Format = OutputJSON
	case OutputJSON, OutputPrompt:
	default:
		p.add("format", "%q is not %s or %s", r.Format, OutputJSON, OutputPrompt)
	}
	return p.err()
}
