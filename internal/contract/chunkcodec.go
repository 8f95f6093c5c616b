package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// chunkSetMagic starts a binary chunk set: the magic byte, then the
// S2-compressed body (length-prefixed strings and varints). A chunk set is
// mostly section text, which S2 halves, and the binary body decodes
// without JSON's validation and unescaping passes. A chunk set that starts
// otherwise is read as JSON, the form other producers may publish.
//
// chunkSetMagic's layout carries each chunk's Markdown after its Text;
// chunkSetMagicV1, still read, has none.
const (
	chunkSetMagicV1 = 0xC5
	chunkSetMagic   = 0xC6
)

// maxChunkSetBytes bounds a decoded chunk set, so a corrupt length cannot
// make the indexer allocate without limit; a file's chunk set is about the
// size of the file (4 MB by default).
const maxChunkSetBytes = 64 << 20

// EncodeChunkSet encodes cs for KH_CHUNKS.
func EncodeChunkSet(cs *ChunkSet) []byte {
	w := getWriter()
	defer putWriter(w)
	w.uint(uint64(cs.Schema))
	w.str(cs.Repo)
	w.str(cs.Path)
	w.str(cs.SHA256)
	w.uint(cs.FileSeq)
	w.int(int64(cs.Meta.Priority))
	w.str(cs.Meta.Type)
	w.bool(cs.Deleted)
	w.uint(uint64(len(cs.Chunks)))
	for i := range cs.Chunks {
		c := &cs.Chunks[i]
		w.str(c.ID)
		w.int(int64(c.Ord))
		w.strs(c.HeadingPath)
		w.str(c.Title)
		w.str(c.Summary)
		w.str(c.ReadWhen)
		w.str(c.Text)
		w.str(c.Markdown)
	}
	writeDemote(w, cs.Meta.Demote)
	return w.compress([]byte{chunkSetMagic})
}

// DecodeChunkSet decodes a KH_CHUNKS payload, binary or JSON. Every string
// must be valid UTF-8.
func DecodeChunkSet(b []byte) (*ChunkSet, error) {
	return DecodeChunkSetLimit(b, (maxChunkSetBytes-EventOverhead)/2)
}

// DecodeChunkSetLimit is DecodeChunkSet of the chunk set of a file of at
// most maxFile bytes: its body may hold twice that (section text plus the
// heading paths repeated per chunk) and EventOverhead. A compressed body
// that declares more is rejected before anything is allocated for it.
func DecodeChunkSetLimit(b []byte, maxFile int) (*ChunkSet, error) {
	cs := &ChunkSet{}
	// A chunk set is analysed and dropped: its many strings share its body.
	magic := byte(chunkSetMagic)
	if len(b) > 0 && b[0] == chunkSetMagicV1 {
		magic = chunkSetMagicV1
	}
	// The Markdown doubles what a chunk set may hold of the file.
	r, err := openBody(b, magic, 4*maxFile+EventOverhead, "chunk set", cs, decompressOwned)
	if err != nil {
		return nil, err
	}
	if r == nil { // JSON
		return cs, nil
	}
	cs.Schema = int(r.uint())
	cs.Repo = r.str()
	cs.Path = r.str()
	cs.SHA256 = r.str()
	cs.FileSeq = r.uint()
	cs.Meta.Priority = int(r.int())
	cs.Meta.Type = r.str()
	cs.Deleted = r.bool()
	n := r.countOf(minChunkBytes)
	if n > 0 {
		cs.Chunks = make([]Chunk, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		c := &cs.Chunks[i]
		c.ID = r.str()
		c.Ord = int(r.int())
		c.HeadingPath = r.strs()
		c.Title = r.str()
		c.Summary = r.str()
		c.ReadWhen = r.str()
		c.Text = r.str()
		if magic == chunkSetMagic {
			c.Markdown = r.str()
		}
	}
	cs.Meta.Demote = r.demote()
	if err := r.end("chunk set"); err != nil {
		return nil, err
	}
	return cs, nil
}

// openBody opens a payload of the binary-or-JSON kind: one that starts
// with magic is decompressed by open (at most limit bytes) for a reader
// that checks UTF-8; any other is JSON, decoded into v, and the reader is
// nil.
func openBody(b []byte, magic byte, limit int, what string, v any, open func([]byte, int, string) (*reader, error)) (*reader, error) {
	if len(b) == 0 || b[0] != magic {
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("%s is not valid UTF-8", what)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", what, err)
		}
		return nil, nil
	}
	r, err := open(b[1:], limit, what)
	if err != nil {
		return nil, err
	}
	r.checkUTF8 = true
	return r, nil
}

// writeDemote appends a repository's demote globs (RepoMeta.Demote) to a
// body, after every other field, and nothing when there are none: bodies
// written before the globs existed decode unchanged, and so do bodies of
// repositories without them.
func writeDemote(w *writer, globs []string) {
	if len(globs) > 0 {
		w.strs(globs)
	}
}

// demote reads what writeDemote wrote: the globs when bytes remain. An
// empty list is never written, so one is an error, like any other
// trailing bytes.
func (r *reader) demote() []string {
	if r.err != nil || len(r.buf) == 0 {
		return nil
	}
	globs := r.strs()
	if r.err == nil && len(globs) == 0 {
		r.err = errors.New("an empty list of demote globs")
	}
	return globs
}

// end returns the error of a whole body read, which must leave no bytes,
// and releases the body.
func (r *reader) end(what string) error {
	defer r.release()
	if r.err == nil && len(r.buf) > 0 {
		r.err = fmt.Errorf("%d bytes after the %s", len(r.buf), what)
	}
	if r.err != nil {
		return fmt.Errorf("decode %s: %w", what, r.err)
	}
	return nil
}
