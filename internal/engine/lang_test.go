package engine

import (
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// testdata/lang holds four OpenClaw pages in English and in their Arabic,
// Japanese, French and Chinese translations (ar/, ja-JP/, fr/, zh-CN/).

func langHits(t *testing.T, e *Engine, req contract.SearchRequest) []contract.SearchHit {
	t.Helper()
	req.NoSnippet = true
	r, err := e.SearchDocs(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) == 0 {
		t.Fatalf("%q: no hit", req.Query)
	}
	return r.Hits
}

func langsOf(hits []contract.SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Lang
	}
	return out
}

// mixed lists the hits in language l that rank below a hit in another
// language.
func mixed(hits []contract.SearchHit, l string) []string {
	var out []string
	other := ""
	for _, h := range hits {
		switch {
		case h.Lang != l && other == "":
			other = h.Path
		case h.Lang == l && other != "":
			out = append(out, h.Path+" below "+other)
		}
	}
	return out
}

// An English question is answered first from the English pages, a
// Chinese one from the Chinese pages: the translations keep the product
// names, commands and code, so without a language preference they rank
// among the pages in the question's language, above all but the best.
func TestQueryLanguageRanksItsPagesFirst(t *testing.T) {
	e := engineFromDir(t, "testdata/lang")
	off := DefaultPageScoring()
	off.OtherLanguage = 0
	for _, c := range []struct{ query, lang string }{
		{"how do I install OpenClaw with Bun", "en"},
		{"how does the channel location parsing work for Telegram and WhatsApp", "en"},
		{"what is the timezone of the date and time in the agent prompt", "en"},
		{"how do I use the Cohere provider with an API key", "en"},
		{"如何使用 Bun 安装 OpenClaw", "zh"},
		{"如何为 Cohere 提供商配置 API 密钥", "zh"},
	} {
		t.Run(c.query, func(t *testing.T) {
			req := contract.SearchRequest{Query: c.query, TopK: 10, Group: contract.GroupPages}
			if without := langHits(t, e.WithPageScoring(off), req); len(mixed(without, c.lang)) == 0 {
				t.Fatalf("without a language preference the pages in %s already come first (%q): the case tests nothing", c.lang, langsOf(without))
			}
			hits := langHits(t, e, req)
			if hits[0].Lang != c.lang {
				t.Errorf("first hit %s (%s), want a page in %s; languages %q", hits[0].Path, hits[0].Lang, c.lang, langsOf(hits))
			}
			if m := mixed(hits, c.lang); len(m) > 0 {
				t.Errorf("pages in %s rank below pages in other languages: %q (languages %q)", c.lang, m, langsOf(hits))
			}
		})
	}
}

// The lang filter keeps only pages in that language, before the cut; a
// tag names its language whatever its region; a bad tag is a clear error.
func TestLangFilter(t *testing.T) {
	e := engineFromDir(t, "testdata/lang")
	for _, tag := range []string{"en", "ja", "ja-JP", "ar", "zh-CN"} {
		hits := langHits(t, e, contract.SearchRequest{Query: "OpenClaw Bun Telegram", TopK: 20, Lang: tag})
		want := tag[:2]
		for _, h := range hits {
			if h.Lang != want {
				t.Errorf("lang %s: hit %s in %q", tag, h.Path, h.Lang)
			}
		}
	}
	_, err := e.SearchDocs(contract.SearchRequest{Query: "bun", Lang: "english"})
	if err == nil || !strings.HasSuffix(err.Error(), `lang: "english" is not a language tag (use one like "en", "zh-CN" or "pt-BR")`) {
		t.Errorf("bad lang: %v", err)
	}
}

// Over pages in one language only, a query in another language changes
// nothing: there is no page of its language to prefer.
func TestQueryLanguageWithOneLanguageIndexed(t *testing.T) {
	e := engineFromDir(t, "testdata/lang/zh-CN")
	off := DefaultPageScoring()
	off.OtherLanguage = 0
	req := contract.SearchRequest{Query: "how do I install OpenClaw with Bun", TopK: 10, NoSnippet: true}
	a, err := e.SearchDocs(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.WithPageScoring(off).SearchDocs(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Hits) == 0 || len(a.Hits) != len(b.Hits) {
		t.Fatalf("%d hits against %d", len(a.Hits), len(b.Hits))
	}
	for i := range a.Hits {
		if a.Hits[i].ChunkID != b.Hits[i].ChunkID || a.Hits[i].Score != b.Hits[i].Score {
			t.Errorf("hit %d: %s %.4f, without the preference %s %.4f", i, a.Hits[i].ChunkID, a.Hits[i].Score, b.Hits[i].ChunkID, b.Hits[i].Score)
		}
	}
}
