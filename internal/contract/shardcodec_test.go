package contract

import (
	"math"
	"reflect"
	"testing"
)

// A shard reply decodes as it was encoded, every score bit included, and
// a cut or altered one is an error, never a panic.
func TestShardReplyRoundTrip(t *testing.T) {
	r := &ShardSearchReply{Shard: 2, Total: 1234,
		Sources: []ShardSource{{Key: "docs.a.x", Repo: "a", Path: "p/q.md", SourceSeq: 7, Priority: -3, Type: RepoCore, Demote: []string{"old/**"},
			Lang: "zh-CN", Chunks: 4, EmbeddingModel: "m", Outline: 1<<63 | 5}, {Key: "docs.b.y", Repo: "b", Path: "r.md"}},
		Hits: []ShardHit{{Source: 1, ID: "c1", Ord: 3, HeadingPath: []string{"A", "B"}, Title: "T", Text: "text ✓", Markdown: "`code`",
			SectionKey: "k", Embedding: []byte{1, 2, 255}, Score: math.Nextafter(12.5, 13), Cos: 0.25, Coverage: 9, Terms: []string{"a", "bc"}},
			{Source: 0, ID: "c2", Score: 1e-300}},
		Near: []ShardHit{{Source: 0, ID: "c3", Cos: -0.5}},
	}
	b := EncodeShardReply(r)
	got, err := DecodeShardReply(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, r)
	}
	for n := range len(b) {
		if _, err := DecodeShardReply(b[:n]); err == nil {
			t.Fatalf("a reply cut at %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := DecodeShardReply(append(b, 0)); err == nil {
		t.Fatal("a reply with a byte past its end decoded")
	}
}

func FuzzDecodeShardReply(f *testing.F) {
	f.Add(EncodeShardReply(&ShardSearchReply{Sources: []ShardSource{{Key: "k"}}, Hits: []ShardHit{{ID: "x", Text: "t"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeShardReply(b)
		if err != nil {
			return
		}
		// Bytes, not values: a NaN score is not equal to itself.
		again, err := DecodeShardReply(EncodeShardReply(r))
		if err != nil || string(EncodeShardReply(again)) != string(EncodeShardReply(r)) {
			t.Fatalf("re-encoded reply decodes otherwise: %v\n%+v\n%+v", err, again, r)
		}
	})
}
