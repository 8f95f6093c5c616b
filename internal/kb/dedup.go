package kb

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/contract"
)

// NearDuplicateThreshold is the cosine similarity of content term vectors
// at or above which a new entry is a near duplicate of an existing one.
// Rewordings of one piece of knowledge (reordered clauses, inflections,
// added filler) score 0.9 and above; distinct entries on the same topic
// (same tools, another fix) stay well below; see the similarity tests.
const NearDuplicateThreshold = 0.9

// Kinds of duplicate reported by CheckDuplicate.
const (
	DuplicateExact = "exact" // same normalized content, same scopes
	DuplicateNear  = "near"  // similar content, same scopes
)

// Normalize returns content in the form used for exact-duplicate detection:
// NFKC, format characters (zero-width spaces, joiners, bidi controls)
// removed, lower-cased, every run of white space collapsed to one space,
// and punctuation and space trimmed at both ends. Two saves that differ
// only in case, spacing or a trailing full stop normalize equal.
func Normalize(content string) string {
	s := norm.NFKC.String(content)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimFunc(b.String(), func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// ContentHash is the exact-duplicate key of an entry: the hex SHA-256 of
// its normalized content and its scope set (sorted, without duplicates, so
// the order of scopes does not matter), each length-prefixed. The same content saved in another
// scope set is another entry.
func ContentHash(normalized string, scopes []string) string {
	set := slices.Clone(scopes)
	slices.Sort(set)
	set = slices.Compact(set)
	h := sha256.New()
	h.Write([]byte("kb1"))
	for _, part := range append([]string{normalized}, set...) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NewID returns the id of the entry a save request creates: the first 16
// hex digits of its ContentHash. An exact duplicate therefore has the id of
// the entry it duplicates, and a redelivered save folds into nothing new.
func NewID(r *SaveRequest) string {
	return ContentHash(Normalize(r.Content), r.Scopes)[:16]
}

// Similarity is the cosine similarity of two term-frequency vectors, in
// [0,1]; it is 0 when either is empty.
func Similarity(a, b map[string]int) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(b) < len(a) {
		a, b = b, a
	}
	var dot, na, nb float64
	for t, x := range a {
		na += float64(x) * float64(x)
		if y, ok := b[t]; ok {
			dot += float64(x) * float64(y)
		}
	}
	for _, y := range b {
		nb += float64(y) * float64(y)
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return min(dot/math.Sqrt(na*nb), 1)
}

// ContentTerms returns the term-frequency vector of content, the vector
// Similarity compares; it is the FieldContent vector of BuildDoc.
func ContentTerms(an *analysis.Analyzer, content string) map[string]int {
	m := map[string]int{}
	an.TermFreqs(content, m)
	return m
}

// Candidate is an existing entry that a save may duplicate, typically one
// of the best index hits for the new content among the entries the saver
// can see. Terms is its content vector; when nil it is computed from
// Entry.Content.
type Candidate struct {
	Entry *Entry
	Terms map[string]int
}

// Match is what CheckDuplicate found.
type Match struct {
	// Kind is DuplicateExact, DuplicateNear or empty (no duplicate).
	Kind string
	// ID is the matching entry.
	ID string
	// LinkTo is the entry a near duplicate is linked to: the match's own
	// DuplicateOf when it has one, so links always point at the first entry
	// of a cluster, else ID.
	LinkTo     string
	Similarity float64
	// Supersede is set for a near duplicate that replaces the match rather
	// than joining it: both have the same non-empty owner, so this is the
	// author revising their own entry.
	Supersede bool
	// State is the state of the matched entry.
	State string
}

// CheckDuplicate compares a validated save request with candidates. An
// exact duplicate is a candidate, in any state, with the same ContentHash.
// Otherwise a near duplicate is the active candidate with the same scope
// set whose content similarity is highest and at least
// NearDuplicateThreshold (ties go to the smaller id). Candidates in other
// scope sets are never matched: linking across audiences would reveal an
// entry to callers who cannot see it.
func CheckDuplicate(r *SaveRequest, cands []Candidate, an *analysis.Analyzer) Match {
	key := ContentHash(Normalize(r.Content), r.Scopes)
	scopes := scopeSet(r.Scopes)
	var terms map[string]int
	var best Match
	for _, c := range cands {
		e := c.Entry
		if e == nil {
			continue
		}
		if ContentHash(Normalize(e.Content), e.Scopes) == key {
			return Match{Kind: DuplicateExact, ID: e.ID, LinkTo: e.ID, Similarity: 1, State: e.State}
		}
		if e.State != StateActive || !slices.Equal(scopeSet(e.Scopes), scopes) {
			continue
		}
		if terms == nil {
			terms = ContentTerms(an, r.Content)
		}
		ct := c.Terms
		if ct == nil {
			ct = ContentTerms(an, e.Content)
		}
		sim := Similarity(terms, ct)
		if sim < NearDuplicateThreshold || sim < best.Similarity || (sim == best.Similarity && best.ID != "" && e.ID > best.ID) {
			continue
		}
		link := e.ID
		if e.DuplicateOf != "" {
			link = e.DuplicateOf
		}
		best = Match{
			Kind:       DuplicateNear,
			ID:         e.ID,
			LinkTo:     link,
			Similarity: sim,
			Supersede:  r.Owner != "" && r.Owner == e.Owner,
			State:      e.State,
		}
	}
	return best
}

func scopeSet(scopes []string) []string {
	set := slices.Clone(scopes)
	slices.Sort(set)
	return slices.Compact(set)
}

// Plan is what a kb.save does: either nothing (an exact duplicate exists)
// or the events to append to KH_KNOWLEDGE, in order, each on
// Subject(event.ID).
type Plan struct {
	ID       string
	Existing bool
	Events   []*Event
	Match    Match
	// Quarantine is why screening flagged the content, if it did.
	Quarantine string
}

// PlanSave validates a save request (normalizing it in place, see
// ValidateSave) and plans it against the candidates it may duplicate:
//
//   - exact duplicate: no events, ID is the existing entry;
//   - content flagged by screen: a saved event with the quarantine reason
//     (linked to a near duplicate if there is one, never superseding it);
//   - near duplicate by the same owner: a saved event for the new entry and
//     a superseded event for the old one;
//   - near duplicate by someone else: a saved event linked to it
//     (NearDuplicateOf), so search shows one of the two;
//   - otherwise a plain saved event.
//
// Cands should hold the KH_KB record stored under NewID(r), if there is
// one, so that an exact duplicate is found even when the index does not
// return it (quarantined and revoked entries are not in the index), plus
// the best index hits for the content among entries the saver can see.
// Even if a duplicate is missed, its saved event folds into nothing (same
// id).
func PlanSave(r *SaveRequest, cands []Candidate, an *analysis.Analyzer, screen *Screen, at time.Time) (*Plan, error) {
	if err := ValidateSave(r); err != nil {
		return nil, fmt.Errorf("plan save: %w", err)
	}
	if screen == nil {
		return nil, errors.New("plan save: no screen")
	}
	m := CheckDuplicate(r, cands, an)
	if m.Kind == DuplicateExact {
		return &Plan{ID: m.ID, Existing: true, Match: m}, nil
	}
	id := NewID(r)
	reason, flagged := screen.CheckSave(r)
	saved := &Event{
		Schema:     contract.SchemaVersion,
		Type:       EventSaved,
		ID:         id,
		At:         at,
		Save:       cloneSave(r),
		Quarantine: reason,
	}
	p := &Plan{ID: id, Events: []*Event{saved}, Match: m, Quarantine: reason}
	if m.Kind != DuplicateNear {
		return p, nil
	}
	if !m.Supersede || flagged {
		p.Match.Supersede = false
		saved.NearDuplicateOf = m.LinkTo
		return p, nil
	}
	if m.LinkTo != m.ID {
		saved.NearDuplicateOf = m.LinkTo
	}
	p.Events = append(p.Events, &Event{
		Schema: contract.SchemaVersion,
		Type:   EventSuperseded,
		ID:     m.ID,
		At:     at,
		By:     id,
		Reason: "revised by its owner (near duplicate)",
	})
	return p, nil
}

// Response is the kb.save reply for the plan; seq is the KH_KNOWLEDGE
// sequence of the saved event (zero for an exact duplicate).
func (p *Plan) Response(seq uint64) SaveResponse {
	resp := SaveResponse{ID: p.ID, Duplicate: p.Match.Kind, Similarity: p.Match.Similarity, Quarantine: p.Quarantine, Seq: seq}
	switch {
	case p.Existing:
		resp.State = p.Match.State
		resp.Similarity = 0
	case p.Quarantine != "":
		resp.State = StateQuarantined
	default:
		resp.State = StateActive
	}
	if p.Match.Kind == DuplicateNear {
		if p.Match.Supersede {
			resp.Supersedes = p.Match.ID
		} else {
			resp.DuplicateOf = p.Match.LinkTo
		}
	}
	return resp
}
