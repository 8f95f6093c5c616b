package datadir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestNATSToken(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadNATSToken(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a new directory holds a token: %v", err)
	}
	tok, err := NATSToken(dir)
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q, %v", tok, err)
	}
	fi, err := os.Stat(filepath.Join(dir, NATSTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	again, err := NATSToken(dir)
	if err != nil || again != tok {
		t.Errorf("a restart made a new token: %q, %v", again, err)
	}
	if other, _ := NATSToken(t.TempDir()); other == tok {
		t.Error("two data directories share a token")
	}
	// A token file others can read is narrowed to its owner.
	os.Chmod(filepath.Join(dir, NATSTokenFile), 0o644)
	if got, err := ReadNATSToken(dir); err != nil || got != tok {
		t.Fatalf("read: %q, %v", got, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, NATSTokenFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after a read, want 0600", fi.Mode().Perm())
	}
}
