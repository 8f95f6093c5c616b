package analysis

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/analysis.golden")

// goldenInputs cover every rule of the pipeline. Their analysis is pinned
// in testdata/analysis.golden together with Version, so that a change of
// output cannot land without a Version bump.
var goldenInputs = []string{
	"The quick brown fox jumps over the lazy dog.",
	"Running configurations: agents, messages and policies.",
	"ToolSearch agentId create_issue github__list_pulls plugin-sdk --dry-run",
	"openclaw.json agents.entries HTTPServer parseURL APIs URLsList",
	"ipv4 utf8 k8s Base64Encode P2P PDF&URLTool OpenClaw README",
	"404 3.14 2026.7.1 v1.2.3 V2.0.1 127.0.0.1 v1.2.3-beta python3.12 2-day",
	"Café naïve Ångström Straße Æther ＡＢＣ１２ ﬁle x² hy\u00adphen",
	"Привет, мир ΛΌΓΟΣ สวัสดีครับ नमस्ते مَرْحَبًا שָׁלוֹם",
	"配置项目 配置 TypeScript 项目 使用OpenClaw网关 第3章",
	"設定ファイル ひらがな サーバー ｻｰﾊﾞｰ か\u3099 時々 한국어 텍스트 \uF900",
	"don't it's users' O'Brien state-of-the-art e‐mail",
	"abc\xffdef " + strings.Repeat("x", 65) + " " + strings.Repeat("y", 64) + "_tail",
}

func formatGolden(a *Analyzer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %s\n", Version)
	for _, in := range goldenInputs {
		fmt.Fprintf(&b, "\n%q\n", in)
		for _, tk := range a.Analyze(in) {
			fmt.Fprintf(&b, "  %d %q %d:%d %q\n", tk.Pos, tk.Term, tk.Start, tk.End, in[tk.Start:tk.End])
		}
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "analysis.golden")
	got := formatGolden(New())
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("write golden file: %v", err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	want := string(b)
	if got == want {
		return
	}
	wantVersion, _, _ := strings.Cut(want, "\n")
	if wantVersion == "version "+Version {
		t.Errorf("analysis output changed but Version is still %q: bump Version, then run go test -run TestGolden -update", Version)
	} else {
		t.Errorf("analysis output differs from testdata/analysis.golden (%s): run go test -run TestGolden -update", wantVersion)
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("first difference at line %d:\n got %s\nwant %s", i+1, g, w)
			break
		}
	}
}
