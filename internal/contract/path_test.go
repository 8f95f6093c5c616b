package contract

import "testing"

func TestValidPath(t *testing.T) {
	for p, want := range map[string]bool{
		"a.md": true, "docs/guide/setup.md": true, "with space.md": true, "日本語/ページ.md": true, "..hidden.md": true,
		"": false, "/etc/passwd": false, "../../../../etc/passwd": false, "a/../b.md": false, "a//b.md": false,
		"./a.md": false, "a/": false, "a\x00b.md": false, "bad\xff.md": false,
	} {
		if got := ValidPath(p); got != want {
			t.Errorf("ValidPath(%q) = %v, want %v", p, got, want)
		}
	}
}
