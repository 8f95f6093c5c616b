package contract

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// An encoded IndexDoc starts with a magic byte, then the 8-byte big-endian
// SourceSeq, then the S2-compressed binary document. The sequence stays in
// clear so a writer checks staleness without decoding; the binary body
// (length-prefixed strings and varints) decodes many times faster than
// JSON, which matters when a replica loads the whole index.
//
// Layout 3 (written) stores the document compact: its vocabulary once,
// then per chunk and field the vocabulary indexes as ascending
// deltas with their frequencies, then the chunk's vector (IndexChunk.Vec).
// Layout 2 is layout 3 without vectors; layout 1 repeated every term in
// every chunk's field. Both are still read.
//
// Layout 4 (written) is layout 3 with each chunk's Markdown after its
// header; layout 3 is still read.
//
// Layout 5 is layout 4 with each chunk's Embedding after its Vec and the
// EmbeddingModel before the demote globs. It is written only for a
// document with embeddings, so a node without an embeddings endpoint
// writes what it always did.
const (
	indexMagicV1 = 0xB2
	indexMagicV2 = 0xB3
	indexMagicV3 = 0xB4
	indexMagic   = 0xB5
	indexMagicV5 = 0xB6
)

// maxIndexDocBytes bounds a decoded document, so a corrupt length cannot
// make a replica allocate without limit.
const maxIndexDocBytes = 64 << 20

// EncodeIndexDoc encodes doc for KH_INDEX in compact form. Equal documents
// encode to equal bytes.
func EncodeIndexDoc(doc *IndexDoc) ([]byte, error) {
	doc = doc.Compact()
	embedded := doc.EmbeddingModel != ""
	w := getWriter()
	defer putWriter(w)
	if err := w.header(doc); err != nil {
		return nil, err
	}
	w.strs(doc.Vocab)
	w.uint(uint64(len(doc.Chunks)))
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		w.chunkHeader(c)
		w.str(c.Markdown)
		w.uint(uint64(len(c.Fields)))
		for _, f := range c.Fields {
			w.str(f.Field)
			w.uint(uint64(len(f.Terms)))
			prev := uint32(0)
			for k, t := range f.Terms {
				w.uint(uint64(t - prev)) // ascending: deltas after the first
				w.uint(uint64(f.TFs[k]))
				prev = t
			}
		}
		w.bytes(c.Vec)
		if embedded {
			w.bytes(c.Embedding)
		}
	}
	head := [9]byte{indexMagic}
	if embedded {
		w.str(doc.EmbeddingModel)
		head[0] = indexMagicV5
	}
	writeDemote(w, doc.Meta.Demote)
	binary.BigEndian.PutUint64(head[1:], doc.SourceSeq)
	return w.compress(head[:]), nil
}

// header writes the document's fields before its chunks.
func (w *writer) header(doc *IndexDoc) error {
	var tool []byte
	if doc.Tool != nil {
		var err error
		if tool, err = json.Marshal(doc.Tool); err != nil {
			return fmt.Errorf("encode tool: %w", err)
		}
	}
	w.uint(uint64(doc.Schema))
	w.str(doc.Analyzer)
	w.str(doc.Collection)
	w.str(doc.Repo)
	w.str(doc.Path)
	w.int(int64(doc.Meta.Priority))
	w.str(doc.Meta.Type)
	w.bool(doc.Deleted)
	w.bytes(tool)
	w.bytes(doc.Record)
	return nil
}

// chunkHeader writes a chunk's fields before its terms.
func (w *writer) chunkHeader(c *IndexChunk) {
	w.str(c.ID)
	w.int(int64(c.Ord))
	w.strs(c.HeadingPath)
	w.str(c.Title)
	w.str(c.Text)
	w.uint(math.Float64bits(c.Boost))
}

// IndexDocSeq returns the SourceSeq of an encoded IndexDoc without decoding it.
func IndexDocSeq(b []byte) (uint64, error) {
	if len(b) < 9 || (b[0] != indexMagicV5 && b[0] != indexMagic && b[0] != indexMagicV3 && b[0] != indexMagicV2 && b[0] != indexMagicV1) {
		return 0, errors.New("not an encoded index doc")
	}
	return binary.BigEndian.Uint64(b[1:9]), nil
}

// DecodeIndexDoc decodes a value written by EncodeIndexDoc, in compact form.
func DecodeIndexDoc(b []byte) (*IndexDoc, error) {
	seq, err := IndexDocSeq(b)
	if err != nil {
		return nil, err
	}
	r, err := decompress(b[9:], maxIndexDocBytes, "index doc")
	if err != nil {
		return nil, err
	}
	defer r.release()
	doc := &IndexDoc{SourceSeq: seq}
	if err := r.header(doc); err != nil {
		return nil, err
	}
	switch b[0] {
	case indexMagicV1:
		r.chunksV1(doc)
	case indexMagicV2:
		r.compact(doc, false)
	default:
		r.markdown = b[0] == indexMagic || b[0] == indexMagicV5
		r.embedding = b[0] == indexMagicV5
		r.compact(doc, true)
	}
	if r.embedding {
		doc.EmbeddingModel = r.str()
	}
	doc.Meta.Demote = r.demote()
	if r.err != nil {
		return nil, fmt.Errorf("decode index doc: %w", r.err)
	}
	return doc.Compact(), nil
}

func (r *reader) header(doc *IndexDoc) error {
	doc.Schema = int(r.uint())
	doc.Analyzer = r.str()
	doc.Collection = r.str()
	doc.Repo = r.str()
	doc.Path = r.str()
	doc.Meta.Priority = int(r.int())
	doc.Meta.Type = r.str()
	doc.Deleted = r.bool()
	if tool := r.bytes(); len(tool) > 0 && r.err == nil {
		doc.Tool = new(Tool)
		if err := json.Unmarshal(tool, doc.Tool); err != nil {
			return fmt.Errorf("decode tool: %w", err)
		}
	}
	if rec := r.bytes(); len(rec) > 0 {
		doc.Record = append(json.RawMessage(nil), rec...)
	}
	return nil
}

func (r *reader) chunkHeader(c *IndexChunk) {
	c.ID = r.str()
	c.Ord = int(r.int())
	c.HeadingPath = r.strs()
	c.Title = r.str()
	c.Text = r.str()
	c.Boost = math.Float64frombits(r.uint())
	if r.markdown {
		c.Markdown = r.str()
	}
}

// chunks reads a document's chunk list: each chunk's header, then its
// terms as the layout stores them.
func (r *reader) chunks(doc *IndexDoc, terms func(c *IndexChunk)) {
	n := r.countOf(minChunkBytes)
	if n > 0 {
		doc.Chunks = make([]IndexChunk, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		c := &doc.Chunks[i]
		r.chunkHeader(c)
		terms(c)
	}
}

// compact reads the chunks of layouts 2 and 3 (withVec), checking every
// vocabulary index.
func (r *reader) compact(doc *IndexDoc, withVec bool) {
	doc.Vocab = r.strsShared()
	r.chunks(doc, func(c *IndexChunk) {
		nf := r.countOf(minFieldBytes)
		if nf > 0 {
			c.Fields = make([]FieldTerms, nf)
		}
		for j := 0; j < nf && r.err == nil; j++ {
			f := &c.Fields[j]
			f.Field = r.str()
			nt := r.countOf(minTermBytes)
			f.Terms, f.TFs = make([]uint32, nt), make([]uint32, nt)
			t := uint64(0)
			for k := 0; k < nt && r.err == nil; k++ {
				d := r.uint()
				if k > 0 && d == 0 {
					r.err = errors.New("terms of a field not ascending")
				}
				t += d
				if t >= uint64(len(doc.Vocab)) {
					r.err = fmt.Errorf("term index %d outside a vocabulary of %d", t, len(doc.Vocab))
				}
				f.Terms[k], f.TFs[k] = uint32(t), uint32(r.uint())
			}
		}
		if withVec {
			if v := r.bytes(); len(v) > 0 {
				c.Vec = append([]byte(nil), v...)
			}
			if r.embedding {
				if v := r.bytes(); len(v) > 0 {
					c.Embedding = append([]byte(nil), v...)
				}
			}
		}
	})
}

// chunksV1 reads the chunks of layout 1, with term maps.
func (r *reader) chunksV1(doc *IndexDoc) {
	r.chunks(doc, func(c *IndexChunk) {
		nf := r.countOf(minFieldBytes)
		c.Terms = make(map[string]map[string]int, nf)
		for j := 0; j < nf && r.err == nil; j++ {
			f := r.str()
			nt := r.countOf(minTermBytes)
			tfs := make(map[string]int, nt)
			for k := 0; k < nt && r.err == nil; k++ {
				t := r.str()
				tfs[t] = int(r.uint())
			}
			c.Terms[f] = tfs
		}
	})
}

type writer struct {
	buf []byte
	enc []byte // scratch for the S2 encoding of buf
}

// writers recycles encoding buffers: a body is scratch space, dropped once
// compressed.
var writers = sync.Pool{New: func() any { return &writer{buf: make([]byte, 0, 64<<10)} }}

func getWriter() *writer { w := writers.Get().(*writer); w.buf = w.buf[:0]; return w }

// putWriter keeps a writer for reuse unless its buffers grew very large.
func putWriter(w *writer) {
	if cap(w.buf) <= 8<<20 && cap(w.enc) <= 8<<20 {
		writers.Put(w)
	}
}

// compress returns head followed by the S2 encoding of the body, in one
// allocation of the exact size: the encoder needs room for the worst case,
// several times what text compresses to, so it writes into the writer's
// scratch.
func (w *writer) compress(head []byte) []byte {
	if n := s2.MaxEncodedLen(len(w.buf)); cap(w.enc) < n {
		w.enc = make([]byte, n)
	}
	enc := s2.Encode(w.enc[:cap(w.enc)], w.buf)
	out := make([]byte, len(head)+len(enc))
	copy(out, head)
	copy(out[len(head):], enc)
	return out
}

func (w *writer) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *writer) int(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}
func (w *writer) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *writer) bytes(b []byte) {
	w.uint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}
func (w *writer) bool(b bool) {
	if b {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

var errShort = errors.New("truncated")

type reader struct {
	buf []byte
	err error
	// markdown is set for index layouts that carry chunks' Markdown.
	markdown bool
	// embedding is set for index layouts that carry chunks' Embedding.
	embedding bool
	// checkUTF8 makes str fail on invalid UTF-8.
	checkUTF8 bool
	// alias makes str return strings that share buf, which the reader
	// owns and nothing writes: see decompressOwned.
	alias bool
	// body is the pooled buffer buf was decompressed into, if any.
	body *[]byte
}

// bodies recycles decompressed bodies: decoders copy every string and
// byte slice they keep out of the body, so it is scratch space once read.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest body kept for reuse.
const maxPooledBody = 8 << 20

// decompress returns a reader of the S2 block src decompressed into a
// pooled buffer, which must hold at most limit bytes. Call release once
// the decoded value no longer needs the reader.
func decompress(src []byte, limit int, what string) (*reader, error) {
	n, err := decodedLen(src, limit, what)
	if err != nil {
		return nil, err
	}
	bp := bodies.Get().(*[]byte)
	if cap(*bp) < n {
		*bp = make([]byte, n)
	}
	body, err := s2.Decode((*bp)[:cap(*bp)], src)
	if err != nil {
		bodies.Put(bp)
		return nil, fmt.Errorf("decompress %s: %w", what, err)
	}
	return &reader{buf: body, body: bp}, nil
}

// decompressOwned is decompress into a body of the reader's own, not
// pooled, which the strings read then share instead of each being copied:
// one allocation for a whole value instead of one per string. It suits a
// value that is used and dropped, since any string kept keeps the whole
// body.
func decompressOwned(src []byte, limit int, what string) (*reader, error) {
	n, err := decodedLen(src, limit, what)
	if err != nil {
		return nil, err
	}
	body, err := s2.Decode(make([]byte, n), src)
	if err != nil {
		return nil, fmt.Errorf("decompress %s: %w", what, err)
	}
	return &reader{buf: body, alias: true}, nil
}

// decodedLen returns the size of the S2 block src once decompressed,
// which must be at most limit bytes.
func decodedLen(src []byte, limit int, what string) (int, error) {
	n, err := s2.DecodedLen(src)
	if err != nil || n > limit {
		return 0, fmt.Errorf("%s body of %d bytes is corrupt or over %d: %v", what, n, limit, err)
	}
	return n, nil
}

// release gives the reader's body back to the pool; the reader is done.
func (r *reader) release() {
	if r.body != nil && cap(*r.body) <= maxPooledBody {
		bodies.Put(r.body)
	}
	r.body, r.buf = nil, nil
}

func (r *reader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *reader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// count reads a length that must fit in the remaining input.
func (r *reader) count() int { return r.countOf(1) }

// countOf reads the length of a list whose elements take at least
// minBytes each, so that it fits in the remaining input. Preallocating the
// list then costs at most its element size over minBytes times the input:
// a hostile length cannot make a decoder allocate without bound.
func (r *reader) countOf(minBytes int) int {
	n := r.uint()
	if n > uint64(len(r.buf)/minBytes) {
		r.err = errShort
		return 0
	}
	return int(n)
}

// Smallest encodings of list elements: a chunk is at least its length
// prefixes and varints (one byte each), a field its name's length and its
// term count, a term its index delta and frequency.
const (
	minChunkBytes = 7
	minFieldBytes = 2
	minTermBytes  = 2
)

func (r *reader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) str() string {
	b := r.bytes()
	if r.checkUTF8 && r.err == nil && !utf8.Valid(b) {
		r.err = errors.New("string is not valid UTF-8")
		return ""
	}
	if r.alias && len(b) > 0 {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

// strs reads a list written by writer.strs; an empty list is nil.
func (r *reader) strs() []string {
	n := r.count()
	if n == 0 || r.err != nil {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// strsShared reads a list like strs into strings that share one
// allocation: a document's vocabulary costs one allocation instead of one
// per term, and whoever keeps a term beyond the document copies it
// (search.Index does), so that it does not hold the others.
func (r *reader) strsShared() []string {
	n := r.count()
	if n == 0 || r.err != nil {
		return nil
	}
	views := make([][]byte, n)
	total := 0
	for i := range views {
		views[i] = r.bytes()
		total += len(views[i])
	}
	if r.err != nil {
		return nil
	}
	arena := make([]byte, 0, total)
	out := make([]string, n)
	for i, v := range views {
		if r.checkUTF8 && !utf8.Valid(v) {
			r.err = errors.New("string is not valid UTF-8")
			return nil
		}
		start := len(arena)
		arena = append(arena, v...)
		out[i] = unsafe.String(unsafe.SliceData(arena[start:]), len(v))
	}
	return out
}

func (r *reader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.buf) == 0 {
		r.err = errShort
		return false
	}
	b := r.buf[0]
	r.buf = r.buf[1:]
	return b == 1
}
