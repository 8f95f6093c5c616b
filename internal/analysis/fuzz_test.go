package analysis

import (
	"slices"
	"testing"
)

// FuzzAnalyze checks the invariants of the analysis on arbitrary input: no
// panic, offsets within the input with Start <= End, positions that never go
// back, terms that are non-empty valid UTF-8 of at most MaxTermLen bytes,
// and entry points that agree with each other.
func FuzzAnalyze(f *testing.F) {
	for _, seed := range []string{
		"", "hello world", "The quick brown fox",
		"ToolSearch create_issue github__list_pulls openclaw.json --dry-run",
		"HTTPServer ipv4 utf8 k8s PDF&URLTool APIs URLsList Base64Encode",
		"2026.7.1 v1.2.3-beta 3.14 404 127.0.0.1 python3.12",
		"配置项目 配置 TypeScript 项目 設定ファイル ｻｰﾊﾞｰ か\u3099 한국어",
		"Café ＡＢＣ１２ naïve Straße Ærø ΛΌΓΟΣ Привет",
		"สวัสดีครับ नमस्ते مَرْحَبًا שָׁלוֹם",
		"ท\u0e4d\u0e32งาน น\u0e49\u0e4d\u0e32 \u0e4d\u0e32 ຄ\u0ecd\u0eb2 ພາສາ ភាសា မြန်မာ Mintlifyและ๓",
		"ก\u0e48\u0e48\u0e48\u0e48\u0e48\u0e48\u0e48\u0e48\u0e48\u0e48\u0e4d\u0e32ข",
		"abc\xffdef\xc3(ghi", "a\u0301\u0301\u0301b", "x_.-_y", "a" + "\u200d" + "b",
	} {
		f.Add(seed)
	}
	a := New()
	f.Fuzz(func(t *testing.T, text string) {
		toks := a.Analyze(text)
		checkTokens(t, text, toks)
		var want []string
		for _, tk := range toks {
			want = append(want, tk.Term)
		}
		if got := a.AppendTerms(nil, text); !slices.Equal(got, want) {
			t.Fatalf("AppendTerms = %q, Analyze terms = %q", got, want)
		}
		freqs := map[string]int{}
		if n := a.TermFreqs(text, freqs); n != len(want) {
			t.Fatalf("TermFreqs returned %d, want %d", n, len(want))
		}
		for _, tk := range toks {
			src := text[tk.Start:tk.End]
			if !slices.Contains(a.AppendTerms(nil, src), tk.Term) {
				t.Fatalf("token %+v: its source %q does not analyze to it", tk, src)
			}
		}
	})
}
