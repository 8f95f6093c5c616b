package contract

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// Shards. A deployment may split the docs collection into N shards: each
// docs page belongs to one shard, by a stable hash of its KH_INDEX key
// (repository and path), and each shard's query replicas search only its
// pages while holding the statistics of every page. A docs search reaches
// any replica on SubjectSearchDocs; that replica asks one replica of every
// shard (SubjectShard) for its part and merges them. Tools and knowledge
// are not sharded: every replica holds them whole.

// MaxShards bounds a deployment's shard count.
const MaxShards = 64

// ShardOf returns the shard, of n, that the KH_INDEX key belongs to: FNV-1a
// of the key modulo n. It never changes for a key and a count, so every
// replica, indexer or client agrees without configuration beyond n.
func ShardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum64() % uint64(n))
}

// Shard operations: the last token of a shard subject. Requests are JSON;
// search and page replies are binary (EncodeShardReply), sent in parts
// when longer than a message (internal/api), the others JSON.
const (
	ShardSearch = "search" // ShardSearchRequest → ShardSearchReply
	ShardPage   = "page"   // ShardPageRequest → ShardSearchReply: a page's sections in order
	ShardRead   = "read"   // DocsReadRequest → DocsReadResponse, from the shard's pages
	ShardPages  = "pages"  // DocsPagesRequest → DocsPagesResponse, the shard's pages
	ShardRepos  = "repos"  // {} → DocsReposResponse, the shard's repositories
	ShardStats  = "stats"  // {} → StatsResponse, the shard's counts
)

// ShardSubject is the subject on which the replicas of shard i of n answer
// op: kh.shard.<n>.<i>.<op>. The count is part of it, so replicas
// configured for different counts never answer for one another.
func ShardSubject(n, i int, op string) string {
	return "kh.shard." + strconv.Itoa(n) + "." + strconv.Itoa(i) + "." + op
}

// ShardQueueGroup is the queue group of shard i of n's replicas: one of
// them answers each request.
func ShardQueueGroup(n, i int) string { return fmt.Sprintf("knowhub-shard-%d-%d", n, i) }

// ShardServiceName names the NATS micro service of a shard's endpoints.
const ShardServiceName = "knowhub-shard"

// ShardTerm is one analysed query term (see search.Term).
type ShardTerm struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
	Group  int     `json:"group"`
}

// ShardSearchRequest asks a shard for its part of a docs search: its best
// Limit sections for the analysed terms, scored with the whole
// collection's statistics, and with Embedding its Near sections nearest to
// that vector.
type ShardSearchRequest struct {
	Terms []ShardTerm `json:"terms"`
	Repos []string    `json:"repos,omitempty"`
	// Lang is a normalised language tag; pages of no known language pass.
	Lang      string    `json:"lang,omitempty"`
	Limit     int       `json:"limit"`
	Embedding []float32 `json:"embedding,omitempty"`
	Near      int       `json:"near,omitempty"`
	// WithMarkdown asks for the sections' Markdown (a reply with contents
	// or a token budget), WithTerms for their terms (conflicts between
	// repositories to resolve), WithVectors for their endpoint vectors:
	// each is left out otherwise, the reply being the bulk of a sharded
	// search's cost.
	WithMarkdown bool `json:"with_markdown,omitempty"`
	WithTerms    bool `json:"with_terms,omitempty"`
	WithVectors  bool `json:"with_vectors,omitempty"`
}

// ShardPageRequest asks the shard holding a page for its sections.
type ShardPageRequest struct {
	Key string `json:"key"`
}

// ShardSearchReply is one shard's part: hits best first, the number of
// matching sections, the sections nearest to the query's vector, and the
// pages they belong to.
type ShardSearchReply struct {
	Shard   int           `json:"shard"`
	Sources []ShardSource `json:"sources"`
	Hits    []ShardHit    `json:"hits"`
	Total   int           `json:"total"`
	Near    []ShardHit    `json:"near,omitempty"`
}

// ShardSource is a page of a shard reply.
type ShardSource struct {
	Key            string   `json:"key"`
	Repo           string   `json:"repo"`
	Path           string   `json:"path"`
	SourceSeq      uint64   `json:"source_seq"`
	Priority       int      `json:"priority"`
	Type           string   `json:"type"`
	Demote         []string `json:"demote,omitempty"`
	Lang           string   `json:"lang,omitempty"`
	Chunks         int      `json:"chunks"`
	EmbeddingModel string   `json:"embedding_model,omitempty"`
	// Outline has bit g set when the page's headings hold a term of the
	// request's g-th word group (search.Index.OutlineCoverage).
	Outline uint64 `json:"outline,omitempty"`
}

// ShardHit is one section of a shard reply.
type ShardHit struct {
	Source      int      `json:"source"` // index into Sources
	ID          string   `json:"id"`
	Ord         int      `json:"ord"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Title       string   `json:"title,omitempty"`
	Text        string   `json:"text"`
	Markdown    string   `json:"markdown,omitempty"`
	SectionKey  string   `json:"section_key,omitempty"`
	Embedding   []byte   `json:"embedding,omitempty"`
	Score       float64  `json:"score"`
	Cos         float32  `json:"cos,omitempty"`
	// Coverage has bit g set when the section holds a term of the
	// request's g-th word group (search.Index.Coverage).
	Coverage uint64 `json:"coverage,omitempty"`
	// Terms are the section's distinct terms, for conflict resolution.
	Terms []string `json:"terms,omitempty"`
}
