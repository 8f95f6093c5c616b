package contract

import "time"

// Knowledge payloads: the bodies of the kh.kb.* and kh.search.kb requests
// and replies, the KH_KNOWLEDGE events and the KH_KB record. Package kb
// validates, folds and ranks them.

// KnowledgeSubject is the KH_KNOWLEDGE subject of an entry's events.
func KnowledgeSubject(id string) string { return SubjectKnowledge + "." + id }

// KBIndexKey is the KH_INDEX key of a knowledge entry.
func KBIndexKey(id string) string { return CollectionKB + "." + id }

// KBSource says where an entry came from.
type KBSource struct {
	Name        string   `json:"name,omitempty"`
	Category    string   `json:"category,omitempty"`
	URLs        []string `json:"urls,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	SubmittedBy string   `json:"submitted_by,omitempty"`
	MessageID   string   `json:"message_id,omitempty"`
}

// KBCase is one use of an entry reported with feedback: the task it was used
// for, what happened and why it helped or harmed.
type KBCase struct {
	Task      string    `json:"task,omitempty"`
	Outcome   string    `json:"outcome,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// KBEval is the evaluation of an entry: the author's score and the feedback
// history.
type KBEval struct {
	// Score is the author's own rating, 1 (weak) to 5 (strong).
	Score   int `json:"score"`
	Helpful int `json:"helpful"`
	Harmful int `json:"harmful"`
	// RecentCases are the last MaxRecentCases feedback cases, oldest first.
	RecentCases []KBCase `json:"recent_cases,omitempty"`
}

// KBEntry is the current record of a knowledge entry: the KH_KB value, a fold
// of its KH_KNOWLEDGE events.
type KBEntry struct {
	ID      string   `json:"id"`
	Task    string   `json:"task"`
	Content string   `json:"content"`
	Types   []string `json:"types"`
	Eval    KBEval   `json:"eval"`
	// QualityScore in [0,1] is computed by the fold from Eval (see
	// QualityScore); it is never taken from a request.
	QualityScore float64  `json:"quality_score"`
	Scopes       []string `json:"scopes,omitempty"`
	Owner        string   `json:"owner,omitempty"`
	Source       KBSource `json:"source"`
	State        string   `json:"state"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	// DuplicateOf links a near duplicate to the entry it resembles; search
	// shows only the better of the two.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Quarantine is why screening flagged the entry; empty unless the entry
	// is or was quarantined and not yet released.
	Quarantine string `json:"quarantine_reason,omitempty"`
	// StateReason is the reason given with the last state change (revoked,
	// superseded, retired, released).
	StateReason string `json:"state_reason,omitempty"`
	// Revises is the entry this one is a revision of: following it walks
	// an entry's history, version by version.
	Revises string `json:"revises,omitempty"`
	// MergedFrom are the near duplicates merged into this entry, whose
	// feedback it carries.
	MergedFrom []string  `json:"merged_from,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Seq is the KH_KNOWLEDGE sequence of the last event that changed the
	// entry; an event at or below it is a replay and changes nothing.
	Seq          uint64 `json:"seq"`
	TranscriptID string `json:"transcript_id,omitempty"`
	Extractor    string `json:"extractor,omitempty"`
}

// KBSaveRequest is the body of kb.save.
type KBSaveRequest struct {
	Task    string   `json:"task"`
	Content string   `json:"content"`
	Types   []string `json:"types"`
	// Score is the author's rating 1–5; zero means DefaultScore.
	Score  int      `json:"score,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	Owner  string   `json:"owner,omitempty"`
	Source KBSource `json:"source"`
	// TranscriptID and Extractor record lineage when the extractor, not an
	// agent, saved the entry.
	TranscriptID string `json:"transcript_id,omitempty"`
	Extractor    string `json:"extractor,omitempty"`
}

// KBSaveResponse is the reply of kb.save.
type KBSaveResponse struct {
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

// KBUpdateRequest is the body of kb.update. Revoke and release are operator
// actions: the transport must check that the caller may moderate.
type KBUpdateRequest struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	// Helpful is required for feedback: true counts as helpful, false as
	// harmful.
	Helpful *bool   `json:"helpful,omitempty"`
	Case    *KBCase `json:"case,omitempty"`
	// By is the id of the replacing entry, required for supersede.
	By     string `json:"superseded_by,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Content, required for revise, is the corrected knowledge; Task, when
	// set, replaces the task too.
	Content string `json:"content,omitempty"`
	Task    string `json:"task,omitempty"`
}

// KBUpdateResponse is the reply of kb.update.
type KBUpdateResponse struct {
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
	// Evolved says what the feedback or revision changed beyond itself:
	// the entry retired, merged into another, or replaced by a revision.
	Evolved []KBEvolution `json:"evolved,omitempty"`
}

// KBEvolution is one change the knowledge evolution rules made.
type KBEvolution struct {
	Action string `json:"action"` // retired, merged or revised
	ID     string `json:"id"`     // the entry that changed
	Into   string `json:"into,omitempty"`
	Reason string `json:"reason"`
}

// KBSearchRequest is the body of kb.search. Scopes are the caller's scopes;
// the transport should take them from the caller's identity when it has
// one rather than trust the body.
type KBSearchRequest struct {
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
	// MinScore keeps only entries whose author score is at least this
	// (any number: 3.5 keeps the entries scored 4 and 5); zero means no
	// filter.
	MinScore float64 `json:"min_score,omitempty"`
	Format   string  `json:"format,omitempty"`
}

// KBHit is one ranked entry in a search response.
type KBHit struct {
	KBEntry
	// Relevance is the text score from the index; Score is the final score
	// (see Rank).
	Relevance float64 `json:"relevance"`
	Score     float64 `json:"score"`
}

// KBSearchResponse is the reply of kb.search. With format=prompt, Prompt holds
// the hits rendered by FormatPrompt and Hits is still filled.
type KBSearchResponse struct {
	Query      string  `json:"query"`
	Hits       []KBHit `json:"hits"`
	Total      int     `json:"total"`
	Prompt     string  `json:"prompt,omitempty"`
	TookMicros int64   `json:"took_us"`
	Completeness
}

// KBEvent is the payload of a KH_KNOWLEDGE message, published on KnowledgeSubject(ID).
// The current record of an entry is the fold of its events in stream order.
type KBEvent struct {
	Schema int       `json:"schema"`
	Type   string    `json:"type"`
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	// Save is the validated request of a saved event.
	Save *KBSaveRequest `json:"save,omitempty"`
	// Case and Helpful are the feedback of a feedback event.
	Case    *KBCase `json:"case,omitempty"`
	Helpful bool    `json:"helpful,omitempty"`
	// By is the replacing entry of a superseded event.
	By     string `json:"superseded_by,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Quarantine, on a saved event, is why screening flagged the content;
	// the entry starts quarantined.
	Quarantine string `json:"quarantine_reason,omitempty"`
	// NearDuplicateOf, on a saved event, links the entry to the existing
	// entry it closely resembles.
	NearDuplicateOf string `json:"near_duplicate_of,omitempty"`
	// Revises, on a saved event, names the entry the new one is a
	// revision of.
	Revises string `json:"revises,omitempty"`
	// Merged, on a merged event, is the near duplicate absorbed and the
	// feedback it brings.
	Merged *KBMerge `json:"merged,omitempty"`
}

// KBMerge is what a merged event carries over from the absorbed entry.
type KBMerge struct {
	From    string `json:"from"`
	Helpful int    `json:"helpful"`
	Harmful int    `json:"harmful"`
}
