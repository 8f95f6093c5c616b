package chunker

import (
	"bytes"
	"strings"
)

// The case files use the txtar format of golang.org/x/tools/txtar, which is
// not among this module's dependencies; these few lines read and write it.
// An archive is a comment followed by files, each introduced by a line
// "-- name --".

// archive is a parsed txtar file.
type archive struct {
	comment []byte
	files   []archiveFile
}

// archiveFile is one file of an archive.
type archiveFile struct {
	name string
	data []byte
}

// parseArchive parses txtar data. It never fails: text before the first
// marker is the comment.
func parseArchive(data []byte) *archive {
	a := new(archive)
	var name string
	a.comment, name, data = nextFile(data)
	for name != "" {
		f := archiveFile{name: name}
		f.data, name, data = nextFile(data)
		a.files = append(a.files, f)
	}
	return a
}

// nextFile returns the data up to the next file marker, that marker's name
// and the data after the marker line.
func nextFile(data []byte) (before []byte, name string, after []byte) {
	for i := 0; i < len(data); {
		line := data[i:]
		end := bytes.IndexByte(line, '\n')
		if end >= 0 {
			line = line[:end]
		}
		if n, ok := markerName(line); ok {
			rest := data[i+len(line):]
			if len(rest) > 0 {
				rest = rest[1:]
			}
			return fixNewline(data[:i]), n, rest
		}
		if end < 0 {
			break
		}
		i += end + 1
	}
	return fixNewline(data), "", nil
}

// markerName parses a "-- name --" line.
func markerName(line []byte) (string, bool) {
	s, ok := strings.CutPrefix(string(line), "-- ")
	if !ok {
		return "", false
	}
	s, ok = strings.CutSuffix(s, " --")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}

// fixNewline makes non-empty data end in a newline.
func fixNewline(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data
	}
	return append(data[:len(data):len(data)], '\n')
}

// format renders the archive in txtar form.
func (a *archive) format() []byte {
	var b bytes.Buffer
	b.Write(fixNewline(a.comment))
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.Write(fixNewline(f.data))
	}
	return b.Bytes()
}
