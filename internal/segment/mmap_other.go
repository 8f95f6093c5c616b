//go:build !unix

package segment

import (
	"io"
	"os"
	"unsafe"
)

// mapFile reads a file into memory where no memory map is available.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

func unmap([]byte) {}

func dontNeed(_, _ []byte) {}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
