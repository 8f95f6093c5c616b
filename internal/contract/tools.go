package contract

import "encoding/json"

// Tool types.
const (
	ToolCore    = "core"
	ToolSourced = "sourced"
)

// Tool-catalog subjects served by the query service.
const (
	SubjectSearchTools = "kh.search.tools"
	SubjectToolsUpsert = "kh.tools.upsert"
	SubjectToolsRemove = "kh.tools.remove"
	// SubjectToolsEvents is the KH_TOOLS prefix: kh.tools.t.<toolKey>.
	// (kh.tools.upsert and kh.tools.remove are requests, not events: the
	// extra "t" token keeps the stream from capturing them.)
	SubjectToolsEvents = SubjectTools + ".t"
)

// Tool is one callable tool as agents see it.
type Tool struct {
	// Name is the wire name agents bind to, e.g. "Bash" or
	// "github-personal__create_issue". Unique in the catalog.
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Type        string   `json:"type"`               // ToolCore or ToolSourced
	Instance    string   `json:"instance,omitempty"` // empty for core tools
	Keywords    []string `json:"keywords,omitempty"` // optional synonyms
	// InputSchema is stored and returned, never indexed: long schema text
	// dilutes relevance.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// ToolKey is the subject- and key-safe token of a tool name.
func ToolKey(name string) string { return FileKey(name) }

// ToolSubject is the KH_TOOLS subject of one tool.
func ToolSubject(name string) string { return SubjectToolsEvents + "." + ToolKey(name) }

// ToolIndexKey is the KH_INDEX key of one tool.
func ToolIndexKey(name string) string { return CollectionTools + "." + ToolKey(name) }

// ToolEvent is the payload of a KH_TOOLS message: the tool's current
// descriptor, or its removal.
type ToolEvent struct {
	Schema  int    `json:"schema"`
	Name    string `json:"name"`
	Deleted bool   `json:"deleted,omitempty"`
	Tool    *Tool  `json:"tool,omitempty"`
}

// ToolsUpsertRequest adds or replaces tools; the batch is validated as a
// whole and nothing is written if any tool is invalid.
type ToolsUpsertRequest struct {
	Tools []Tool `json:"tools"`
}

// ToolsRemoveRequest removes tools by name.
type ToolsRemoveRequest struct {
	Names []string `json:"names"`
}

// ToolsWriteResponse reports the KH_TOOLS sequence of each written tool.
type ToolsWriteResponse struct {
	Written []ToolWrite `json:"written"`
}

// ToolWrite is one tool written to KH_TOOLS.
type ToolWrite struct {
	Name string `json:"name"`
	Seq  uint64 `json:"seq"`
}

// Tool search detail levels.
const (
	DetailName     = "name"      // name and score
	DetailNameDesc = "name_desc" // plus description, type, instance (default)
	DetailFull     = "full"      // plus input_schema
)

// ToolSearchRequest asks kh.search.tools for the tools that fit a task.
type ToolSearchRequest struct {
	Query    string `json:"query"`
	Limit    int    `json:"limit,omitempty"`    // default 8, at most 50
	Type     string `json:"type,omitempty"`     // core, sourced or any
	Instance string `json:"instance,omitempty"` // only this instance
	Detail   string `json:"detail,omitempty"`   // see Detail*
	MinSeq   uint64 `json:"min_seq,omitempty"`  // wait until KH_TOOLS seq is applied
	// Semantic, when false, switches semantic matching off for this
	// request; unset leaves the service's setting.
	Semantic *bool `json:"semantic,omitempty"`
}

// How a tool hit matched its query (ToolHit.Match): its name is the query
// (exact) or starts with it (prefix); otherwise a word of the query is among
// its name, keywords or description (words), its description means what the
// query says (meaning), or both.
const (
	MatchExact        = "exact"
	MatchPrefix       = "prefix"
	MatchWords        = "words"
	MatchMeaning      = "meaning"
	MatchWordsMeaning = "words+meaning"
)

// ToolHit is one ranked tool; the fields beyond Name and Score depend on
// the requested detail.
type ToolHit struct {
	Name        string          `json:"name"`
	Score       float64         `json:"score"`
	Match       string          `json:"match,omitempty"` // one of the Match* labels
	Description string          `json:"description,omitempty"`
	Type        string          `json:"type,omitempty"`
	Instance    string          `json:"instance,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Seq         uint64          `json:"seq,omitempty"`
}

// ToolSearchResponse is the reply of kh.search.tools.
type ToolSearchResponse struct {
	Query string    `json:"query"`
	Hits  []ToolHit `json:"hits"`
	// Total is the number of tools that match, of which Hits are the
	// first Limit, counted among the Limit+64 best by words and the ones
	// near enough in meaning.
	Total      int   `json:"total"`
	TookMicros int64 `json:"took_us"`
	Completeness
}
