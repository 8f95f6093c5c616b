// Package datadir guards knowhub's data directory (the embedded server's
// JetStream store and knowhub's own state): one process at a time may use
// it. Two processes on one store would each believe they own it, and
// writes acknowledged by one would never reach the other.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// LockFile is the name of the lock file inside a data directory.
const LockFile = "knowhub.lock"

// Held is a locked data directory. The lock is an advisory file lock
// (flock), so it ends with the process, however the process ends.
type Held struct {
	fl *flock.Flock
}

// Lock creates dir if need be and locks it. When another process holds
// it, Lock fails at once with an error naming the directory and that
// process.
func Lock(dir string) (*Held, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("data directory %s is in use by %s: stop it, or give this one another directory with --data", dir, holder(path))
	}
	// The lock is held: record who holds it, for the next one's message.
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &Held{fl: fl}, nil
}

// holder names the process recorded in the lock file.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "another process"
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "another process"
	}
	return "process " + strconv.Itoa(pid)
}

// Release unlocks the directory. The lock file stays: removing it could
// let a third process lock a file that a second has just opened.
func (h *Held) Release() error {
	if h == nil || h.fl == nil {
		return errors.New("data directory not locked")
	}
	if err := h.fl.Unlock(); err != nil {
		return fmt.Errorf("unlock data directory: %w", err)
	}
	return nil
}
