package contract

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/klauspost/compress/s2"
)

// indexMagic starts every encoded IndexDoc: magic byte, 8-byte big-endian
// SourceSeq, then the S2-compressed JSON document. Keeping the sequence in
// clear lets a writer check staleness without decoding the document.
const indexMagic = 0xB1

// EncodeIndexDoc encodes doc for KH_INDEX.
func EncodeIndexDoc(doc *IndexDoc) ([]byte, error) {
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode index doc: %w", err)
	}
	out := make([]byte, 9, 9+s2.MaxEncodedLen(len(js)))
	out[0] = indexMagic
	binary.BigEndian.PutUint64(out[1:9], doc.SourceSeq)
	return append(out, s2.Encode(nil, js)...), nil
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
	if _, err := IndexDocSeq(b); err != nil {
		return nil, err
	}
	js, err := s2.Decode(nil, b[9:])
	if err != nil {
		return nil, fmt.Errorf("decompress index doc: %w", err)
	}
	var doc IndexDoc
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("decode index doc: %w", err)
	}
	return &doc, nil
}
