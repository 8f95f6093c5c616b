package engine

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
)

// With Content, each hit carries its whole section text, cut at a word
// boundary with an ellipsis past MaxHitContentBytes, and a reply holds
// at most MaxReplyContentBytes of it.
func TestSearchContentBounded(t *testing.T) {
	short := "Gateway tokens rotate every day; set gateway.auth.token to pin one."
	long := strings.Repeat("gateway tokens rotate with the daily schedule é ", 200) // ~9.8 KB
	pages := map[string]string{"short.md": short}
	for i := range 9 {
		pages[fmt.Sprintf("long%d.md", i)] = long + fmt.Sprint(i)
	}
	e := engineWith(t, pages)
	r, err := e.SearchDocs(contract.SearchRequest{Query: "gateway tokens rotate pin", TopK: 10, Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 10 {
		t.Fatalf("%d hits, want 10", len(r.Hits))
	}
	total, withContent := 0, 0
	for _, h := range r.Hits {
		total += len(h.Content)
		if h.Content != "" {
			withContent++
		}
		if !utf8.ValidString(h.Content) || len(h.Content) > contract.MaxHitContentBytes {
			t.Errorf("%s: content of %d bytes (valid UTF-8: %v)", h.Path, len(h.Content), utf8.ValidString(h.Content))
		}
		switch {
		case h.Path == "short.md" && (h.Content != short || h.ContentCut):
			t.Errorf("short section: %q cut=%v, want it whole", h.Content, h.ContentCut)
		case h.Path != "short.md" && h.Content != "":
			body := strings.TrimSuffix(h.Content, " …")
			if !h.ContentCut || body == h.Content || !strings.HasPrefix(long, body) || !strings.HasPrefix(long[len(body):], " ") {
				t.Errorf("%s: long section not cut at a word boundary with an ellipsis: …%q", h.Path, h.Content[max(0, len(h.Content)-40):])
			}
		}
	}
	if total > contract.MaxReplyContentBytes || withContent < 6 || withContent == len(r.Hits) {
		t.Errorf("reply holds %d bytes of content in %d hits; want at most %d, in most but not all hits", total, withContent, contract.MaxReplyContentBytes)
	}
	plain, _ := e.SearchDocs(contract.SearchRequest{Query: "gateway tokens rotate"})
	for _, h := range plain.Hits {
		if h.Content != "" {
			t.Errorf("content without asking: %s", h.Path)
		}
	}
}
