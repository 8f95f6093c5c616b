package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// In a Chinese query naming a product, the page about the product comes
// first, ahead of a catalogue that repeats the query's Chinese phrase on
// every line: the phrase's bigrams would otherwise outweigh the product's
// name.
func TestCJKPhraseDoesNotOutweighTheNameItQualifies(t *testing.T) {
	var inventory strings.Builder
	inventory.WriteString("# 插件清单\n\n")
	for section, names := range map[string][]string{
		"核心软件包":   {"Mistral", "Ollama", "Fireworks", "Together", "Groq", "Venice"},
		"官方外部软件包": {"Chutes", "Moonshot", "Vydra", "Meta", "Nvidia", "Qwen"},
	} {
		fmt.Fprintf(&inventory, "## %s\n\n", section)
		for _, name := range names {
			fmt.Fprintf(&inventory, "- %s：为 OpenClaw 添加 %s 模型提供商支持，包括模型提供商的配置。\n", name, name)
		}
		inventory.WriteString("\n")
	}
	pages := map[string]string{
		"plugins/inventory.md": inventory.String(),
		"plugins/chutes.md":    "# Chutes 插件\n\n为 OpenClaw 添加 Chutes 模型提供商支持。\n\n## 分发\n\n软件包 chutes-provider。\n",
		"plugins/mistral.md":   "# Mistral 插件\n\n为 OpenClaw 添加 Mistral 支持。\n\n## 分发\n\n软件包 mistral-provider。\n",
		"gateway/index.md":     "# 网关\n\n网关运行渠道和模型提供商。\n",
	}
	e := engineWithChunked(t, pages)
	top := func(e *Engine) string {
		t.Helper()
		r, err := e.SearchDocs(contract.SearchRequest{Query: "为 OpenClaw 添加 Chutes 模型提供商支持。", TopK: 5, Group: contract.GroupPages})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Fatal("no hit")
		}
		return r.Hits[0].Path
	}
	undamped := DefaultPageScoring()
	undamped.CJKDamp, undamped.CJKRunPower = 0, 0
	if got := top(e.WithPageScoring(undamped)); got != "plugins/inventory.md" {
		t.Fatalf("without damping %s comes first: the case no longer tests anything", got)
	}
	if got := top(e); got != "plugins/chutes.md" {
		t.Errorf("first page %s, want plugins/chutes.md", got)
	}
}

// A query without CJK text keeps its weights; a CJK one has each bigram
// of a run weighed by the run's length, typo expansions included.
func TestDampCJKWeights(t *testing.T) {
	e := NewEngine(Limits{})
	p := PageScoring{CJKDamp: 0.5, CJKRunPower: 1}
	terms, _ := e.queryTerms(e.docs, "gateway token")
	e.dampCJK(terms, "gateway token", p)
	for _, x := range terms {
		if x.Weight != 1 {
			t.Errorf("%q weighs %v in an English query", x.Text, x.Weight)
		}
	}
	q := "Chutes 模型提供商 网关"
	terms, _ = e.queryTerms(e.docs, q)
	e.dampCJK(terms, q, p)
	want := map[string]float64{"chute": 1, "模型": 0.5 / 4, "提供": 0.5 / 4, "网关": 0.5}
	for _, x := range terms {
		if w, ok := want[x.Text]; ok && x.Weight != w {
			t.Errorf("%q weighs %v, want %v", x.Text, x.Weight, w)
		}
		delete(want, x.Text)
	}
	if len(want) > 0 {
		t.Errorf("terms %v missing from %v", want, terms)
	}
}
