package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NATSTokenFile names the file, inside a data directory, that holds the
// token of the embedded NATS server `knowhub up` runs on it. Only its
// owner may read it (mode 0600): holding it is holding every stream,
// bucket and scope of that node.
const NATSTokenFile = "nats.token"

// NATSToken returns the token of dir's embedded NATS server, made on first
// use: 32 random bytes in hex, written with mode 0600. A token file that
// others could read is narrowed to its owner first.
func NATSToken(dir string) (string, error) {
	tok, err := ReadNATSToken(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a NATS token: %w", err)
	}
	tok = hex.EncodeToString(b)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create data directory %s: %w", dir, err)
	}
	// Written under a temporary name and renamed, so that a reader never
	// sees half a token.
	tmp, err := os.CreateTemp(dir, NATSTokenFile+".*")
	if err != nil {
		return "", fmt.Errorf("write the NATS token: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.WriteString(tok + "\n")
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, NATSTokenFile))
	}
	if err != nil {
		return "", fmt.Errorf("write the NATS token: %w", err)
	}
	return tok, nil
}

// ReadNATSToken reads the token of dir's embedded NATS server; the error
// wraps fs.ErrNotExist when there is none.
func ReadNATSToken(dir string) (string, error) {
	path := filepath.Join(dir, NATSTokenFile)
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("%s is readable by others and cannot be narrowed: %w", path, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		return "", fmt.Errorf("%s holds no token: remove it and restart knowhub up to make a new one", path)
	}
	return tok, nil
}
