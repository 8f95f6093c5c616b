package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/eval"
)

// markdownFixture is testdata/docs: five pages (a sixth in a dot folder is
// not indexed), twelve sections, four judged queries each with one
// obvious page, and one unjudged query.
var markdownFixture = Config{
	Markdown: "testdata/docs",
	Queries:  "testdata/queries.jsonl",
	Qrels:    "testdata/qrels.tsv",
}

// miniSearchExpected reports whether MiniSearch can run here. In CI,
// where .ci/run installs it, node without the package is a failure.
func miniSearchExpected(t *testing.T) bool {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node is not on PATH: MiniSearch is not measured")
		return false
	}
	if _, err := os.Stat(miniSearchPackage); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node is on PATH but minisearch is not installed (%v): run `npm ci` in bench/peers", err)
		}
		t.Logf("minisearch is not installed (run `npm ci` here): MiniSearch is not measured")
		return false
	}
	return true
}

func TestEveryEngineFindsTheObviousPage(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cfg             Config
		pages, sections int
		queries         int
	}{
		{"markdown", markdownFixture, 5, 12, 4},
		{"beir", Config{Dir: "testdata/beir"}, 4, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantMini := miniSearchExpected(t)
			var out bytes.Buffer
			cfg := tc.cfg
			cfg.Out = &out
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Pages != tc.pages || res.Sections != tc.sections {
				t.Errorf("%d pages, %d sections; want %d, %d", res.Pages, res.Sections, tc.pages, tc.sections)
			}
			want := []string{"knowhub", "sqlite-fts5", "bleve"}
			if wantMini {
				want = append(want, "minisearch")
			} else if _, ok := res.Skipped["minisearch"]; !ok {
				t.Errorf("minisearch neither ran nor was skipped: %v", res.Skipped)
			}
			var got []string
			for _, r := range res.Rows {
				got = append(got, r.Engine)
				// One relevant page a query, found first: every figure is whole.
				if r.Queries != tc.queries || r.Hit1 != tc.queries || r.Hit5 != tc.queries || math.Abs(r.NDCG10-1) > 1e-9 {
					t.Errorf("%s: %d queries, hit@1 %d, hit@5 %d, nDCG@10 %.4f; want %d, %d, %d, 1",
						r.Engine, r.Queries, r.Hit1, r.Hit5, r.NDCG10, tc.queries, tc.queries, tc.queries)
				}
				if r.Index <= 0 || r.P50 <= 0 || r.P50 > r.P90 {
					t.Errorf("%s: index %s, p50 %s, p90 %s", r.Engine, r.Index, r.P50, r.P90)
				}
				if !strings.Contains(out.String(), "| "+r.Engine+" | ") {
					t.Errorf("the table has no %s row:\n%s", r.Engine, out.String())
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("engines %q, want %q", got, want)
			}
		})
	}
}

// script is a section engine that returns a fixed ranking per query.
type script map[string][]hit

func (s script) sections(q string, n int) ([]hit, time.Duration, error) {
	h := s[q]
	return h[:min(n, len(h))], time.Microsecond, nil
}

func (script) close() error { return nil }

// TestPageMetricsOnAKnownRanking runs a scripted ranking through the
// bench's collapse and scoring, and checks the figures worked out by hand.
func TestPageMetricsOnAKnownRanking(t *testing.T) {
	c, err := loadCollection(context.Background(), markdownFixture)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for i, s := range c.Sections {
		index[s.ID] = i
	}
	rank := func(ids ...string) []hit {
		var hits []hit
		for i, id := range ids {
			j, ok := index[id]
			if !ok {
				t.Fatalf("no section %s in the fixture", id)
			}
			hits = append(hits, hit{idx: j, score: float64(len(ids) - i)})
		}
		return hits
	}
	s := script{
		// Telegram (grade 2) second, after a page two sections of which
		// come first: hit@5 only; nDCG = (2/log2 3) / 2.
		"how do I get a bot token from BotFather": rank("troubleshooting.md#1", "troubleshooting.md#0", "channels/telegram.md#1", "channels/telegram.md#0", "install.md#0"),
		// Backups first: hit@1, nDCG 1; troubleshooting.md is judged 0.
		"restore the database snapshot": rank("backups.md#1", "backups.md#0", "troubleshooting.md#1"),
		// Nothing found: 0 everywhere.
		"run the Docker image in a container": nil,
		// Retention fifth page, after six sections of four other pages:
		// hit@5 only; nDCG = 1/log2 6.
		"max age of stream messages": rank("install.md#0", "install.md#1", "backups.md#0", "troubleshooting.md#0", "backups.md#1",
			"channels/telegram.md#2", "retention.md#1", "retention.md#0"),
	}
	p := peer{name: "script", open: func(context.Context, *collection, Config) (engine, string, error) {
		return pages{s: s, secs: c.Sections, depth: 1000}, "a fixed ranking", nil
	}}
	row, err := runPeer(context.Background(), p, c, c.judgedQueries(0), Config{})
	if err != nil {
		t.Fatal(err)
	}
	wantNDCG := (2/math.Log2(3)/2 + 1 + 0 + 1/math.Log2(6)) / 4
	if row.Queries != 4 || row.Hit1 != 1 || row.Hit5 != 3 || math.Abs(row.NDCG10-wantNDCG) > 1e-9 {
		t.Errorf("%d queries, hit@1 %d, hit@5 %d, nDCG@10 %.6f; want 4, 1, 3, %.6f", row.Queries, row.Hit1, row.Hit5, row.NDCG10, wantNDCG)
	}

	// The first judged query alone, through --limit.
	row, err = runPeer(context.Background(), p, c, c.judgedQueries(1), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if row.Queries != 1 || row.Hit1 != 0 || row.Hit5 != 1 {
		t.Errorf("limit 1: %d queries, hit@1 %d, hit@5 %d; want 1, 0, 1", row.Queries, row.Hit1, row.Hit5)
	}
}

func TestCollapseKeepsEachPageAtItsBestSection(t *testing.T) {
	secs := []section{{Page: "a"}, {Page: "a"}, {Page: "b"}, {Page: "c"}}
	got := collapse(secs, []hit{{1, 9}, {2, 8}, {0, 7}, {3, 6}}, 10)
	want := []eval.Ranked{{DocID: "a", Score: 9}, {DocID: "b", Score: 8}, {DocID: "c", Score: 6}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if got := collapse(secs, []hit{{1, 9}, {2, 8}, {0, 7}, {3, 6}}, 2); len(got) != 2 || got[1].DocID != "b" {
		t.Errorf("k 2: got %v, want a, b", got)
	}
}

func TestFTSQueryQuotesEveryTerm(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"restore the database", `"restore" OR "the" OR "database"`},
		{`title:backup OR NOT "x"*`, `"title" OR "backup" OR "or" OR "not" OR "x"`},
		{"NEAR(a b) -c ^d", `"near" OR "a" OR "b" OR "c" OR "d"`},
		{"Database database DATABASE", `"database"`},
		{"配置 Telegram 机器人", `"配置" OR "telegram" OR "机器人"`},
		{"café naïve", `"café" OR "naïve"`},
		{`"" ) ( * : ^ -`, ""},
		{"", ""},
	} {
		if got := ftsQuery(tc.in); got != tc.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}

	// Every hostile query runs: no FTS5 syntax error reaches the bench.
	c, err := loadCollection(context.Background(), markdownFixture)
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := openSQLite(context.Background(), c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	for _, q := range []string{`"`, `")`, "NEAR(", "*", "-restore", "^", "AND OR NOT", `title:"x`, "restore AND", "\x00"} {
		if _, _, err := e.search(q, 10); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	got, _, err := e.search(`restore" OR database:`, 10)
	if err != nil || len(got) == 0 || got[0].DocID != "backups.md" {
		t.Errorf("search with stray syntax: %v, %v; want backups.md first", got, err)
	}
}

func TestBadInputGetsAClearError(t *testing.T) {
	dir := t.TempDir()
	noJudged := filepath.Join(dir, "qrels.tsv")
	if err := os.WriteFile(noJudged, []byte("someone-else\tinstall.md\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badQueries := filepath.Join(dir, "queries.jsonl")
	if err := os.WriteFile(badQueries, []byte("{\"id\": \"a\", \"text\": \"x\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"nothing", Config{}, "want a collection folder"},
		{"both", Config{Dir: "testdata/beir", Markdown: "testdata/docs"}, "not both"},
		{"no qrels", Config{Markdown: "testdata/docs", Queries: "testdata/queries.jsonl"}, "--markdown needs --queries and --qrels"},
		{"missing folder", Config{Dir: filepath.Join(dir, "absent")}, "absent/queries.jsonl does not exist"},
		{"missing docs", Config{Markdown: filepath.Join(dir, "docs"), Queries: "testdata/queries.jsonl", Qrels: "testdata/qrels.tsv"}, "docs does not exist"},
		{"bad queries", Config{Markdown: "testdata/docs", Queries: badQueries, Qrels: "testdata/qrels.tsv"}, "queries.jsonl:2"},
		{"nothing judged", Config{Markdown: "testdata/docs", Queries: "testdata/queries.jsonl", Qrels: noJudged}, "no query has a relevant page"},
		{"unknown engine", Config{Dir: "testdata/beir", Engines: []string{"bleve", "lucene"}}, `unknown engine "lucene"`},
		{"negative limit", Config{Dir: "testdata/beir", Limit: -1}, "limit -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestUnknownJudgedPagesAreNoted(t *testing.T) {
	qrels := filepath.Join(t.TempDir(), "qrels.tsv")
	if err := os.WriteFile(qrels, []byte("restore\tbackups.md\t1\nrestore\tbackup.md\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Markdown: "testdata/docs", Queries: "testdata/queries.jsonl", Qrels: qrels, Engines: []string{"sqlite-fts5"}, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "note: 1 judged pages are not in the collection") {
		t.Errorf("no note of the unknown page:\n%s", out.String())
	}
	// Half the relevant pages cannot be found: nDCG is below 1.
	if len(res.Rows) != 1 || res.Rows[0].Hit1 != 1 || res.Rows[0].NDCG10 >= 1 {
		t.Errorf("rows %+v; want sqlite-fts5 with hit@1 1 and nDCG below 1", res.Rows)
	}
}

func TestMiniSearchIsSkippedWithANote(t *testing.T) {
	t.Run("no node", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		var out bytes.Buffer
		res, err := Run(context.Background(), Config{Dir: "testdata/beir", Engines: []string{"minisearch", "knowhub"}, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Skipped["minisearch"], "node is not on PATH") || !strings.Contains(out.String(), "minisearch: skipped: node is not on PATH") {
			t.Errorf("skipped %v, output:\n%s", res.Skipped, out.String())
		}
		if len(res.Rows) != 1 || res.Rows[0].Engine != "knowhub" {
			t.Errorf("rows %+v; want knowhub alone", res.Rows)
		}
	})
	t.Run("not installed", func(t *testing.T) {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node is not on PATH")
		}
		res, err := Run(context.Background(), Config{Dir: "testdata/beir", Engines: []string{"minisearch"}, NodeDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Skipped["minisearch"], "npm ci") || len(res.Rows) != 0 {
			t.Errorf("skipped %v, rows %+v; want minisearch skipped, asking for npm ci", res.Skipped, res.Rows)
		}
	})
}

func TestMiniSearchReportsAScriptError(t *testing.T) {
	if !miniSearchExpected(t) {
		t.Skip("MiniSearch cannot run here")
	}
	c, err := loadCollection(context.Background(), Config{Dir: "testdata/beir"})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := openMiniSearch(context.Background(), c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	// A negative k is refused by the script, which then goes on serving.
	if _, _, err := e.(pages).s.sections("tea", -1); err == nil || !strings.Contains(err.Error(), "want {") {
		t.Errorf("k -1: err = %v, want the script's refusal", err)
	}
	got, _, err := e.search("matcha tea", 10)
	if err != nil || len(got) == 0 || got[0].DocID != "d4" {
		t.Errorf("after the refusal: %v, %v; want d4 first", got, err)
	}
}

func TestCommandLine(t *testing.T) {
	var out, errs bytes.Buffer
	// Flags after the folder, as `knowhub eval` takes them.
	if err := run(context.Background(), []string{"testdata/beir", "--engines", "knowhub,bleve", "--limit", "2"}, &out, &errs); err != nil {
		t.Fatal(err, errs.String())
	}
	for _, want := range []string{"3 queries, 2 judged evaluated", "| knowhub | 2 | 2 (1.000) |", "| bleve | 2 | 2 (1.000) |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(context.Background(), []string{"a", "b"}, &out, &errs); err == nil || !strings.Contains(err.Error(), "want one collection DIR") {
		t.Errorf("two folders: err = %v", err)
	}
}

// --set judges one half of a judged docs set on its corpus, with the
// set's front-matter keys cut from every page for every engine.
func TestCommandLineSet(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("corpora/zoo/a.md", "---\nsummary: Quokka habitats\n---\n\n# Marsupials\n\nKangaroos hop across the plains.\n")
	write("corpora/zoo/b.md", "# Birds\n\nEmus run; kangaroos are not birds.\n")
	// One query in each half: "quokka" is only in a.md's summary, which
	// the set strips; "kangaroos hop" is in a.md's body.
	ids := map[string]string{}
	for i := 0; len(ids) < 2; i++ {
		id := "q" + strings.Repeat("x", i)
		if _, ok := ids[eval.Half(id)]; !ok {
			ids[eval.Half(id)] = id
		}
	}
	write("sets/zoo/set.json", `{"corpus": "zoo", "strip_front_matter": ["summary"]}`)
	write("sets/zoo/dev/queries.jsonl", `{"id": "`+ids[eval.Dev]+`", "text": "quokka"}`+"\n")
	write("sets/zoo/dev/qrels.tsv", ids[eval.Dev]+"\ta.md\t1\n")
	write("sets/zoo/test/queries.jsonl", `{"id": "`+ids[eval.Test]+`", "text": "kangaroos hop"}`+"\n")
	write("sets/zoo/test/qrels.tsv", ids[eval.Test]+"\ta.md\t1\n")
	set, corpora := filepath.Join(root, "sets/zoo"), filepath.Join(root, "corpora")
	for half, want := range map[string]string{eval.Dev: "| knowhub | 1 | 0 (0.000) |", eval.Test: "| knowhub | 1 | 1 (1.000) |"} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), []string{"--set", set, "--half", half, "--corpora", corpora, "--engines", "knowhub,sqlite-fts5"}, &out, &errs); err != nil {
			t.Fatal(err, errs.String())
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), strings.Replace(want, "knowhub", "sqlite-fts5", 1)) {
			t.Errorf("%s half: output lacks %q for both engines:\n%s", half, want, out.String())
		}
	}
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"--set", set, "--half", "both", "--corpora", corpora}, &out, &errs); err == nil || !strings.Contains(err.Error(), "want dev or test") {
		t.Errorf("half both: err = %v", err)
	}
	if err := run(context.Background(), []string{"--set", set, "testdata/beir"}, &out, &errs); err == nil || !strings.Contains(err.Error(), "give no DIR") {
		t.Errorf("--set with a DIR: err = %v", err)
	}
}

func TestRunsHoldEachEnginesRankingPerQuery(t *testing.T) {
	dir := t.TempDir()
	cfg := markdownFixture
	cfg.Engines = []string{"knowhub", "bleve"}
	cfg.Runs = dir
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range cfg.Engines {
		b, err := os.ReadFile(filepath.Join(dir, name+".run"))
		if err != nil {
			t.Fatal(err)
		}
		queries := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) != 6 || f[5] != name {
				t.Fatalf("%s: run line %q: want six fields tagged %s", name, line, name)
			}
			queries[f[0]] = true
		}
		if len(queries) != 4 {
			t.Errorf("%s: run holds %d queries, want the 4 judged", name, len(queries))
		}
	}
}
