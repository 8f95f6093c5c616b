package contract

import (
	"strings"
	"unicode/utf8"
)

// MaxPathBytes bounds a repository-relative path.
const MaxPathBytes = 4096

// ValidPath reports whether p is a repository-relative path as the
// watcher writes it: slash-separated, not absolute, valid UTF-8, no NUL
// byte, and no empty, "." or ".." segment, so that it can never name a
// place outside its repository.
func ValidPath(p string) bool {
	if p == "" || len(p) > MaxPathBytes || !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
