package contract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func sampleFileEvent() *FileEvent {
	return &FileEvent{
		Schema: SchemaVersion, Repo: "docs", Path: "guide/setup.md", SHA256: strings.Repeat("cd", 32), Size: 1234,
		Meta:    RepoMeta{Priority: 7, Type: RepoCore},
		Content: "---\ntitle: Setup\n---\n# Setup\n\n<Note>Run the installer.</Note> 配置 " + strings.Repeat("Some text. ", 300),
	}
}

func TestFileEventRoundTrip(t *testing.T) {
	for _, ev := range []*FileEvent{sampleFileEvent(), {Schema: 1, Repo: "r", Path: "gone.md", Deleted: true}} {
		b := EncodeFileEvent(ev)
		if len(b) == 0 || b[0] != fileEventMagic {
			t.Fatalf("encoding does not start with the magic byte")
		}
		got, err := DecodeFileEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Errorf("round trip changed the event:\n got %+v\nwant %+v", got, ev)
		}
	}
	// Markdown compresses: the binary form is well under the JSON.
	js, _ := json.Marshal(sampleFileEvent())
	if bin := EncodeFileEvent(sampleFileEvent()); len(bin) >= len(js)/2 {
		t.Errorf("binary event %d bytes, JSON %d", len(bin), len(js))
	}
}

func TestDecodeFileEventReadsJSON(t *testing.T) {
	js, _ := json.Marshal(sampleFileEvent())
	got, err := DecodeFileEvent(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sampleFileEvent()) {
		t.Errorf("JSON event decoded to %+v", got)
	}
}

func TestDecodeFileEventRejectsBadInput(t *testing.T) {
	good := EncodeFileEvent(sampleFileEvent())
	w := &writer{}
	w.uint(1)
	w.str("docs")
	w.str("a.md")
	w.str("")
	w.int(1)
	w.int(0)
	w.str("")
	w.bool(false)
	w.str("x")
	trailing := append([]byte{fileEventMagic}, s2Encode(append(w.buf, 0))...)
	ev := sampleFileEvent()
	ev.Content = "bad \xff byte"
	bad := map[string][]byte{
		"empty":                nil,
		"JSON garbage":         []byte(`{"repo":`),
		"invalid UTF-8":        []byte("{\"repo\":\"\xff\"}"),
		"truncated":            good[:len(good)/2],
		"magic only":           {fileEventMagic},
		"trailing bytes":       trailing,
		"binary invalid UTF-8": EncodeFileEvent(ev),
		"chunk set":            EncodeChunkSet(sampleChunkSet()),
	}
	for name, b := range bad {
		if got, err := DecodeFileEvent(b); err == nil {
			t.Errorf("%s: decoded without error to %+v", name, got)
		}
	}
	// The same body with nothing after it decodes.
	if _, err := DecodeFileEvent(append([]byte{fileEventMagic}, s2Encode(w.buf)...)); err != nil {
		t.Errorf("minimal event: %v", err)
	}
}

func FuzzDecodeFileEvent(f *testing.F) {
	f.Add(EncodeFileEvent(sampleFileEvent()))
	js, _ := json.Marshal(sampleFileEvent())
	f.Add(js)
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeFileEvent(b) // must not panic or allocate without bound
		if err == nil && b[0] == fileEventMagic {
			if again, err := DecodeFileEvent(EncodeFileEvent(ev)); err != nil || !reflect.DeepEqual(again, ev) {
				t.Errorf("re-encoding a decoded event changed it: %v", err)
			}
		}
	})
}

// A file event whose path or repository is not valid UTF-8 is rejected for
// that reason, not reported as truncated: a dead letter must say what is
// wrong with the message.
func TestDecodeFileEventNamesInvalidUTF8(t *testing.T) {
	for _, field := range []string{"path", "repo", "content"} {
		ev := sampleFileEvent()
		switch field {
		case "path":
			ev.Path = "guide/caf\xe9.md"
		case "repo":
			ev.Repo = "d\xffcs"
		case "content":
			ev.Content = "bad \xff byte"
		}
		_, err := DecodeFileEvent(EncodeFileEvent(ev))
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%s not valid UTF-8: error %v, want it to say so", field, err)
		}
	}
}
