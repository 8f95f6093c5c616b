package highlight

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/analysis"
)

func TestSnippet(t *testing.T) {
	an := analysis.New()
	long := strings.Repeat("filler words here. ", 40)
	tests := []struct {
		name, text, query string
		want              []string
		notWant           []string
	}{
		{name: "marks stemmed matches", text: "Configure the fallback models for every agent.", query: "configuring model",
			want: []string{"**Configure**", "**models**"}},
		{name: "finds the passage far into the text", text: long + "The gateway restarts when the config changes. " + long, query: "gateway restarts",
			want: []string{"**gateway** **restarts**", "…"}},
		{name: "no match returns the start", text: "Plain text about nothing in particular.", query: "zebra",
			want: []string{"Plain text"}, notWant: []string{"**"}},
		{name: "cyrillic capitals", text: "Конфигурация шлюза; КОНФИГУРАЦИЯ модели.", query: "конфигурация",
			want: []string{"**Конфигурация**", "**КОНФИГУРАЦИЯ**"}},
		{name: "latin diacritics", text: "Étape de déploiement: vérifiez la configuration.", query: "etape deploiement",
			want: []string{"**Étape**", "**déploiement**"}},
		{name: "vietnamese", text: "Cấu hình mô hình dự phòng cho tác nhân.", query: "cấu hình dự phòng",
			want: []string{"**Cấu** **hình**", "**dự** **phòng**"}},
		{name: "thai word inside a phrase", text: strings.Repeat("ข้อความอื่น ", 30) + "ไดเรกทอรีนี้ดูแลการเขียนเอกสารของโครงการ " + strings.Repeat("ข้อความอื่น ", 30), query: "เอกสาร",
			want: []string{"**เอกสาร**"}, notWant: []string{"**ไดเรกทอรี"}},
		{name: "chinese", text: strings.Repeat("其他内容。", 60) + "配置网关的模型回退链。" + strings.Repeat("其他内容。", 60), query: "模型回退",
			want: []string{"**模型回退**"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			terms := map[string]bool{}
			for _, q := range an.QueryTerms(tc.query) {
				terms[q] = true
			}
			ps := New(terms)
			got := snippetOf(an, tc.text, ps.scan(tc.text), ps, terms, 120)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("snippet %q lacks %q", got, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("snippet %q has %q", got, w)
				}
			}
			if !utf8.ValidString(got) {
				t.Errorf("snippet is not valid UTF-8: %q", got)
			}
			if plain := strings.ReplaceAll(got, "**", ""); len(plain) > 120+2*len("…")+8 {
				t.Errorf("snippet is %d bytes, want about 120", len(plain))
			}
		})
	}
}

func TestMarkCollapsesWhiteSpace(t *testing.T) {
	text := "  lead \t\n word\u00a0next\u3000配置  end "
	marks := [][2]int{{strings.Index(text, "word"), strings.Index(text, "word") + 4}}
	got := mark(text, 0, len(text), marks)
	if want := "lead **word** next 配置 end"; got != want {
		t.Errorf("mark = %q, want %q", got, want)
	}
	if got := mark(text, 2, 6, nil); got != "…lead…" {
		t.Errorf("cut mark = %q, want %q", got, "…lead…")
	}
}

// FuzzMarkWhiteSpace checks that an unmarked, uncut snippet is the text's
// words joined by single spaces, every Unicode space counting as one.
func FuzzMarkWhiteSpace(f *testing.F) {
	for _, s := range []string{"", " a  b ", "x\u0085y\u00a0z\u1680w\u2000\u200a\u2028\u2029\u202f\u205f\u3000v",
		"مرحبا  بالعالم\tكيف", "Привет,\u00a0мир", "配置\u3000网关 回退", "©®\u00a0¼ ‐—… “quoted”"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		if got, want := mark(text, 0, len(text), nil), strings.Join(strings.Fields(text), " "); got != want {
			t.Errorf("mark(%q) = %q, want %q", text, got, want)
		}
	})
}

// TestMarkCollapsesLongText compares mark with the text's words joined by
// single spaces on random texts longer than the fuzz seeds: words, single
// and double spaces, tabs and newlines, control characters, punctuation
// and Unicode spaces.
func TestMarkCollapsesLongText(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	pieces := []string{"word", "a", "config", " ", " ", " ", "  ", "\t", "\n", "\x01", "!", "\x7f", "\u00a0", "é", "配置", "\u3000", "x!"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		if got, want := mark(text, 0, len(text), nil), strings.Join(strings.Fields(text), " "); got != want {
			t.Fatalf("mark(%q) = %q, want %q", text, got, want)
		}
	}
}
