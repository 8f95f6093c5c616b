package watcher

import (
	"bytes"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// utf16BOMs are the byte-order marks of UTF-16 text, little- and
// big-endian.
var utf16BOMs = [][]byte{{0xFF, 0xFE}, {0xFE, 0xFF}}

// decodeText returns a file's content as UTF-8. UTF-16 with a byte-order
// mark (what Windows editors write as "Unicode") is decoded; UTF-16
// without one cannot be told from binary data for certain, so it is
// refused with a reason that names it. ok is false when data is not text;
// reason then says why, for the skip log line.
func decodeText(data []byte) (text []byte, reason string, ok bool) {
	for _, bom := range utf16BOMs {
		if bytes.HasPrefix(data, bom) {
			out, _, err := transform.Bytes(unicode.BOMOverride(unicode.UTF8.NewDecoder()), data)
			if err != nil {
				return nil, "UTF-16 that does not decode: " + err.Error(), false
			}
			if bytes.IndexByte(out, 0) >= 0 {
				return nil, "binary (NUL character in UTF-16 text)", false
			}
			return out, "", true
		}
	}
	sniff := data[:min(len(data), binarySniffBytes)]
	if bytes.IndexByte(sniff, 0) >= 0 {
		if looksUTF16(sniff) {
			return nil, "UTF-16 without a byte-order mark is not supported: save it as UTF-8", false
		}
		return nil, "binary (NUL byte)", false
	}
	return data, "", true
}

// looksUTF16 reports whether b reads as UTF-16 text of mostly Latin
// letters: nearly every byte on one side of each pair is NUL and almost
// none on the other.
func looksUTF16(b []byte) bool {
	if len(b) < 16 {
		return false
	}
	var zero [2]int
	for i, c := range b {
		if c == 0 {
			zero[i%2]++
		}
	}
	pairs := len(b) / 2
	high, low := max(zero[0], zero[1]), min(zero[0], zero[1])
	return high*10 >= pairs*9 && low*20 <= pairs
}
