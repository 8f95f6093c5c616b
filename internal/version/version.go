// Package version is knowhub's one version: what `knowhub --version`, the
// /metrics build info, the NATS micro service, the MCP server and the
// OpenClaw plugin report.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Release is the version of this source tree, in semantic versioning
// without a leading "v". The OpenClaw plugin's package.json carries the
// same (a test checks it). A build from a module tag
// (`go install ...@v1.2.3`) reports its tag instead; a release build may
// set it with -ldflags "-X github.com/knowhub/knowhub/internal/version.Release=1.2.3".
var Release = "0.1.0"

// Info is what a build records of itself.
type Info struct {
	Version  string // semantic version, without "v"
	Revision string // VCS revision, "" when not recorded
	Time     string // VCS commit time, RFC 3339, "" when not recorded
	Modified bool   // built from a tree with uncommitted changes
	Go       string // Go version
}

// Get returns this binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Release}
	}
	return of(bi)
}

func of(bi *debug.BuildInfo) Info {
	in := Info{Version: Release, Go: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudo(v) {
		in.Version = strings.TrimPrefix(v, "v")
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// pseudo reports whether v is a Go pseudo-version (what a build of an
// untagged commit is stamped with, "v0.0.0-20261204185400-44e370c1abcd",
// maybe "+dirty"): no release, so Release stands.
func pseudo(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 || strings.Trim(v[i+1:], "0123456789abcdef") != "" {
		return false
	}
	stamp := v[:i]
	if j := max(strings.LastIndexByte(stamp, '-'), strings.LastIndexByte(stamp, '.')); j >= 0 {
		stamp = stamp[j+1:]
	}
	return len(stamp) == 14 && strings.Trim(stamp, "0123456789") == ""
}

// String is the one line `knowhub --version` prints: "knowhub 0.1.0
// (revision 0123456789ab, modified, 2026-12-04T18:00:00Z) go1.26.0".
func (in Info) String() string {
	out := "knowhub " + in.Version
	if in.Revision != "" {
		rev := in.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " (revision " + rev
		if in.Modified {
			out += ", modified"
		}
		if in.Time != "" {
			out += ", " + in.Time
		}
		out += ")"
	}
	if in.Go != "" {
		out += " " + in.Go
	}
	return out
}

// Semver checks that v is a plain semantic version (MAJOR.MINOR.PATCH with
// an optional pre-release or build suffix), as the NATS micro service
// requires.
func Semver(v string) error {
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", v)
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", v)
		}
	}
	return nil
}
