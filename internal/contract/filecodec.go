package contract

import "fmt"

// fileEventMagic starts a binary file event: the magic byte, then the
// S2-compressed body (length-prefixed strings and varints). A file event
// is mostly Markdown, which S2 compresses to about a third, and the body
// decodes without JSON's validation and unescaping passes. An event that
// starts otherwise is read as JSON, the form other producers may publish.
const fileEventMagic = 0xF5

// maxFileEventBytes bounds a decoded file event, so a corrupt length
// cannot make a chunker allocate without limit; the watcher's default file
// limit is 4 MB.
const maxFileEventBytes = 64 << 20

// EncodeFileEvent encodes ev for KH_FILES.
func EncodeFileEvent(ev *FileEvent) []byte {
	w := getWriter()
	defer putWriter(w)
	w.uint(uint64(ev.Schema))
	w.str(ev.Repo)
	w.str(ev.Path)
	w.str(ev.SHA256)
	w.int(ev.Size)
	w.int(int64(ev.Meta.Priority))
	w.str(ev.Meta.Type)
	w.bool(ev.Deleted)
	w.str(ev.Content)
	writeDemote(w, ev.Meta.Demote)
	return w.compress([]byte{fileEventMagic})
}

// EventOverhead is what a file event or a chunk set may hold beyond its
// file's content: names, paths, hashes, headings and lengths.
const EventOverhead = 1 << 20

// DecodeFileEvent decodes a KH_FILES payload, binary or JSON. Every string
// must be valid UTF-8.
func DecodeFileEvent(b []byte) (*FileEvent, error) {
	return DecodeFileEventLimit(b, maxFileEventBytes)
}

// DecodeFileEventLimit is DecodeFileEvent of an event whose content may
// hold at most maxContent bytes, the limit files have: a compressed body
// that declares a larger decoded size is rejected before anything is
// allocated for it.
func DecodeFileEventLimit(b []byte, maxContent int) (*FileEvent, error) {
	ev := &FileEvent{}
	r, err := openBody(b, fileEventMagic, maxContent+EventOverhead, "file event", ev, decompress)
	if err != nil {
		return nil, err
	}
	if r == nil { // JSON
		if len(ev.Content) > maxContent {
			return nil, fmt.Errorf("file event content of %d bytes is over the limit of %d", len(ev.Content), maxContent)
		}
		return ev, nil
	}
	ev.Schema = int(r.uint())
	ev.Repo = r.str()
	ev.Path = r.str()
	ev.SHA256 = r.str()
	ev.Size = r.int()
	ev.Meta.Priority = int(r.int())
	ev.Meta.Type = r.str()
	ev.Deleted = r.bool()
	ev.Content = r.str()
	ev.Meta.Demote = r.demote()
	if err := r.end("file event"); err != nil {
		return nil, err
	}
	if len(ev.Content) > maxContent {
		return nil, fmt.Errorf("file event content of %d bytes is over the limit of %d", len(ev.Content), maxContent)
	}
	return ev, nil
}
