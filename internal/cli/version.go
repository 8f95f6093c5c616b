package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version describes this binary: the module version it was built from
// (a tag with `go install ...@v1.2.3`, "(devel)" from a checkout), the VCS
// revision and time when the build recorded them, and the Go version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "knowhub (no build information) " + runtime.Version()
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := "knowhub " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += fmt.Sprintf(" (revision %s%s", rev, dirty)
		if when != "" {
			out += ", " + when
		}
		out += ")"
	}
	return out + " " + bi.GoVersion
}
