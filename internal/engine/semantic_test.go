package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/search"
)

// semanticTools indexes tools (name → description) into e.
func semanticTools(e *Engine, tools map[string]string) {
	seq := uint64(0)
	for name, desc := range tools {
		seq++
		t := &contract.Tool{Name: name, Description: desc, Type: contract.ToolCore}
		e.Apply(contract.ToolIndexKey(name), catalog.BuildDoc(t, seq, e.Analyzer()), seq)
	}
}

var gapTools = map[string]string{
	"starsign":  "Daily astrology readings for every zodiac sign.",
	"recipes":   "Find cooking recipes by ingredient.",
	"forecast":  "Rain, wind and temperature for any city.",
	"translate": "Translate text between languages.",
	"stocks":    "Share prices and market data for listed companies.",
}

func toolNames(r *contract.ToolSearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Name)
	}
	return out
}

// toolScores and docScores are what ranking decides of a reply.
func toolScores(r *contract.ToolSearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, fmt.Sprintf("%s %.9g", h.Name, h.Score))
	}
	return out
}

func docScores(r *contract.SearchResponse) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, fmt.Sprintf("%s %.9g %s", h.Path, h.Score, h.Snippet))
	}
	return out
}

func TestSemanticClosesTheVocabularyGap(t *testing.T) {
	e := NewEngine(Limits{})
	semanticTools(e, gapTools)
	off := false
	for q, want := range map[string]string{"my horoscope for today": "starsign", "a dish for dinner": "recipes"} {
		on, err := e.SearchTools(contract.ToolSearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(on.Hits) == 0 || on.Hits[0].Name != want {
			t.Errorf("%q: hits %v, want %s first", q, toolNames(on), want)
		}
		lex, err := e.SearchTools(contract.ToolSearchRequest{Query: q, Semantic: &off})
		if err != nil {
			t.Fatal(err)
		}
		if len(lex.Hits) > 0 && lex.Hits[0].Name == want {
			t.Errorf("%q: lexical search already finds %s: the case proves nothing", q, want)
		}
	}
}

func TestSemanticFalseSwitchesItOff(t *testing.T) {
	on := NewEngine(Limits{})
	semanticTools(on, gapTools)
	lexical := NewEngine(Limits{})
	lexical.SetSemantic(false)
	semanticTools(lexical, gapTools)
	off := false
	for _, q := range []string{"my horoscope for today", "cooking dinner", "share prices"} {
		a, err := on.SearchTools(contract.ToolSearchRequest{Query: q, Semantic: &off})
		if err != nil {
			t.Fatal(err)
		}
		b, err := lexical.SearchTools(contract.ToolSearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(toolScores(a), toolScores(b)) {
			t.Errorf("%q: semantic false gave %v, the engine switched off %v", q, toolScores(a), toolScores(b))
		}
	}
}

func TestExactMatchWinsOverNearSynonyms(t *testing.T) {
	// Tools: a name is never out-ranked by a tool that only means it.
	e := NewEngine(Limits{})
	semanticTools(e, map[string]string{
		"weather":  "Look up a word in the dictionary.",
		"forecast": "Weather forecasts: rain, wind, temperature and snow.",
		"climate":  "Rain, temperature and humidity, hour by hour.",
	})
	r, err := e.SearchTools(contract.ToolSearchRequest{Query: "weather"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) == 0 || r.Hits[0].Name != "weather" || r.Hits[0].Match != contract.MatchExact {
		t.Errorf("hits %v, want the exact name first", toolNames(r))
	}

	// Docs, with expansion on: a section holding the query's identifier
	// stays ahead of one that holds only its meaning.
	d := NewEngine(Limits{})
	d.SetSemanticMode(SemanticBoth)
	pages := map[string]string{
		"ident.md":   "Set maxAckPending on the consumer.",
		"synonym.md": "Limit how many messages wait for acknowledgement: the consumer stops delivering when too many acknowledgements are pending, a limit on outstanding messages.",
	}
	seq := uint64(0)
	for path, text := range pages {
		seq++
		cs := &contract.ChunkSet{Repo: "r", Path: path, FileSeq: seq, Chunks: []contract.Chunk{{ID: fmt.Sprint("c", seq), Title: path, Text: text}}}
		d.Apply(contract.DocKey("r", path), indexer.BuildDoc(cs, d.Analyzer()), seq)
	}
	res, err := d.SearchDocs(contract.SearchRequest{Query: "maxAckPending limit of pending messages"})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitPaths(res); len(got) == 0 || got[0] != "ident.md" {
		t.Errorf("hits %v, want ident.md first", got)
	}
}

func TestSemanticModes(t *testing.T) {
	e := NewEngine(Limits{})
	for _, c := range []struct {
		mode                     SemanticMode
		toolsExp, toolsFuse, exp bool
		fuse                     bool
	}{
		{SemanticOff, false, false, false, false},
		{SemanticExpand, true, false, true, false},
		{SemanticFuse, false, true, false, true},
		{SemanticBoth, true, true, true, true},
		{SemanticDefault, true, true, false, false},
	} {
		e.SetSemanticMode(c.mode)
		te, tf := e.semanticParts(true)
		de, df := e.semanticParts(false)
		if te != c.toolsExp || tf != c.toolsFuse || de != c.exp || df != c.fuse {
			t.Errorf("mode %d: tools %v %v, docs %v %v", c.mode, te, tf, de, df)
		}
	}
	if _, err := ParseSemanticMode("fuzzy"); err == nil {
		t.Error("an unknown mode parsed")
	}
}

func TestCJKQueriesUntouched(t *testing.T) {
	pages := map[string]string{
		"gw.md":   "网关配置：设置 OpenClaw 网关的端口和认证。",
		"auth.md": "登录和身份验证 login authentication password",
		"cron.md": "定时任务 schedule cron jobs",
	}
	on := engineWith(t, pages)
	on.SetSemanticMode(SemanticBoth)
	off := engineWith(t, pages)
	off.SetSemantic(false)
	for _, q := range []string{"网关配置", "如何 login 网关", "登录 password"} {
		if on.semanticTable(nil, q) != nil {
			t.Errorf("%q gets semantic matching", q)
		}
		a, err := on.SearchDocs(contract.SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		b, err := off.SearchDocs(contract.SearchRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(docScores(a), docScores(b)) {
			t.Errorf("%q: semantic matching changed the hits %v to %v", q, docScores(b), docScores(a))
		}
	}
	if on.semanticTable(nil, "login password") == nil {
		t.Error("an English query gets no semantic matching")
	}
}

// Tools carry a pooled vector for the blended retriever; sections, which
// use expansion only, carry none (pooling them cost a third of a build).
func TestToolsCarryVectorsAndSectionsDoNot(t *testing.T) {
	e := engineWith(t, map[string]string{"a.md": "rain and snow", "b.md": "openclaw.json"})
	semanticTools(e, gapTools)
	sections, tools := 0, 0
	e.docs.EachEntry(func(en *search.Entry) bool {
		if len(en.Vec) != 0 {
			t.Errorf("section %s has a vector", en.Source.Path)
		}
		sections++
		return true
	})
	e.tools.EachEntry(func(en *search.Entry) bool {
		if len(en.Vec) != 100 {
			t.Errorf("tool %s has vector %v", en.Source.Path, en.Vec)
		}
		tools++
		return true
	})
	if sections != 2 || tools != len(gapTools) {
		t.Fatalf("%d sections, %d tools", sections, tools)
	}
}

// Neighbour scans are remembered per generation of the catalog: a tool
// added later is found through the words it brings.
func TestNeighboursFollowTheCatalog(t *testing.T) {
	e := NewEngine(Limits{})
	e.SetSemanticMode(SemanticExpand)
	semanticTools(e, map[string]string{
		"recipes":   "Find cooking recipes by ingredient.",
		"translate": "Translate text between languages.",
	})
	tb := e.semanticTable(nil, "horoscope")
	word := e.toolWords("horoscope")[0].term
	before := e.candidates(tb, e.tools).neighbours(word, 3, 0.5)
	if len(before) != 0 {
		t.Fatalf("neighbours %v of %s in a catalog of recipes and translation", before, word)
	}
	r, err := e.SearchTools(contract.ToolSearchRequest{Query: "my horoscope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 0 {
		t.Fatalf("hits %v before any tool is about stars", toolNames(r))
	}
	e.Apply(contract.ToolIndexKey("starsign"), catalog.BuildDoc(&contract.Tool{Name: "starsign",
		Description: "Daily astrology readings for every zodiac sign.", Type: contract.ToolCore}, 9, e.Analyzer()), 9)
	after := e.candidates(tb, e.tools).neighbours(word, 3, 0.5)
	if len(after) == 0 {
		t.Fatalf("no neighbour of %s once the catalog has astrology", word)
	}
	if r, err = e.SearchTools(contract.ToolSearchRequest{Query: "my horoscope"}); err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) == 0 || r.Hits[0].Name != "starsign" {
		t.Errorf("hits %v, want starsign found through %v", toolNames(r), after)
	}
}

// The remembered neighbour scans are what a scan finds, and bounded.
func TestNeighbourScansAreRememberedAndBounded(t *testing.T) {
	e := NewEngine(Limits{})
	semanticTools(e, gapTools)
	tb := e.semanticTable(nil, "x")
	c := e.candidates(tb, e.tools)
	for i := range maxNear + 100 {
		word := tb.Term(i * 13 % tb.Len())
		got := c.neighbours(word, 3, 0.3)
		if again := c.neighbours(word, 3, 0.3); !reflect.DeepEqual(got, again) {
			t.Fatalf("%s: %v, then %v", word, got, again)
		}
		if want := c.m.Neighbours(word, 3, 0.3); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: remembered %v, a scan finds %v", word, got, want)
		}
	}
	if n := len(c.near); n > maxNear {
		t.Errorf("%d scans remembered, want at most %d", n, maxNear)
	}
}

// Searches share the catalog's space and remembered scans while tools
// come and go (run with -race).
func TestConcurrentToolSearchesWhileTheCatalogChanges(t *testing.T) {
	e := NewEngine(Limits{})
	words := []string{"weather", "recipes", "stocks", "music", "maps", "news", "jobs", "travel", "games", "books"}
	for i := range 40 {
		w := words[i%len(words)]
		e.Apply(contract.ToolIndexKey(fmt.Sprint("tool", i)), catalog.BuildDoc(&contract.Tool{Name: fmt.Sprint("tool", i),
			Description: fmt.Sprintf("Find %s and more %s, number %d.", w, w, i), Type: contract.ToolCore}, uint64(i+1), e.Analyzer()), uint64(i+1))
	}
	queries := []string{"what is the forecast for rain", "a dish for dinner", "share prices today", "songs to listen to", "my horoscope"}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 100 {
				q := queries[(g+i)%len(queries)]
				r, err := e.SearchTools(contract.ToolSearchRequest{Query: q})
				if err == nil && q == queries[0] && len(r.Hits) == 0 {
					err = fmt.Errorf("%q found nothing", q)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 40; i < 60; i++ {
		e.Apply(contract.ToolIndexKey(fmt.Sprint("tool", i)), catalog.BuildDoc(&contract.Tool{Name: fmt.Sprint("tool", i),
			Description: "Daily astrology readings for every zodiac sign.", Type: contract.ToolCore}, uint64(i+1), e.Analyzer()), uint64(i+1))
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.SearchTools(contract.ToolSearchRequest{Query: "my horoscope"})
	if err != nil {
		t.Fatal(err)
	}
	first, n := "", 0
	if len(r.Hits) > 0 {
		first = r.Hits[0].Name
	}
	if _, err := fmt.Sscanf(first, "tool%d", &n); err != nil || n < 40 {
		t.Errorf("hits %v, want an astrology tool (tool40 to tool59) first", toolNames(r))
	}
}
