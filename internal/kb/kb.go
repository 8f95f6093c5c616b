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

// TypeAliases are the type names other agent memory designs use (the
// KnowHub plugin's examples among them), mapped to knowhub's closed
// vocabulary when a request is validated: the entry is stored and searched
// under the known type.
var TypeAliases = map[string]string{
	"best-practice": TypeStrategy,
	"best_practice": TypeStrategy,
	"solution":      TypeUsecase,
}

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
	StateRetired     = "retired"     // taken out by repeated harmful feedback, waiting for review
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
	ActionRevise    = "revise"
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
		if a, ok := TypeAliases[t]; ok {
			t = a
		}
		if !slices.Contains(KnownTypes(), t) {
			p.add(fmt.Sprintf("%s[%d]", field, i), "%q is not a known type (%s; best-practice and solution are read as strategy and usecase)", ts[i], strings.Join(KnownTypes(), ", "))
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
// score (the field left out: 0 is not a score) becomes DefaultScore, types
// are trimmed, lower-cased, mapped through TypeAliases and de-duplicated, scopes are trimmed and de-duplicated.
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
	case ActionRevise:
		p.text("content", r.Content, true, MaxContentBytes)
		p.text("task", r.Task, false, MaxTaskBytes)
	case ActionRevoke, ActionRelease:
	default:
		p.add("action", "%q is not one of %s, %s, %s, %s, %s", r.Action, ActionFeedback, ActionSupersede, ActionRevise, ActionRevoke, ActionRelease)
	}
	if r.Action != ActionRevise && (r.Content != "" || r.Task != "") {
		p.add("content", "only a revision carries content or a task")
	}
	if r.Action != ActionFeedback && r.Case != nil {
		p.add("case", "only feedback carries a case")
	}
	p.text("reason", r.Reason, false, MaxReasonBytes)
	return p.err()
}

// UpdateEvent returns the KH_KNOWLEDGE event of a validated update request.
func UpdateEvent(r *UpdateRequest, at time.Time) *Event {
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
	if !(r.MinScore >= 0 && r.MinScore <= MaxScore) { // NaN too
		p.add("min_score", "%g is outside 0–%d", r.MinScore, MaxScore)
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
