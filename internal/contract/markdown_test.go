package contract

import (
	"testing"

	"github.com/klauspost/compress/s2"
)

const sectionMD = "Run `kh up`; see [the guide](https://example.com).\n\n```bash\nknowhub up\n```\n\n| a | b |\n| --- | --- |\n| 1 | 2 |"

func TestChunkSetCarriesMarkdown(t *testing.T) {
	cs := &ChunkSet{Schema: SchemaVersion, Repo: "r", Path: "a.md", Chunks: []Chunk{{ID: "c", Text: "Run kh up", Markdown: sectionMD}}}
	got, err := DecodeChunkSet(EncodeChunkSet(cs))
	if err != nil {
		t.Fatal(err)
	}
	if got.Chunks[0].Markdown != sectionMD || got.Chunks[0].Text != "Run kh up" {
		t.Errorf("decoded %+v", got.Chunks[0])
	}
}

// A chunk set of the layout before Markdown still reads, with none.
func TestChunkSetLayout1(t *testing.T) {
	w := getWriter()
	defer putWriter(w)
	w.uint(SchemaVersion)
	w.str("r")
	w.str("a.md")
	w.str("")
	w.uint(7)
	w.int(0)
	w.str(RepoCore)
	w.bool(false)
	w.uint(1)
	w.str("c")
	w.int(0)
	w.strs([]string{"H"})
	w.str("T")
	w.str("")
	w.str("")
	w.str("text")
	got, err := DecodeChunkSet(append([]byte{chunkSetMagicV1}, s2.Encode(nil, w.buf)...))
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Chunks[0]; c.Text != "text" || c.Markdown != "" || got.FileSeq != 7 {
		t.Errorf("decoded %+v", got)
	}
}

func TestIndexDocCarriesMarkdown(t *testing.T) {
	doc := &IndexDoc{Schema: SchemaVersion, Collection: CollectionDocs, Repo: "r", Path: "a.md",
		Chunks: []IndexChunk{{ID: "c", Text: "Run kh up", Markdown: sectionMD, Fields: []FieldTerms{{Field: FieldBody, Terms: []uint32{0}, TFs: []uint32{1}}}}},
		Vocab:  []string{"run"}}
	b, err := EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndexDoc(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Chunks[0].Markdown != sectionMD {
		t.Errorf("Markdown %q", got.Chunks[0].Markdown)
	}
}
