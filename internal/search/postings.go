package search

import (
	"encoding/binary"
	"unsafe"
)

// A posting list is an array of posting records, which a snapshot (and a
// segment file) stores exactly as the index lays them out in memory: the
// entry ordinal as a little-endian uint32, its MaxFields frequencies, and
// padding to the struct's alignment. An index restored from a mapped file
// scans its postings in the map, off the Go heap, and copies a list only
// when an update changes it.

// PostingSize is the size of a posting record.
const PostingSize = int(unsafe.Sizeof(posting{}))

// postingTFOffset is where a record's frequencies start.
const postingTFOffset = int(unsafe.Offsetof(posting{}.tf))

// The record layout the functions below write and read: 4 bytes of
// ordinal, then the frequencies, then padding to 12 bytes. The constants
// stop the build if the struct changes.
const (
	_ = uint(PostingSize-12) + uint(12-PostingSize)
	_ = uint(postingTFOffset-4) + uint(4-postingTFOffset)
)

// AppendPosting appends a posting record of entry ordinal doc with the
// frequencies tf.
func AppendPosting(b []byte, doc uint32, tf [MaxFields]uint8) []byte {
	b = binary.LittleEndian.AppendUint32(b, doc)
	b = append(b, tf[:]...)
	var pad [PostingSize - postingTFOffset - MaxFields]byte
	return append(b, pad[:]...)
}

// littleEndian is set when the machine lays a uint32 out as the records
// do.
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// postingsOf returns the postings of records b: b itself, viewed as
// postings, when the machine's layout is the records' and b is aligned
// for them (a mapped file's sections are), else a copy.
func postingsOf(b []byte) []posting {
	n := len(b) / PostingSize
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if littleEndian && uintptr(p)%unsafe.Alignof(posting{}) == 0 {
		return unsafe.Slice((*posting)(p), n)
	}
	out := make([]posting, n)
	for i := range out {
		r := b[i*PostingSize:]
		out[i].doc = binary.LittleEndian.Uint32(r)
		copy(out[i].tf[:], r[postingTFOffset:])
	}
	return out
}
