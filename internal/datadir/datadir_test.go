package datadir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A second lock of a data directory fails at once with a message naming
// the directory and the process that holds it; once released, the
// directory can be locked again.
func TestSecondLockFailsNamingTheHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	if err == nil {
		t.Fatal("a second lock of the same data directory succeeded")
	}
	for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	_ = again.Release()
}
