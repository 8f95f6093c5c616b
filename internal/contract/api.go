package contract

// Request-reply payloads of the query service (NATS micro endpoints and
// the HTTP API). Errors come back as a micro service error (headers
// Nats-Service-Error and Nats-Service-Error-Code) or an HTTP status with an
// ErrorResponse body.

// SearchRequest asks kh.search.docs for the best sections.
type SearchRequest struct {
	Query string `json:"query"`
	TopK  int    `json:"top_k,omitempty"`
	// Repos restricts hits to these repositories (before the top-k cut).
	Repos []string `json:"repos,omitempty"`
	// Lang restricts hits to pages in this language (a BCP 47 tag such
	// as "en" or "zh-CN"; regions are folded), before the top-k cut.
	// Pages too short to tell their language are kept.
	Lang string `json:"lang,omitempty"`
	// MinSeq, when set, waits (bounded) until the replica has applied index
	// updates from at least this source sequence.
	MinSeq uint64 `json:"min_seq,omitempty"`
	// NoSnippet skips building snippets (for callers that only rank).
	NoSnippet bool `json:"no_snippet,omitempty"`
	// Content returns each hit's section text, bounded per hit
	// (MaxHitContentBytes) and per reply (MaxReplyContentBytes).
	Content bool `json:"content,omitempty"`
	// Group is what a hit is: GroupSections (the default, "") ranks
	// sections, several of one page among them; GroupPages keeps each
	// page's best section only, so that the hits are distinct pages.
	Group string `json:"group,omitempty"`
	// Semantic, when false, switches semantic matching off for this
	// request; unset leaves the service's setting.
	Semantic *bool `json:"semantic,omitempty"`
	// MaxTokens, when set, is a budget of (estimated) tokens: the reply
	// holds the best sections whole while they fit, then the sections
	// around them on their pages (Context), and says what it holds
	// (Tokens). A section is cut only when the best one alone is over the
	// budget, and then at a paragraph, never in a code block.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Embedding is the query's unit vector from the configured
	// embeddings endpoint, set by the query replica, never by a caller.
	Embedding []float32 `json:"-"`
}

// The values of SearchRequest.Group.
const (
	GroupSections = "sections"
	GroupPages    = "pages"
)

// Bounds on the section text of a search reply with Content set: a longer
// section is cut at a word boundary and ends with an ellipsis; once a
// reply holds MaxReplyContentBytes, later hits carry none.
const (
	MaxHitContentBytes   = 4 << 10
	MaxReplyContentBytes = 24 << 10
)

// SearchHit is one ranked section.
type SearchHit struct {
	Collection  string   `json:"collection"`
	Repo        string   `json:"repo"`
	Path        string   `json:"path"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Title       string   `json:"title,omitempty"`
	ChunkID     string   `json:"chunk_id"`
	Score       float64  `json:"score"`
	Snippet     string   `json:"snippet,omitempty"`
	// Content is the section text, when the request asked for it: its
	// Markdown as indexed (redacted), fences, inline code, links and
	// tables intact, or its plain text for a section split into parts.
	Content string `json:"content,omitempty"`
	// ContentCut is set when Content was cut short by a bound.
	ContentCut bool   `json:"content_truncated,omitempty"`
	Seq        uint64 `json:"seq"`
	Priority   int    `json:"priority"`
	RepoType   string `json:"repo_type"`
	// Lang is the language of the hit's page (a docs page's locale folder
	// or text), omitted when undetermined.
	Lang string `json:"lang,omitempty"`
}

// ContextSection is a section a budgeted search adds for the context of a
// hit: its page's section before or after it.
type ContextSection struct {
	Repo        string   `json:"repo"`
	Path        string   `json:"path"`
	HeadingPath []string `json:"heading_path,omitempty"`
	ChunkID     string   `json:"chunk_id"`
	// Of is the chunk_id of the hit it surrounds.
	Of   string `json:"of"`
	Text string `json:"text"`
}

// ShadowedHit is a hit that lost conflict resolution to another repository's
// section with the same normalised path.
type ShadowedHit struct {
	SearchHit
	ShadowedBy string `json:"shadowed_by"` // repo:path#chunk of the winner
	Reason     string `json:"reason"`
}

// SearchResponse is the reply of kh.search.docs.
type SearchResponse struct {
	Query    string        `json:"query"`
	Hits     []SearchHit   `json:"hits"`
	Shadowed []ShadowedHit `json:"shadowed,omitempty"`
	// Total counts the matching sections that passed the filters.
	Total      int   `json:"total"`
	TookMicros int64 `json:"took_us"`
	// Context and Tokens answer a budgeted search (MaxTokens): the
	// sections added around the hits, and the estimated tokens of every
	// section text the reply holds.
	Context []ContextSection `json:"context,omitempty"`
	Tokens  int              `json:"tokens,omitempty"`
	Completeness
}

// Completeness says whether a search reply may be missing results: every
// search reply (docs, tools, knowledge; HTTP, NATS and MCP) embeds it.
type Completeness struct {
	// Indexing is true while the node's initial sync is still being
	// indexed: the reply comes from a partial index and results may be
	// missing. It is left out once the index is complete.
	Indexing bool `json:"indexing,omitempty"`
	// Partial is true when a shard of a sharded deployment did not answer
	// in time: the reply holds the other shards' results, and
	// MissingShards names the silent ones.
	Partial       bool  `json:"partial,omitempty"`
	MissingShards []int `json:"missing_shards,omitempty"`
}

// IndexingNote is the line shown beside results from a partial index.
const IndexingNote = "still indexing: results may be incomplete"

// PartialNote is the line shown beside results a shard is missing from.
const PartialNote = "partial results: a shard of the index did not answer"

// RepoStats counts one repository's indexed files and chunks.
type RepoStats struct {
	Repo   string `json:"repo"`
	Files  int    `json:"files"`
	Chunks int    `json:"chunks"`
	// Languages counts the repository's pages by language ("" for the
	// pages too short to tell); omitted for other collections.
	Languages map[string]int `json:"languages,omitempty"`
}

// CollectionStats describes one collection of a query replica.
type CollectionStats struct {
	Sources int    `json:"sources"`
	Chunks  int    `json:"chunks"`
	Terms   int    `json:"terms"`
	Applied uint64 `json:"applied_seq"`
}

// StatsResponse is the reply of kh.stats.
type StatsResponse struct {
	Ready       bool                       `json:"ready"`
	Collections map[string]CollectionStats `json:"collections"`
	Repos       []RepoStats                `json:"repos"`
	// IndexRevision is the last KH_INDEX revision this replica applied.
	IndexRevision uint64 `json:"index_revision"`
	Analyzer      string `json:"analyzer"`
	// Integrity names a problem found with the index (a damaged store
	// being rebuilt); empty when none is known.
	Integrity string `json:"integrity,omitempty"`
	// Problem names what keeps the node from making progress (the data
	// directory's disk is full); empty when none is known.
	Problem string `json:"problem,omitempty"`
	// Indexing is true while the initial sync is still being indexed.
	Indexing bool `json:"indexing,omitempty"`
	// Shards is the number of shards of a sharded deployment's docs
	// collection (absent: one); the docs counts are then every shard's
	// that answered. Partial and MissingShards name those that did not.
	Shards        int   `json:"shards,omitempty"`
	Partial       bool  `json:"partial,omitempty"`
	MissingShards []int `json:"missing_shards,omitempty"`
}

// ErrorResponse is the body of an HTTP error.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Read contexts: what a docs read returns around the section it names.
const (
	ReadSection    = "section"    // the section alone
	ReadNeighbours = "neighbours" // the section with the one before and the one after
	ReadPage       = "page"       // every section of its page, in order
)

// DocsReadRequest is the body of kh.docs.read: a section by its id (a
// hit's chunk_id), or a page by repository and path, with the context to
// return around it.
type DocsReadRequest struct {
	ID   string `json:"id,omitempty"`
	Repo string `json:"repo,omitempty"`
	Path string `json:"path,omitempty"`
	// Context is ReadSection (the default with an id), ReadNeighbours or
	// ReadPage (the default without one).
	Context string `json:"context,omitempty"`
}

// DocsSection is one section of a page as it is indexed.
type DocsSection struct {
	ID          string   `json:"id"`
	Ord         int      `json:"ord"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Text        string   `json:"text"`
}

// DocsReadResponse is the reply of kh.docs.read: the sections asked for,
// in page order, and where they stand in their page.
type DocsReadResponse struct {
	Repo     string `json:"repo"`
	Path     string `json:"path"`
	Title    string `json:"title,omitempty"`
	RepoType string `json:"repo_type"`
	Priority int    `json:"priority"`
	Seq      uint64 `json:"seq"`
	// Sections are the ones asked for, ordered as on the page; Target is
	// the index among them of the section the id named (-1 for a page).
	Sections []DocsSection `json:"sections"`
	Target   int           `json:"target"`
	// PageSections is how many sections the page has.
	PageSections int `json:"page_sections"`
}

// DocsRepo is one repository of the docs index, as kh.docs.repos lists it.
type DocsRepo struct {
	Repo     string `json:"repo"`
	Type     string `json:"type"`
	Priority int    `json:"priority"`
	Files    int    `json:"files"`
	Sections int    `json:"sections"`
	// LastSeq is the KH_FILES sequence of its newest file version: it
	// grows with every change the repository sees.
	LastSeq uint64 `json:"last_seq"`
}

// DocsReposResponse is the reply of kh.docs.repos.
type DocsReposResponse struct {
	Repos []DocsRepo `json:"repos"`
	Completeness
}

// DocsPagesRequest is the body of kh.docs.pages: a repository's pages, by
// path, Limit (default 100, at most 1000) from Offset.
type DocsPagesRequest struct {
	Repo   string `json:"repo"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// DocsPage is one page of a repository.
type DocsPage struct {
	Path     string `json:"path"`
	Title    string `json:"title,omitempty"`
	Sections int    `json:"sections"`
	Seq      uint64 `json:"seq"`
}

// DocsPagesResponse is the reply of kh.docs.pages; Total counts the
// repository's pages.
type DocsPagesResponse struct {
	Repo  string     `json:"repo"`
	Pages []DocsPage `json:"pages"`
	Total int        `json:"total"`
	Completeness
}
