package contract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A shard's reply to a docs search is the bulk of a sharded search's
// cost: dozens to hundreds of sections with their text. It travels in a
// binary form of its own (no escaping, no reflection): a version byte,
// then varints, length-prefixed strings and little-endian floats. The
// decoded strings share the reply's one buffer.

// shardReplyVersion is the first byte of an encoded ShardSearchReply.
const shardReplyVersion = 1

// EncodeShardReply encodes a shard's reply.
func EncodeShardReply(r *ShardSearchReply) []byte {
	// Sized once: the text is most of it.
	n := 64 + 128*len(r.Sources)
	for _, hits := range [][]ShardHit{r.Hits, r.Near} {
		for i := range hits {
			h := &hits[i]
			n += 64 + len(h.ID) + len(h.Title) + len(h.Text) + len(h.Markdown) + len(h.SectionKey) + len(h.Embedding)
			for _, s := range h.HeadingPath {
				n += len(s) + 2
			}
			for _, s := range h.Terms {
				n += len(s) + 1
			}
		}
	}
	w := &writer{buf: make([]byte, 0, n)}
	w.buf = append(w.buf, shardReplyVersion)
	w.int(int64(r.Shard))
	w.int(int64(r.Total))
	w.uint(uint64(len(r.Sources)))
	for i := range r.Sources {
		s := &r.Sources[i]
		w.str(s.Key)
		w.str(s.Repo)
		w.str(s.Path)
		w.uint(s.SourceSeq)
		w.int(int64(s.Priority))
		w.str(s.Type)
		w.strs(s.Demote)
		w.str(s.Lang)
		w.int(int64(s.Chunks))
		w.str(s.EmbeddingModel)
		w.uint(s.Outline)
	}
	for _, hits := range [][]ShardHit{r.Hits, r.Near} {
		w.uint(uint64(len(hits)))
		for i := range hits {
			h := &hits[i]
			w.int(int64(h.Source))
			w.str(h.ID)
			w.int(int64(h.Ord))
			w.strs(h.HeadingPath)
			w.str(h.Title)
			w.str(h.Text)
			w.str(h.Markdown)
			w.str(h.SectionKey)
			w.bytes(h.Embedding)
			w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(h.Score))
			w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(h.Cos))
			w.uint(h.Coverage)
			w.strs(h.Terms)
		}
	}
	return w.buf
}

// DecodeShardReply decodes what EncodeShardReply wrote; the strings of
// the reply share b, which the caller must not change afterwards.
func DecodeShardReply(b []byte) (*ShardSearchReply, error) {
	if len(b) == 0 || b[0] != shardReplyVersion {
		return nil, errors.New("shard reply: unknown encoding")
	}
	r := &reader{buf: b[1:], alias: true}
	out := &ShardSearchReply{Shard: int(r.int()), Total: int(r.int())}
	if n := r.countOf(11); r.err == nil && n > 0 {
		out.Sources = make([]ShardSource, n)
		for i := range out.Sources {
			s := &out.Sources[i]
			s.Key, s.Repo, s.Path = r.str(), r.str(), r.str()
			s.SourceSeq, s.Priority, s.Type = r.uint(), int(r.int()), r.str()
			s.Demote, s.Lang, s.Chunks = r.strs(), r.str(), int(r.int())
			s.EmbeddingModel, s.Outline = r.str(), r.uint()
		}
	}
	for k := range 2 {
		n := r.countOf(24)
		if r.err != nil || n == 0 {
			continue
		}
		hits := make([]ShardHit, n)
		for i := range hits {
			h := &hits[i]
			h.Source, h.ID, h.Ord = int(r.int()), r.str(), int(r.int())
			h.HeadingPath, h.Title, h.Text, h.Markdown, h.SectionKey = r.strs(), r.str(), r.str(), r.str(), r.str()
			if e := r.bytes(); len(e) > 0 {
				h.Embedding = e
			}
			if r.err == nil && len(r.buf) < 12 {
				r.err = errShort
			}
			if r.err != nil {
				break
			}
			h.Score = math.Float64frombits(binary.LittleEndian.Uint64(r.buf))
			h.Cos = math.Float32frombits(binary.LittleEndian.Uint32(r.buf[8:]))
			r.buf = r.buf[12:]
			h.Coverage, h.Terms = r.uint(), r.strs()
		}
		if k == 0 {
			out.Hits = hits
		} else {
			out.Near = hits
		}
	}
	if r.err == nil && len(r.buf) > 0 {
		r.err = fmt.Errorf("%d bytes past the end", len(r.buf))
	}
	if r.err != nil {
		return nil, fmt.Errorf("shard reply: %w", r.err)
	}
	return out, nil
}
