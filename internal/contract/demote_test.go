package contract

import (
	"reflect"
	"testing"
)

// A repository's demote globs travel with its files through every stage's
// payload; a meta without them encodes as it did before they existed.
func TestDemoteGlobsTravel(t *testing.T) {
	globs := []string{"v1/**", "**/old-*.md"}
	meta := RepoMeta{Priority: 3, Type: RepoCore, Demote: globs}

	ev := sampleFileEvent()
	ev.Meta = meta
	gotEv, err := DecodeFileEvent(EncodeFileEvent(ev))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotEv, ev) {
		t.Errorf("file event: got meta %+v, want %+v", gotEv.Meta, meta)
	}

	cs := sampleChunkSet()
	cs.Meta = meta
	gotCS, err := DecodeChunkSet(EncodeChunkSet(cs))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotCS, cs) {
		t.Errorf("chunk set: got meta %+v, want %+v", gotCS.Meta, meta)
	}

	doc := sampleDoc()
	doc.Meta = meta
	b, err := EncodeIndexDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	gotDoc, err := DecodeIndexDoc(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotDoc.Meta, meta) {
		t.Errorf("index doc: got meta %+v, want %+v", gotDoc.Meta, meta)
	}

	if got, want := (RepoMeta{Priority: 3, Type: RepoCore}).String(), "p=3;t=core"; got != want {
		t.Errorf("meta without globs renders %q, want %q", got, want)
	}
	if got, want := meta.String(), "p=3;t=core;d=v1/**,**/old-*.md"; got != want {
		t.Errorf("meta renders %q, want %q", got, want)
	}
}
