//go:build unix

package segment

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps a file read-only. The map is never undone: strings served
// from it must stay valid for as long as anything holds them, and a file
// renamed over it later leaves this one's pages to the map.
func mapFile(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	return b, nil
}

// unmap undoes a map that nothing refers to yet.
func unmap(b []byte) {
	if b != nil {
		_ = unix.Munmap(b)
	}
}

// dontNeed drops from the process the whole pages of the map data that
// section b covers, keeping a page it shares with its neighbours. Read
// again, a page comes back from the file.
func dontNeed(data, b []byte) {
	if len(b) == 0 || len(data) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(&data[0]))
	start := uintptr(unsafe.Pointer(&b[0])) - base
	end := start + uintptr(len(b))
	start = (start + page - 1) / page * page
	end = end / page * page
	if end > start {
		_ = unix.Madvise(data[start:end], unix.MADV_DONTNEED)
	}
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
