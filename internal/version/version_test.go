package version

import (
	"encoding/json"
	"os"
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	settings := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-04T18:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct{ main, want string }{
		{"(devel)", Release},
		{"", Release},
		{"v0.0.0-20261204185400-44e370c1abcd", Release},
		{"v0.0.0-20261204185400-44e370c1abcd+dirty", Release},
		{"v1.2.4-0.20261204185400-44e370c1abcd", Release},
		{"v1.2.3-pre.0.20261204185400-44e370c1abcd", Release},
		{"v1.2.3", "1.2.3"},
		{"v2.0.0-rc.1", "2.0.0-rc.1"},
	} {
		in := of(&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: tc.main}, Settings: settings})
		if in.Version != tc.want {
			t.Errorf("module version %q: reported %q, want %q", tc.main, in.Version, tc.want)
		}
		if err := Semver(in.Version); err != nil {
			t.Error(err)
		}
	}
	in := of(&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: settings})
	if got, want := in.String(), "knowhub "+Release+" (revision 0123456789ab, modified, 2026-12-04T18:00:00Z) go1.26.0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// The OpenClaw plugin ships with the version of the tree it is in.
func TestThePluginCarriesTheSameVersion(t *testing.T) {
	for _, f := range []string{"../../integrations/openclaw/package.json", "../../integrations/openclaw/openclaw.plugin.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Version string }
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if v.Version != Release {
			t.Errorf("%s: version %q, want %q", f, v.Version, Release)
		}
	}
}

func TestSemver(t *testing.T) {
	for _, v := range []string{"1", "1.2", "v1.2.3", "1.2.x", ""} {
		if Semver(v) == nil {
			t.Errorf("%q accepted", v)
		}
	}
}
