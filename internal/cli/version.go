package cli

import "github.com/knowhub/knowhub/internal/version"

// Version describes this binary: knowhub's version, the VCS revision and
// time when the build recorded them, and the Go version.
func Version() string { return version.Get().String() }
