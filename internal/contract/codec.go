package contract

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/klauspost/compress/s2"
)

// indexMagic starts every encoded IndexDoc: the magic byte, the 8-byte
// big-endian SourceSeq, then the S2-compressed binary document. The
// sequence stays in clear so a writer checks staleness without decoding;
// the binary body (length-prefixed strings and varints, term vectors as
// term/frequency pairs) decodes many times faster than JSON, which matters
// when a replica loads the whole index.
const indexMagic = 0xB2

// maxIndexDocBytes bounds a decoded document, so a corrupt length cannot
// make a replica allocate without limit.
const maxIndexDocBytes = 256 << 20

// EncodeIndexDoc encodes doc for KH_INDEX. Term vectors are written in
// sorted order, so equal documents encode to equal bytes.
func EncodeIndexDoc(doc *IndexDoc) ([]byte, error) {
	var tool []byte
	if doc.Tool != nil {
		var err error
		if tool, err = json.Marshal(doc.Tool); err != nil {
			return nil, fmt.Errorf("encode tool: %w", err)
		}
	}
	w := &writer{buf: make([]byte, 0, 4096)}
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
	w.uint(uint64(len(doc.Chunks)))
	var terms []string
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		w.str(c.ID)
		w.int(int64(c.Ord))
		w.uint(uint64(len(c.HeadingPath)))
		for _, h := range c.HeadingPath {
			w.str(h)
		}
		w.str(c.Title)
		w.str(c.Text)
		w.uint(math.Float64bits(c.Boost))
		fields := make([]string, 0, len(c.Terms))
		for f := range c.Terms {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		w.uint(uint64(len(fields)))
		for _, f := range fields {
			tfs := c.Terms[f]
			w.str(f)
			terms = terms[:0]
			for t := range tfs {
				terms = append(terms, t)
			}
			sort.Strings(terms)
			w.uint(uint64(len(terms)))
			for _, t := range terms {
				w.str(t)
				w.uint(uint64(tfs[t]))
			}
		}
	}
	out := make([]byte, 9, 9+s2.MaxEncodedLen(len(w.buf)))
	out[0] = indexMagic
	binary.BigEndian.PutUint64(out[1:9], doc.SourceSeq)
	return append(out, s2.Encode(nil, w.buf)...), nil
}

// IndexDocSeq returns the SourceSeq of an encoded IndexDoc without decoding it.
func IndexDocSeq(b []byte) (uint64, error) {
	if len(b) < 9 || b[0] != indexMagic {
		return 0, errors.New("not an encoded index doc")
	}
	return binary.BigEndian.Uint64(b[1:9]), nil
}

// DecodeIndexDoc decodes a value written by EncodeIndexDoc.
func DecodeIndexDoc(b []byte) (*IndexDoc, error) {
	seq, err := IndexDocSeq(b)
	if err != nil {
		return nil, err
	}
	if n, err := s2.DecodedLen(b[9:]); err != nil || n > maxIndexDocBytes {
		return nil, fmt.Errorf("index doc body of %d bytes is corrupt or over %d: %v", n, maxIndexDocBytes, err)
	}
	body, err := s2.Decode(nil, b[9:])
	if err != nil {
		return nil, fmt.Errorf("decompress index doc: %w", err)
	}
	r := &reader{buf: body}
	doc := &IndexDoc{SourceSeq: seq}
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
			return nil, fmt.Errorf("decode tool: %w", err)
		}
	}
	if rec := r.bytes(); len(rec) > 0 {
		doc.Record = append(json.RawMessage(nil), rec...)
	}
	n := r.count()
	if n > 0 {
		doc.Chunks = make([]IndexChunk, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		c := &doc.Chunks[i]
		c.ID = r.str()
		c.Ord = int(r.int())
		if nh := r.count(); nh > 0 {
			c.HeadingPath = make([]string, nh)
			for j := range c.HeadingPath {
				c.HeadingPath[j] = r.str()
			}
		}
		c.Title = r.str()
		c.Text = r.str()
		c.Boost = math.Float64frombits(r.uint())
		nf := r.count()
		c.Terms = make(map[string]map[string]int, nf)
		for j := 0; j < nf && r.err == nil; j++ {
			f := r.str()
			nt := r.count()
			tfs := make(map[string]int, nt)
			for k := 0; k < nt && r.err == nil; k++ {
				t := r.str()
				tfs[t] = int(r.uint())
			}
			c.Terms[f] = tfs
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode index doc: %w", r.err)
	}
	return doc, nil
}

type writer struct{ buf []byte }

func (w *writer) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *writer) int(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *writer) str(s string) {
	w.uint(uint64(len(s)))
	w.buf = append(w.buf, s...)
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
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.buf)) {
		r.err = errShort
		return 0
	}
	return int(n)
}

func (r *reader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) str() string { return string(r.bytes()) }

func (r *reader) bool() bool {
	if r.err != nil || len(r.buf) == 0 {
		r.err = errShort
		return false
	}
	b := r.buf[0]
	r.buf = r.buf[1:]
	return b == 1
}
