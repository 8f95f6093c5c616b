package analysis

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// terms returns the terms of text in order.
func terms(tb testing.TB, a *Analyzer, text string) []string {
	tb.Helper()
	return a.AppendTerms(nil, text)
}

// checkTerms runs a table of input → expected terms through AppendTerms.
func checkTerms(t *testing.T, cases []struct {
	name, in string
	want     []string
}) {
	t.Helper()
	a := New()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := terms(t, a, tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("terms(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSegmentation(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"spaces and punctuation", "hello, world! (foo) [bar]", []string{"hello", "world", "foo", "bar"}},
		{"symbols separate", "a+b=c|d*e/f\\g~h^i@j#k", []string{"b", "c", "d", "e", "f", "g", "h", "j", "k"}},
		{"digits are word characters", "error 404 h264", []string{"error", "404", "h264"}},
		{"apostrophe separates", "don't it's users' O'Brien", []string{"user", "o", "brien"}},
		{"curly apostrophe separates", "it’s Bob’s", []string{"bob"}},
		{"emoji separate", "rocket🚀launch✨today", []string{"rocket", "launch", "today"}},
		{"lower-case", "HELLO World", []string{"hello", "world"}},
		{"accent folding", "Café naïve Ångström façade", []string{"cafe", "naiv", "angstrom", "facad"}},
		{"combining marks folded", "Cafe\u0301", []string{"cafe"}},
		{"full-width forms", "ＡＢＣ　ｄｅｆ１２３", []string{"abc", "def123"}},
		{"ligature", "ﬁle", []string{"file"}},
		{"sharp s and friends", "Straße Æther Øresund Łódź", []string{"strass", "aether", "oresund", "lodz"}},
		{"Cyrillic", "Привет, мир", []string{"привет", "мир"}},
		{"Greek final sigma", "ΛΌΓΟΣ λόγος", []string{"λογοσ", "λογοσ"}},
		{"Devanagari keeps vowel signs", "नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}},
		{"Arabic drops harakat", "مَرْحَبًا بالعالم", []string{"مرحبا", "بالعالم"}},
		{"Hebrew drops points", "שָׁלוֹם", []string{"שלום"}},
		{"invalid UTF-8 separates", "abc\xffdef\xc3(ghi", []string{"abc", "def", "ghi"}},
		{"soft hyphen inside a word", "hy\u00adphen", []string{"hyphen"}},
		{"superscript digit", "x²", []string{"x2"}},
		{"empty", "", nil},
		{"only separators", " ,.-_!? \t\n", nil},
	})
}

func TestStopWords(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"dropped", "The quick brown fox jumps over the lazy dog", []string{"quick", "brown", "fox", "jump", "lazi", "dog"}},
		{"case-insensitive", "THE And OF", nil},
		{"all stop words", "it is what it is", nil},
		{"stop word parts dropped, whole kept", "state-of-the-art", []string{"stateoftheart", "state", "art"}},
	})

	t.Run("positions advance", func(t *testing.T) {
		got := New().Analyze("the cat and the hat")
		want := []Token{{"cat", 1, 4, 7}, {"hat", 4, 16, 19}}
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestStemming(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"inflections", "running runs ran", []string{"run", "run", "ran"}},
		{"derivations", "configuration configure configured", []string{"configur", "configur", "configur"}},
		{"plurals", "agents messages policies", []string{"agent", "messag", "polici"}},
		{"short words untouched", "go js", []string{"go", "js"}},
		{"words with digits untouched", "tests2 runs3", []string{"tests2", "runs3"}},
		{"non-ASCII untouched", "привет мира", []string{"привет", "мира"}},
	})
}

func TestIdentifiers(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"PascalCase", "ToolSearch", []string{"toolsearch", "tool", "search"}},
		{"camelCase", "agentId", []string{"agentid", "agent", "id"}},
		{"snake_case", "create_issue", []string{"createissu", "creat", "issu"}},
		{"double underscore", "github__list_pulls", []string{"githublistpul", "github", "list", "pull"}},
		{"kebab-case", "plugin-sdk", []string{"pluginsdk", "plugin", "sdk"}},
		{"flag", "--dry-run", []string{"dryrun", "dri", "run"}},
		{"styles agree", "dry_run dryRun DryRun dry-run", []string{
			"dryrun", "dri", "run", "dryrun", "dri", "run", "dryrun", "dri", "run", "dryrun", "dri", "run"}},
		{"dotted file name", "openclaw.json", []string{"openclaw.json", "openclaw", "json"}},
		{"dotted path, whole not stemmed", "agents.entries", []string{"agents.entries", "agent", "entri"}},
		{"acronym boundary", "HTTPServer", []string{"httpserver", "http", "server"}},
		{"acronym at end", "parseURL", []string{"parseurl", "pars", "url"}},
		{"plural acronym", "APIs", []string{"api"}},
		{"plural acronym then word", "URLsList", []string{"urlslist", "url", "list"}},
		{"letter-digit kept", "ipv4 utf8 k8s", []string{"ipv4", "utf8", "k8s"}},
		{"digit then word", "Base64Encode", []string{"base64encode", "base64", "encod"}},
		{"digit then capitals", "P2P", []string{"p2p"}},
		{"ampersand separates", "PDF&URLTool", []string{"pdf", "urltool", "url", "tool"}},
		{"brand names", "OpenClaw GitHub", []string{"openclaw", "open", "claw", "github", "git", "hub"}},
		{"all caps is one word", "README", []string{"readm"}},
		{"trailing dot is not a connector", "see config.", []string{"see", "config"}},
		{"double hyphen is not a connector", "tool--which", []string{"tool"}},
		{"dot then underscore is not a connector", "a._b", []string{"b"}},
		{"leading and trailing connectors", "__init__ .env", []string{"init", "env"}},
		{"non-ASCII camelCase", "ÉcoleNormale", []string{"ecolenormal", "ecol", "normal"}},
		{"hyphen U+2010", "e‐mail", []string{"email", "e", "mail"}},
		{"mixed scripts in a compound", "api_привет", []string{"apiпривет", "api", "привет"}},
	})

	t.Run("parts share the position of the whole", func(t *testing.T) {
		got := New().Analyze("use ToolSearch today")
		want := []Token{
			{"use", 0, 0, 3},
			{"toolsearch", 1, 4, 14}, {"tool", 1, 4, 8}, {"search", 1, 8, 14},
			{"today", 2, 15, 20},
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
}

func TestNumbers(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"integer", "404", []string{"404"}},
		{"decimal", "3.14", []string{"3.14"}},
		{"version", "2026.7.1", []string{"2026.7.1", "2026"}},
		{"v-version", "v1.2.3", []string{"v1.2.3", "v1"}},
		{"capital V", "V2.0.1", []string{"v2.0.1", "v2"}},
		{"two components", "v2.0", []string{"v2.0"}},
		{"IP address", "127.0.0.1", []string{"127.0.0.1", "127"}},
		{"version with suffix", "v1.2.3-beta", []string{"v1.2.3beta", "v1.2.3", "v1", "beta"}},
		{"name then version", "python3.12", []string{"python3.12", "python3", "12"}},
		{"sentence end", "version 2.0.", []string{"version", "2.0"}},
		{"comma separates", "1,000", []string{"1", "000"}},
		{"hyphenated number", "2-day", []string{"2day", "2", "day"}},
	})
}

func TestCJK(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"Chinese bigrams", "配置项目", []string{"配置", "置项", "项目"}},
		{"two characters", "配置", []string{"配置"}},
		{"single character", "中", []string{"中"}},
		{"punctuation splits runs", "配置，项目。", []string{"配置", "项目"}},
		{"mixed with Latin", "配置 TypeScript 项目", []string{"配置", "typescript", "type", "script", "项目"}},
		{"Latin inside a run", "使用OpenClaw网关", []string{"使用", "openclaw", "open", "claw", "网关"}},
		{"digits end a run", "第3章", []string{"第", "3", "章"}},
		{"Japanese kana and kanji", "設定ファイル", []string{"設定", "定フ", "ファ", "ァイ", "イル"}},
		{"Hiragana", "ひらがな", []string{"ひら", "らが", "がな"}},
		{"Katakana with long vowel mark", "サーバー", []string{"サー", "ーバ", "バー"}},
		{"half-width Katakana folded", "ｻｰﾊﾞｰ", []string{"サー", "ーバ", "バー"}},
		{"decomposed voicing mark composed", "か\u3099", []string{"が"}},
		{"iteration mark", "時々", []string{"時々"}},
		{"Korean", "한국어 텍스트", []string{"한국", "국어", "텍스", "스트"}},
		{"compatibility ideograph", "\uF900", []string{"豈"}},
	})

	t.Run("bigrams get consecutive positions", func(t *testing.T) {
		text := "配置项目 ok 中"
		got := New().Analyze(text)
		want := []Token{
			{"配置", 0, 0, 6}, {"置项", 1, 3, 9}, {"项目", 2, 6, 12},
			{"ok", 3, 13, 15}, {"中", 4, 16, 19},
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
}

func TestSpacelessScripts(t *testing.T) {
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		// A character is a letter with its vowel signs and tone marks.
		{"Thai bigrams", "สวัสดีครับ ไทย", []string{"สวั", "วัส", "สดี", "ดีค", "ครั", "รับ", "ไทย"}},
		{"Thai single character", "ก", []string{"ก"}},
		// Leading vowels join the consonant after them, AA and AM the
		// one before.
		{"Thai word inside a phrase", "การเขียนเอกสาร", []string{"การ", "รเขี", "เขีย", "ยน", "นเอ", "เอก", "กสา", "สาร"}},
		{"Thai AM precomposed", "ทำงาน", []string{"ทำงา", "งาน"}},
		{"Thai AM decomposed folds", "ท\u0e4d\u0e32งาน", []string{"ทำงา", "งาน"}},
		{"Thai leading vowel at the end", "ขเ", []string{"ขเ"}},
		{"Thai leading vowel before a mark", "เ\u0e48ก", []string{"เ\u0e48ก"}},
		{"Thai AM after a tone mark", "น\u0e49\u0e4d\u0e32", []string{"น้ำ"}},
		{"Thai digits are a number", "บท๓", []string{"บท", "๓"}},
		{"Thai punctuation splits runs", "ไทย๚ลาว", []string{"ไทย", "ลาว"}},
		{"Latin next to Thai", "Mintlifyและ", []string{"mintlifi", "และ"}},
		{"Lao", "ພາສາລາວ", []string{"ພາສາ", "ສາລາ", "ລາວ"}},
		{"Lao AM decomposed folds", "ຄ\u0ecd\u0eb2", []string{"ຄຳ"}},
		{"Khmer, vowel signs with their consonant", "ភាសា", []string{"ភាសា"}},
		{"Myanmar, medials and asat with their consonant", "မြန်မာ", []string{"မြန်", "န်မာ"}},
	})

	t.Run("bigrams get consecutive positions and source spans", func(t *testing.T) {
		text := "ทำงาน ok ก"
		got := New().Analyze(text)
		want := []Token{
			{"ทำงา", 0, 0, 12}, {"งาน", 1, 6, 15},
			{"ok", 2, 16, 18}, {"ก", 3, 19, 22},
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})

	t.Run("a flood of marks stays within MaxTermLen", func(t *testing.T) {
		text := "ก" + strings.Repeat("\u0e48", 200) + "ข"
		for _, term := range New().AppendTerms(nil, text) {
			if len(term) > MaxTermLen {
				t.Fatalf("term of %d bytes", len(term))
			}
		}
	})
}

func TestLongTerms(t *testing.T) {
	long64 := strings.Repeat("x", MaxTermLen)
	long65 := strings.Repeat("x", MaxTermLen+1)
	checkTerms(t, []struct {
		name, in string
		want     []string
	}{
		{"64 bytes kept", long64, []string{long64}},
		{"65 bytes dropped", "a1 " + long65 + " b2", []string{"a1", "b2"}},
		{"length counts after folding", strings.Repeat("é", 64), []string{strings.Repeat("e", 64)}},
		{"long non-ASCII dropped", strings.Repeat("é", 65), nil},
		{"long whole dropped, parts kept", long64 + "_tail", []string{long64, "tail"}},
		{"long CJK run is bigrams", strings.Repeat("中", 100), slices.Repeat([]string{"中中"}, 99)},
		{"long run of marks dropped", "a" + strings.Repeat("\u0301", 600) + " b", []string{"b"}},
	})

	t.Run("a dropped term consumes its position", func(t *testing.T) {
		got := New().Analyze("a1 " + long65 + " b2")
		if len(got) != 2 || got[0].Pos != 0 || got[1].Pos != 2 {
			t.Errorf("got %v, want positions 0 and 2", got)
		}
	})
}

func TestHostileInput(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		name     string
		in       string
		maxTerms int
	}{
		{"1 MB of one letter", strings.Repeat("a", mb), 0},
		{"1 MB of one upper-case letter", strings.Repeat("A", mb), 0},
		{"1 MB of alternating case", strings.Repeat("aB", mb/2), 0},
		{"1 MB of one CJK character", strings.Repeat("中", mb/3), mb/3 - 1},
		{"100k punctuation", strings.Repeat("!", 100_000), 0},
		{"100k connectors", strings.Repeat("._-", 100_000), 0},
		{"connector-joined single letters", strings.Repeat("x_", 100_000), 0},
		{"compound of 301 parts", strings.Repeat("ab.", 300) + "ab", 301},
		{"compound over maxWordBytes", strings.Repeat("ab.", 400) + "ab", 0},
		{"invalid UTF-8", strings.Repeat("\xff\xfe\xc3", 100_000), 0},
		{"combining marks only", strings.Repeat("\u0301", 100_000), 0},
		{"many short words", strings.Repeat("word ", 200_000), 200_000},
	}
	a := New()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Analyze(tc.in)
			if len(got) > tc.maxTerms {
				t.Errorf("%d tokens, want at most %d", len(got), tc.maxTerms)
			}
			checkTokens(t, tc.in, got)
		})
	}
}

// checkTokens asserts the invariants every analysis must keep.
func checkTokens(tb testing.TB, text string, toks []Token) {
	tb.Helper()
	prevPos, prevStart := 0, 0
	for _, tk := range toks {
		if tk.Term == "" || len(tk.Term) > MaxTermLen || !utf8.ValidString(tk.Term) {
			tb.Fatalf("bad term %q in %+v", tk.Term, tk)
		}
		if tk.Start < 0 || tk.Start > tk.End || tk.End > len(text) {
			tb.Fatalf("bad offsets %+v for input of %d bytes", tk, len(text))
		}
		if tk.Pos < prevPos {
			tb.Fatalf("position goes back: %+v after position %d", tk, prevPos)
		}
		if tk.Pos > prevPos && tk.Start < prevStart {
			tb.Fatalf("offsets go back: %+v after start %d", tk, prevStart)
		}
		prevPos, prevStart = tk.Pos, tk.Start
	}
}

// TestOffsets checks that every token's span is the source it came from:
// analyzing text[Start:End] alone yields the token's term.
func TestOffsets(t *testing.T) {
	texts := []string{
		"The OpenClaw gateway reads ~/.openclaw/openclaw.json at start-up.",
		"Use `create_issue` or github__list_pulls; see HTTPServer and PDF&URLTool.",
		"Run --dry-run with v1.2.3-beta on 127.0.0.1:8080 (ipv4), Café ＡＢＣ.",
		"配置 TypeScript 项目：设定ファイル、한국어 텍스트 ｻｰﾊﾞｰ \uF900.",
		"naïve ÉcoleNormale URLsList Base64Encode iOS OAuth2Client",
	}
	a := New()
	for i, text := range texts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			toks := a.Analyze(text)
			checkTokens(t, text, toks)
			for _, tk := range toks {
				src := text[tk.Start:tk.End]
				if !slices.Contains(terms(t, a, src), tk.Term) {
					t.Errorf("token %q at %d:%d: source %q does not analyze to it (%q)",
						tk.Term, tk.Start, tk.End, src, terms(t, a, src))
				}
			}
		})
	}
}

// TestEntryPointsAgree checks that Analyze, AppendTerms, TermFreqs and
// QueryTerms produce the same terms.
func TestEntryPointsAgree(t *testing.T) {
	text := "The ToolSearch tool searches tools: tool_search, 配置项目配置, v1.2.3 and the v1.2.3 again."
	a := New()
	toks := a.Analyze(text)
	var fromTokens []string
	for _, tk := range toks {
		fromTokens = append(fromTokens, tk.Term)
	}
	t.Run("AppendTerms", func(t *testing.T) {
		prefix := []string{"kept"}
		got := a.AppendTerms(prefix, text)
		if !slices.Equal(got[1:], fromTokens) || got[0] != "kept" {
			t.Errorf("got %q, want %q after the prefix", got, fromTokens)
		}
	})
	t.Run("TermFreqs", func(t *testing.T) {
		freqs := map[string]int{"tool": 10}
		n := a.TermFreqs(text, freqs)
		if n != len(fromTokens) {
			t.Errorf("returned %d, want %d", n, len(fromTokens))
		}
		want := map[string]int{"tool": 10}
		for _, term := range fromTokens {
			want[term]++
		}
		if fmt.Sprint(freqs) != fmt.Sprint(want) {
			t.Errorf("got %v, want %v", freqs, want)
		}
	})
	t.Run("QueryTerms", func(t *testing.T) {
		got := a.QueryTerms(text)
		var want []string
		for _, term := range fromTokens {
			if !slices.Contains(want, term) {
				want = append(want, term)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestQueryTerms(t *testing.T) {
	a := New()
	cases := []struct {
		name, q string
		want    []string
	}{
		{"deduplicated in order", "tools Tool TOOLS search", []string{"tool", "search"}},
		{"stop words only", "what is the", nil},
		{"identifier", "how do I use toolSearch?", []string{"use", "toolsearch", "tool", "search"}},
		{"Chinese", "如何配置项目", []string{"如何", "何配", "配置", "置项", "项目"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.QueryTerms(tc.q); !slices.Equal(got, tc.want) {
				t.Errorf("QueryTerms(%q) = %q, want %q", tc.q, got, tc.want)
			}
		})
	}

	t.Run("query terms match document terms", func(t *testing.T) {
		doc := "Configure the PDF&URLTool with openclaw.json (see Create_Issue) 配置项目"
		docTerms := terms(t, a, doc)
		for _, q := range []string{"urltool", "URL tool", "openclaw.json", "createIssue", "create issue", "配置", "项目"} {
			for _, term := range a.QueryTerms(q) {
				if !slices.Contains(docTerms, term) {
					t.Errorf("query %q term %q not among document terms %q", q, term, docTerms)
				}
			}
		}
	})
}

// TestConcurrent runs one Analyzer from many goroutines (meaningful under
// -race) and checks every result against a sequential run.
func TestConcurrent(t *testing.T) {
	inputs := []string{
		"The quick brown fox jumps over the lazy dog",
		"ToolSearch create_issue github__list_pulls openclaw.json HTTPServer",
		"配置项目 設定ファイル 한국어",
		"Café naïve Straße v1.2.3 2026.7.1",
	}
	want := make([][]string, len(inputs))
	for i, in := range inputs {
		want[i] = terms(t, New(), in)
	}
	a := New()
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(inputs))
	for g := range 8 {
		wg.Go(func() {
			for r := range 50 {
				i := (g + r) % len(inputs)
				if got := a.AppendTerms(nil, inputs[i]); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d: got %q, want %q", g, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestCacheEviction fills a tiny cache far beyond its size and checks that
// terms stay correct as entries are replaced.
func TestCacheEviction(t *testing.T) {
	a := New()
	a.cache = newTermCache(4)
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("running%c%c", 'a'+i%26, 'a'+i/26))
	}
	text := strings.Join(words, " ")
	first := terms(t, a, text)
	for range 3 {
		if got := terms(t, a, text); !slices.Equal(got, first) {
			t.Fatalf("terms changed after eviction:\n got %q\nwant %q", got, first)
		}
	}
	if got := terms(t, a, "running the tests"); !slices.Equal(got, []string{"run", "test"}) {
		t.Errorf("got %q", got)
	}
}

// TestFoldRuneAgreesWithAnalysis: a word's term is the fold of its runes,
// for words of letters with diacritics in many scripts.
func TestFoldRuneAgreesWithAnalysis(t *testing.T) {
	a := New()
	for _, w := range []string{"Étape", "déploiement", "Übersicht", "straße", "Œuvre", "łódź", "cấu", "hình", "người",
		"Ğüzel", "ĳs", "ø", "Ångström", "ḿ", "ǅ", "ﬁne"} {
		var folded strings.Builder
		for _, r := range w {
			folded.WriteString(FoldRune(r))
		}
		terms := a.AppendTerms(nil, w)
		if len(terms) != 1 {
			t.Fatalf("%q analyses to %q", w, terms)
		}
		// Stemming may shorten an English-looking word further.
		if got := folded.String(); !strings.HasPrefix(got, terms[0]) {
			t.Errorf("runes of %q fold to %q, analysis gives %q", w, got, terms[0])
		}
	}
	if FoldRune('\u0301') != "" || FoldRune('A') != "a" || FoldRune('配') != "配" {
		t.Errorf("FoldRune: mark %q, A %q, 配 %q", FoldRune('\u0301'), FoldRune('A'), FoldRune('配'))
	}
}
