package contract

import (
	"encoding/json"
	"reflect"
	"testing"
)

func sampleDoc() *IndexDoc {
	return &IndexDoc{
		Schema: 1, Analyzer: "a1", Collection: CollectionDocs, Repo: "docs", Path: "guide/setup.md",
		SourceSeq: 42, Meta: RepoMeta{Priority: -3, Type: RepoExtension},
		Chunks: []IndexChunk{
			{ID: "c1", Ord: 0, HeadingPath: []string{"Setup", "Install"}, Title: "Setup", Text: "Run the installer. 配置",
				Terms: map[string]map[string]int{"body": {"run": 1, "instal": 2, "配置": 1}, "heading": {"setup": 1}}},
			{ID: "c2", Ord: 1, Text: "", Boost: 0.4, Terms: map[string]map[string]int{}},
		},
	}
}

func TestIndexDocRoundTrip(t *testing.T) {
	for _, doc := range []*IndexDoc{
		sampleDoc(),
		{Schema: 1, Collection: CollectionDocs, Repo: "r", Path: "gone.md", SourceSeq: 7, Deleted: true},
		{Schema: 1, Collection: CollectionKB, Path: "abc", SourceSeq: 8, Record: json.RawMessage(`{"id":"abc"}`)},
		{Schema: 1, Collection: CollectionTools, Path: "Grep", SourceSeq: 9,
			Tool:   &Tool{Name: "Grep", Description: "Search files.", Type: ToolCore, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Chunks: []IndexChunk{{ID: "g", Title: "Grep", Text: "Search files.", Terms: map[string]map[string]int{"name": {"grep": 1}}}}},
	} {
		b, err := EncodeIndexDoc(doc)
		if err != nil {
			t.Fatal(err)
		}
		if seq, err := IndexDocSeq(b); err != nil || seq != doc.SourceSeq {
			t.Errorf("IndexDocSeq = %d, %v; want %d", seq, err, doc.SourceSeq)
		}
		got, err := DecodeIndexDoc(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, doc) {
			t.Errorf("round trip changed the document:\n got %+v\nwant %+v", got, doc)
		}
		again, _ := EncodeIndexDoc(got)
		if string(again) != string(b) {
			t.Error("encoding is not deterministic")
		}
	}
}

func TestDecodeIndexDocRejectsGarbage(t *testing.T) {
	good, _ := EncodeIndexDoc(sampleDoc())
	for _, b := range [][]byte{nil, {0xB2}, []byte("{\"json\":true}"), good[:len(good)-3], append(good[:9:9], 0xff, 0xff, 0xff)} {
		if _, err := DecodeIndexDoc(b); err == nil {
			t.Errorf("DecodeIndexDoc(%q) accepted garbage", b)
		}
	}
}

func FuzzDecodeIndexDoc(f *testing.F) {
	good, _ := EncodeIndexDoc(sampleDoc())
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeIndexDoc(b) // must not panic or allocate without bound
	})
}
