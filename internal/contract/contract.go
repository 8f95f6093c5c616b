// Package contract is the wire contract between knowhub's workers: stream,
// subject and bucket names, header keys, event payloads and their schema
// version. Every worker imports it; nothing here touches the network.
package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SchemaVersion is carried by every payload; a consumer rejects (to the
// dead-letter stream) a payload whose schema is newer than it understands.
const SchemaVersion = 1

// Stream names.
const (
	StreamFiles       = "KH_FILES"
	StreamChunks      = "KH_CHUNKS"
	StreamTools       = "KH_TOOLS"
	StreamKnowledge   = "KH_KNOWLEDGE"
	StreamTranscripts = "KH_TRANSCRIPTS"
	StreamDLQ         = "KH_DLQ"
)

// KV bucket names.
const (
	BucketIndex = "KH_INDEX"
	BucketKB    = "KH_KB"
)

// BucketStream is the name of the JetStream stream that holds a KV bucket.
func BucketStream(bucket string) string { return "KV_" + bucket }

// Subject prefixes. A full subject appends tokens as documented on each
// helper below.
const (
	SubjectFiles       = "kh.files"       // kh.files.<repo>.<fileKey>
	SubjectChunks      = "kh.chunks"      // kh.chunks.<repo>.<fileKey>
	SubjectTools       = "kh.tools"       // kh.tools.t.<toolKey> (see SubjectToolsEvents)
	SubjectKnowledge   = "kh.kb.e"        // kh.kb.e.<id> (kh.kb.save etc. are requests)
	SubjectTranscripts = "kh.transcripts" // kh.transcripts.<agent>
	SubjectDLQ         = "kh.dlq"         // kh.dlq.<stage>
)

// Request-reply subjects served by the query service (NATS micro).
const (
	ServiceName       = "knowhub"
	ServiceQueueGroup = "knowhub"
	SubjectSearchDocs = "kh.search.docs"
	SubjectReadDocs   = "kh.docs.read"
	SubjectDocsRepos  = "kh.docs.repos"
	SubjectDocsPages  = "kh.docs.pages"
	SubjectStats      = "kh.stats"
)

// Collections held in KH_INDEX; the first token of every index key.
const (
	CollectionDocs  = "docs"
	CollectionTools = "tools"
	CollectionKB    = "kb"
)

// Repository types. At equal priority a core repository wins a conflict.
const (
	RepoCore      = "core"
	RepoExtension = "extension"
)

// Header keys. Values never carry user content beyond a path.
const (
	HeaderOp          = "Kh-Op"           // OpPut or OpDelete
	HeaderRepo        = "Kh-Repo"         // repository name
	HeaderPath        = "Kh-Path"         // slash-separated path, URL-path-escaped
	HeaderSHA256      = "Kh-Sha256"       // hex SHA-256 of the raw file
	HeaderRepoMeta    = "Kh-Repo-Meta"    // RepoMeta.String() at publish time
	HeaderSourceSeq   = "Kh-Source-Seq"   // stream sequence of the input message
	HeaderCorrelation = "Kh-Correlation"  // follows a file from watcher to index
	HeaderSchema      = "Kh-Schema"       // payload schema version
	HeaderStage       = "Kh-Dlq-Stage"    // stage that dead-lettered a message
	HeaderReason      = "Kh-Dlq-Reason"   // why it was dead-lettered
	HeaderOrigSubject = "Kh-Dlq-Subject"  // subject the message was read from
	HeaderOrigSeq     = "Kh-Dlq-Sequence" // stream sequence it was read at
	HeaderDLQSize     = "Kh-Dlq-Size"     // size of the payload a dead letter leaves out
)

// Operations carried in HeaderOp.
const (
	OpPut    = "put"
	OpDelete = "del"
)

var repoNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidRepoName reports whether name can be used as a repository name: it
// becomes a subject token and a KV key token, so only letters, digits, '_'
// and '-' are allowed, at most 64 of them.
func ValidRepoName(name string) bool { return repoNameRE.MatchString(name) }

// FileKey returns the subject-safe key of a repository-relative path: the
// first 16 hex digits of its SHA-256.
func FileKey(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:8])
}

// FileSubject is the KH_FILES subject of one file.
func FileSubject(repo, path string) string {
	return SubjectFiles + "." + repo + "." + FileKey(path)
}

// ChunkSubject is the KH_CHUNKS subject of one file's chunk set.
func ChunkSubject(repo, path string) string {
	return SubjectChunks + "." + repo + "." + FileKey(path)
}

// DLQSubject is the dead-letter subject of a stage.
func DLQSubject(stage string) string { return SubjectDLQ + "." + stage }

// DocKey is the KH_INDEX key of one file of the docs collection.
func DocKey(repo, path string) string {
	return CollectionDocs + "." + repo + "." + FileKey(path)
}

// RepoMeta is what a repository contributes to conflict resolution. It
// travels with every file so that downstream stages need no configuration.
type RepoMeta struct {
	Priority int    `json:"priority"`
	Type     string `json:"type"`
	// Demote lists doublestar globs, relative to the repository root, of
	// pages that docs ranking places below current ones, like the pages of
	// a legacy folder: what the path alone does not tell.
	Demote []string `json:"demote,omitempty"`
}

// String renders the meta for HeaderRepoMeta; a change in it makes the
// watcher republish the repository's files. A meta without demote globs
// renders as it did before they existed.
func (m RepoMeta) String() string {
	s := fmt.Sprintf("p=%d;t=%s", m.Priority, m.Type)
	if len(m.Demote) > 0 {
		s += ";d=" + strings.Join(m.Demote, ",")
	}
	return s
}

// FileEvent is the payload of a KH_FILES message: the latest redacted
// content of a file, or its tombstone.
type FileEvent struct {
	Schema  int      `json:"schema"`
	Repo    string   `json:"repo"`
	Path    string   `json:"path"`
	SHA256  string   `json:"sha256,omitempty"`
	Size    int64    `json:"size,omitempty"`
	Meta    RepoMeta `json:"meta"`
	Deleted bool     `json:"deleted,omitempty"`
	Content string   `json:"content,omitempty"`
}

// Chunk is one heading section of a Markdown file.
type Chunk struct {
	// ID is deterministic: the same file content always yields the same IDs,
	// unique within the file even when a heading path repeats.
	ID          string   `json:"id"`
	Ord         int      `json:"ord"`
	HeadingPath []string `json:"heading_path,omitempty"`
	// Title, Summary and ReadWhen come from the file's front matter (or,
	// for Title, its first heading or file name). They are searchable fields.
	Title    string `json:"title,omitempty"`
	Summary  string `json:"summary,omitempty"`
	ReadWhen string `json:"read_when,omitempty"`
	// Text is the section body as plain text (Markdown syntax removed,
	// code kept), already redacted.
	Text string `json:"text"`
	// Markdown is the section body as written (its heading line left
	// out), already redacted: code fences with their language, inline
	// code, links and tables intact. Empty when the section was split
	// into parts, whose Text then stands in for it.
	Markdown string `json:"markdown,omitempty"`
}

// ChunkSet is the payload of a KH_CHUNKS message: every chunk of one
// version of a file, replacing any earlier set as a unit.
type ChunkSet struct {
	Schema  int      `json:"schema"`
	Repo    string   `json:"repo"`
	Path    string   `json:"path"`
	SHA256  string   `json:"sha256,omitempty"`
	FileSeq uint64   `json:"file_seq"`
	Meta    RepoMeta `json:"meta"`
	Deleted bool     `json:"deleted,omitempty"`
	Chunks  []Chunk  `json:"chunks,omitempty"`
}

// Field names of indexed text. Docs use Title, Summary (front matter
// summary and read_when), Heading and Body; tools use
// Name, Keywords and Description; knowledge uses Task and Content.
const (
	FieldTitle       = "title"
	FieldSummary     = "summary"
	FieldHeading     = "heading"
	FieldBody        = "body"
	FieldName        = "name"
	FieldKeywords    = "keywords"
	FieldDescription = "description"
	FieldGrams       = "grams" // character n-grams of the tool fields
	FieldTask        = "task"
	FieldContent     = "content"
)

// IndexChunk is one searchable unit in KH_INDEX: display text plus raw
// term frequencies per field. IDF and length norms are applied by the query
// service from live statistics, never stored.
type IndexChunk struct {
	ID          string   `json:"id"`
	Ord         int      `json:"ord"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Title       string   `json:"title,omitempty"`
	Text        string   `json:"text"`
	// Markdown is the chunk's Chunk.Markdown, returned to agents.
	Markdown string `json:"markdown,omitempty"`
	// Terms is the chunk's term frequencies by field, as producers build
	// them. A compact document (see IndexDoc.Compact) has Fields instead.
	Terms map[string]map[string]int `json:"terms,omitempty"`
	// Fields is the compact form of Terms: per field, in field order.
	Fields []FieldTerms `json:"fields,omitempty"`
	// Boost multiplies the chunk's score; 0 means 1. Navigation sections
	// ("Related", "See also") get less than 1.
	Boost float64 `json:"boost,omitempty"`
	// Vec is the chunk's meaning as one vector pooled from its words
	// (semantic.Encode: int8 components), or nil when none of its words
	// has a vector.
	Vec []byte `json:"vec,omitempty"`
	// Embedding is the chunk's vector from the configured embeddings
	// endpoint (int8 components like Vec), in the space of
	// IndexDoc.EmbeddingModel, or nil.
	Embedding []byte `json:"embedding,omitempty"`
}

// FieldTerms is one field's term frequencies in a compact document: Terms
// are ascending indexes into IndexDoc.Vocab, TFs their frequencies.
type FieldTerms struct {
	Field string   `json:"field"`
	Terms []uint32 `json:"terms"`
	TFs   []uint32 `json:"tfs"`
}

// ChunkVersion identifies what the chunker makes of a file: bump it when
// the chunks of the same file change (where they are cut, their Text or
// their Markdown), so that `knowhub up` rebuilds an older index from
// KH_FILES. c2: the parts of a section split for length carry their
// Markdown too.
const ChunkVersion = "c2"

// DocsBuild returns what IndexDoc.Analyzer holds for a docs document built
// by analyzer version analyzer from chunks of ChunkVersion, as in "a3/c2".
// A docs document that holds anything else is rebuilt.
func DocsBuild(analyzer string) string { return analyzer + "/" + ChunkVersion }

// IndexDoc is the KH_INDEX value of one source document (a file, a tool, a
// knowledge entry). It is replaced as a unit; a Deleted doc is a tombstone
// that keeps SourceSeq so a stale message cannot resurrect it.
type IndexDoc struct {
	Schema     int          `json:"schema"`
	Analyzer   string       `json:"analyzer"` // a docs document's: DocsBuild
	Collection string       `json:"collection"`
	Repo       string       `json:"repo,omitempty"`
	Path       string       `json:"path,omitempty"`
	SourceSeq  uint64       `json:"source_seq"`
	Meta       RepoMeta     `json:"meta"`
	Deleted    bool         `json:"deleted,omitempty"`
	Chunks     []IndexChunk `json:"chunks,omitempty"`
	// Tool is the descriptor of a tools-collection document.
	Tool *Tool `json:"tool,omitempty"`
	// Record is the collection's own record of the document as JSON (the
	// knowledge entry), for filters the index cannot express.
	Record json.RawMessage `json:"record,omitempty"`
	// Vocab lists the distinct terms of a compact document, each once; its
	// chunks' Fields index it.
	Vocab []string `json:"vocab,omitempty"`
	// EmbeddingModel names the model of the chunks' Embedding vectors;
	// empty when they have none.
	EmbeddingModel string `json:"embedding_model,omitempty"`
}

// Path normalisation shared by the watcher and conflict resolution.

// SectionKey is the normalised section path used to group hits across
// repositories: lower-cased path without extension, then the heading path.
func SectionKey(path string, headingPath []string) string {
	p := strings.ToLower(path)
	for _, ext := range []string{".mdx", ".md", ".markdown"} {
		p = strings.TrimSuffix(p, ext)
	}
	n := len(p)
	for _, h := range headingPath {
		n += len(" > ") + len(h)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(p)
	for _, h := range headingPath {
		b.WriteString(" > ")
		writeFolded(&b, h)
	}
	return b.String()
}

// writeFolded writes h lower-cased with its runs of white space collapsed
// to one space and trimmed: strings.Join(strings.Fields(strings.ToLower(h)), " ")
// without the intermediate strings.
func writeFolded(b *strings.Builder, h string) {
	space, started := false, false
	for _, r := range h {
		if unicode.IsSpace(r) {
			space = started
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		started = true
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
	}
}
