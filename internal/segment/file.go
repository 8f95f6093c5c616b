// Package segment reads and writes knowhub's segment files: an index's
// content (search.Snapshot) for every collection, in flat little-endian
// arrays, so that a query replica restarts by opening a file rather than
// replaying KH_INDEX. A segment is derived data: it records the KH_INDEX
// revision it reflects and the analyzer that built it, and a replica
// rebuilds from the bucket one that is missing, damaged, of another
// layout or of another analyzer.
//
// A file is a fixed header, named sections each checksummed with CRC32C
// and aligned to 8 bytes, a table of contents, and a trailer that locates
// the table:
//
//	header   "KHSEGMNT" | layout uint32 | 0 uint32
//	sections ...
//	toc      count uint32 | per section: name length uint16, name,
//	         offset uint64, length uint64, crc32c uint32
//	trailer  toc offset uint64 | toc length uint64 | toc crc32c uint32 | "KHSE"
//
// Sections are addressed by offset, never by pointer, and the file is
// opened through a read-only memory map: stored text is served from the
// map, off the Go heap. The package is pure but for that file I/O.
package segment

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// Layout is the version of the file layout. A file of another layout is
// not read: the replica rebuilds it from the streams. Bump it with any
// change to what a section holds or how it is encoded; a new optional
// section needs no bump.
const Layout uint32 = 2

const (
	magic        = "KHSEGMNT"
	trailerMagic = "KHSE"
	headerSize   = 16
	trailerSize  = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrLayout marks a file written with another layout.
var ErrLayout = errors.New("segment of another layout")

// tocEntry locates one section.
type tocEntry struct {
	name     string
	off, len uint64
	crc      uint32
}

// writer writes a segment's sections to a temporary file.
type writer struct {
	f   *os.File
	bw  *bufio.Writer
	off uint64
	toc []tocEntry
	cur *tocEntry
	buf []byte
	err error
}

func newWriter(f *os.File) *writer {
	w := &writer{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	var h [headerSize]byte
	copy(h[:], magic)
	binary.LittleEndian.PutUint32(h[8:], Layout)
	w.raw(h[:])
	return w
}

func (w *writer) raw(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.off += uint64(n)
	w.err = err
}

// begin starts a section, aligned to 8 bytes.
func (w *writer) begin(name string) {
	if pad := (8 - w.off%8) % 8; pad > 0 {
		w.raw(make([]byte, pad))
	}
	w.toc = append(w.toc, tocEntry{name: name, off: w.off})
	w.cur = &w.toc[len(w.toc)-1]
}

// write appends p to the current section.
func (w *writer) write(p []byte) {
	w.cur.crc = crc32.Update(w.cur.crc, castagnoli, p)
	w.cur.len += uint64(len(p))
	w.raw(p)
}

// flushBuf writes the scratch buffer to the current section once it is
// large, or always when force is set.
func (w *writer) flushBuf(force bool) {
	if len(w.buf) >= 1<<16 || force && len(w.buf) > 0 {
		w.write(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *writer) bytes(name string, p []byte) {
	w.begin(name)
	w.write(p)
}

func (w *writer) u16s(name string, v []uint16) {
	w.begin(name)
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, x)
		w.flushBuf(false)
	}
	w.flushBuf(true)
}

func (w *writer) u32s(name string, v []uint32) {
	w.begin(name)
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, x)
		w.flushBuf(false)
	}
	w.flushBuf(true)
}

func (w *writer) u64s(name string, v []uint64) {
	w.begin(name)
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, x)
		w.flushBuf(false)
	}
	w.flushBuf(true)
}

// strs writes a column of n strings, the i-th being at(i), as two
// sections: name.bytes, their bytes end to end, and name.ends, the end of
// each.
func (w *writer) strs(name string, n int, at func(i int) string) {
	ends := make([]uint64, n)
	w.begin(name + ".bytes")
	var end uint64
	for i := range n {
		s := at(i)
		w.buf = append(w.buf, s...)
		w.flushBuf(false)
		end += uint64(len(s))
		ends[i] = end
	}
	w.flushBuf(true)
	w.u64s(name+".ends", ends)
}

// lists writes a column of n string lists as name.n, the end of each
// row's strings in the column name (see strs).
func (w *writer) lists(name string, n int, at func(i int) []string) {
	var flat []string
	ends := make([]uint64, n)
	for i := range n {
		flat = append(flat, at(i)...)
		ends[i] = uint64(len(flat))
	}
	w.u64s(name+".n", ends)
	w.strs(name, len(flat), func(i int) string { return flat[i] })
}

// finish writes the table of contents and the trailer.
func (w *writer) finish() error {
	if pad := (8 - w.off%8) % 8; pad > 0 {
		w.raw(make([]byte, pad))
	}
	tocOff := w.off
	toc := binary.LittleEndian.AppendUint32(nil, uint32(len(w.toc)))
	for _, e := range w.toc {
		toc = binary.LittleEndian.AppendUint16(toc, uint16(len(e.name)))
		toc = append(toc, e.name...)
		toc = binary.LittleEndian.AppendUint64(toc, e.off)
		toc = binary.LittleEndian.AppendUint64(toc, e.len)
		toc = binary.LittleEndian.AppendUint32(toc, e.crc)
	}
	w.raw(toc)
	var tr [trailerSize]byte
	binary.LittleEndian.PutUint64(tr[0:], tocOff)
	binary.LittleEndian.PutUint64(tr[8:], uint64(len(toc)))
	binary.LittleEndian.PutUint32(tr[16:], crc32.Checksum(toc, castagnoli))
	copy(tr[20:], trailerMagic)
	w.raw(tr[:])
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// writeAtomic writes a file through fill into a temporary file beside
// path, syncs it and renames it over path, so that a reader sees the old
// file or the new one, whole.
func writeAtomic(path string, fill func(w *writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create segment directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create segment file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if tmp != "" {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	w := newWriter(f)
	if err := fill(w); err != nil {
		return fmt.Errorf("write segment %s: %w", path, err)
	}
	if err := w.finish(); err != nil {
		return fmt.Errorf("write segment %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync segment %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close segment %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename segment into %s: %w", path, err)
	}
	tmp = ""
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself survives a crash
		_ = d.Close()
	}
	return nil
}

// file is an opened segment: its bytes (a read-only map) and sections.
type file struct {
	data     []byte
	sections map[string][]byte
}

// parse checks a segment's header, table of contents and every
// section's checksum.
func parse(data []byte) (*file, error) {
	if len(data) < headerSize+trailerSize || string(data[:8]) != magic {
		return nil, errors.New("not a segment file")
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != Layout {
		return nil, fmt.Errorf("%w: layout %d, this build reads %d", ErrLayout, v, Layout)
	}
	tr := data[len(data)-trailerSize:]
	if string(tr[20:]) != trailerMagic {
		return nil, errors.New("segment has no trailer (a file cut short?)")
	}
	tocOff, tocLen := binary.LittleEndian.Uint64(tr[0:]), binary.LittleEndian.Uint64(tr[8:])
	if tocOff < headerSize || tocOff+tocLen > uint64(len(data)-trailerSize) || tocLen < 4 {
		return nil, errors.New("segment's table of contents lies outside the file")
	}
	toc := data[tocOff : tocOff+tocLen]
	if crc32.Checksum(toc, castagnoli) != binary.LittleEndian.Uint32(tr[16:]) {
		return nil, errors.New("segment's table of contents fails its checksum")
	}
	f := &file{data: data, sections: make(map[string][]byte)}
	n := binary.LittleEndian.Uint32(toc)
	p := toc[4:]
	for range n {
		if len(p) < 2 {
			return nil, errors.New("segment's table of contents is cut short")
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l+20 {
			return nil, errors.New("segment's table of contents is cut short")
		}
		name := string(p[2 : 2+l])
		p = p[2+l:]
		off, ln, sum := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint32(p[16:])
		p = p[20:]
		if off < headerSize || off+ln > tocOff || off+ln < off {
			return nil, fmt.Errorf("segment section %s lies outside the file", name)
		}
		b := data[off : off+ln : off+ln]
		if crc32.Checksum(b, castagnoli) != sum {
			return nil, fmt.Errorf("segment section %s fails its checksum", name)
		}
		f.sections[name] = b
	}
	return f, nil
}

// section returns a section, which must be present.
func (f *file) section(name string) ([]byte, error) {
	b, ok := f.sections[name]
	if !ok {
		return nil, fmt.Errorf("segment has no section %s", name)
	}
	return b, nil
}

func (f *file) u16s(name string) ([]uint16, error) {
	b, err := f.section(name)
	if err != nil {
		return nil, err
	}
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("segment section %s is not whole 16-bit values", name)
	}
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v, nil
}

func (f *file) u32s(name string) ([]uint32, error) {
	b, err := f.section(name)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("segment section %s is not whole 32-bit values", name)
	}
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v, nil
}

// u32sInPlace returns a section of 32-bit values as a slice of the map
// itself when the machine is little-endian (sections are aligned), else
// a copy: for arrays an index keeps and never writes.
func (f *file) u32sInPlace(name string) ([]uint32, error) {
	b, err := f.section(name)
	if err != nil || len(b)%4 != 0 || !littleEndian || len(b) == 0 {
		return f.u32s(name)
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), nil
}

// littleEndian is set when the machine lays values out as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (f *file) u64s(name string) ([]uint64, error) {
	b, err := f.section(name)
	if err != nil {
		return nil, err
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("segment section %s is not whole 64-bit values", name)
	}
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v, nil
}

// column is a column of byte strings read in place (see writer.strs).
type column struct {
	data []byte
	ends []uint64
}

// strs opens the column name of n rows; an optional column that is
// absent reads as n empty rows.
func (f *file) strs(name string, n int, optional bool) (column, error) {
	_, has := f.sections[name+".bytes"]
	if !has && optional {
		return column{ends: make([]uint64, n)}, nil
	}
	data, err := f.section(name + ".bytes")
	if err != nil {
		return column{}, err
	}
	ends, err := f.u64s(name + ".ends")
	if err != nil {
		return column{}, err
	}
	if len(ends) != n {
		return column{}, fmt.Errorf("segment column %s has %d rows, want %d", name, len(ends), n)
	}
	var prev uint64
	for _, e := range ends {
		if e < prev || e > uint64(len(data)) {
			return column{}, fmt.Errorf("segment column %s has an offset out of order", name)
		}
		prev = e
	}
	return column{data: data, ends: ends}, nil
}

// bytes returns row i in place.
func (c column) bytes(i int) []byte {
	start := uint64(0)
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.data[start:c.ends[i]:c.ends[i]]
}

// str returns row i as a string that shares the file's memory: the map
// is never undone, so the string stays valid.
func (c column) str(i int) string {
	return unsafeString(c.bytes(i))
}

// view returns row i in place, nil when empty: for bytes nothing writes.
func (c column) view(i int) []byte {
	if b := c.bytes(i); len(b) > 0 {
		return b
	}
	return nil
}

// listColumn is a column of string lists (see writer.lists).
type listColumn struct {
	ends  []uint64
	items column
}

func (f *file) lists(name string, n int, optional bool) (listColumn, error) {
	if _, has := f.sections[name+".n"]; !has && optional {
		return listColumn{ends: make([]uint64, n), items: column{ends: nil}}, nil
	}
	ends, err := f.u64s(name + ".n")
	if err != nil {
		return listColumn{}, err
	}
	if len(ends) != n {
		return listColumn{}, fmt.Errorf("segment column %s has %d rows, want %d", name, len(ends), n)
	}
	total := 0
	if n > 0 {
		total = int(ends[n-1])
	}
	items, err := f.strs(name, total, false)
	if err != nil {
		return listColumn{}, err
	}
	var prev uint64
	for _, e := range ends {
		if e < prev {
			return listColumn{}, fmt.Errorf("segment column %s has an offset out of order", name)
		}
		prev = e
	}
	return listColumn{ends: ends, items: items}, nil
}

// row returns list i, nil when empty.
func (c listColumn) row(i int) []string {
	start := uint64(0)
	if i > 0 {
		start = c.ends[i-1]
	}
	if c.ends[i] == start {
		return nil
	}
	out := make([]string, 0, c.ends[i]-start)
	for k := start; k < c.ends[i]; k++ {
		out = append(out, c.items.str(int(k)))
	}
	return out
}

// validName reports whether a collection name can prefix section names.
func validName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/.") && len(s) < 64
}
