package engine

import (
	"fmt"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// The page whose subject is the question comes first, ahead of a
// troubleshooting hub with one section that repeats the question's words;
// without page evidence the hub's section wins.
func TestPageEvidence(t *testing.T) {
	e := engineWithChunked(t, map[string]string{
		"channels/telegram.md": "# Telegram\n\nConnect a Telegram bot to the gateway.\n\n" +
			"## Create the bot\n\nTalk to BotFather, create a bot and copy its token.\n\n" +
			"## Pairing\n\nApprove the first direct message the bot receives.\n\n" +
			"## Groups\n\nAdd the bot to a group and mention it.\n",
		"help/troubleshooting.md": "# Troubleshooting\n\n" +
			"## Gateway does not start\n\nCheck the port and the logs of the gateway service.\n\n" +
			"## Telegram bot does not connect\n\nWhen the Telegram bot does not connect, connect again: a Telegram bot that cannot connect to Telegram has a wrong token.\n\n" +
			"## Discord messages are lost\n\nGive the Discord application the message content intent.\n\n" +
			"## Slack socket mode\n\nEnable socket mode in the Slack app settings.\n\n" +
			"## WhatsApp session expired\n\nScan the QR code again to link WhatsApp.\n\n" +
			"## Memory search is slow\n\nRebuild the memory index after an upgrade.\n",
		"install/docker.md": "# Docker\n\nRun the gateway in Docker.\n\n## Compose\n\nA compose file with the gateway service.\n",
	})
	const q = "how do I connect to a Telegram bot"
	top := func(e *Engine) string {
		t.Helper()
		r, err := e.SearchDocs(contract.SearchRequest{Query: q, TopK: 5, Group: contract.GroupPages})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Fatal("no hit")
		}
		return r.Hits[0].Path
	}
	if got := top(e.WithPageScoring(PageScoring{})); got != "help/troubleshooting.md" {
		t.Fatalf("without page evidence %s comes first: the case no longer tests anything", got)
	}
	if got := top(e); got != "channels/telegram.md" {
		t.Errorf("first page %s, want channels/telegram.md", got)
	}
}

// With coordination, a section holding every word of the query beats one
// repeating a single rare word of it; without, the repetition wins. (The
// default leaves coordination off: see DefaultPageScoring.)
func TestCoordination(t *testing.T) {
	e := engineWithChunked(t, map[string]string{
		"a.md": "# Operations\n\nTo back up, copy the state folder and the databases while the gateway is stopped, then start it again and check the logs for errors, warnings, restarts, the port, the configuration file, the channels, the plugins, the tools and the models, and tell the operators on call.\n",
		"b.md": "# Databases\n\n## Databases\n\nDatabases: databases and databases.\n",
		"c.md": "# State\n\nThe state folder holds sessions and the state of channels.\n",
		"d.md": "# Back up\n\nBack up, back up.\n",
		"e.md": "# Gateway\n\nThe gateway runs channels.\n",
	})
	top := func(e *Engine) string {
		t.Helper()
		r, err := e.SearchDocs(contract.SearchRequest{Query: "back up state databases", TopK: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Fatal("no hit")
		}
		return r.Hits[0].Path
	}
	if got := top(e.WithPageScoring(PageScoring{Depth: 100})); got == "a.md" {
		t.Fatal("without coordination a.md comes first: the case no longer tests anything")
	}
	if got := top(e.WithPageScoring(PageScoring{Depth: 100, Coord: 1})); got != "a.md" {
		t.Errorf("first %s, want a.md", got)
	}
}

// With page coordination (on by default), the page that holds every word
// of the question beats one that repeats a single word of it, here the
// name of another feature ("mirror"), many times; without, the repetition
// wins.
func TestPageCoordinationResistsAStrayWord(t *testing.T) {
	pages := map[string]string{
		"replication.md": "# Replication\n\nKeep a read-only copy of a stream in another region.\n",
		"mirror.md":      "# Mirror\n\nA mirror mirrors. Mirror the mirror with a mirror: mirror, mirror, mirror.\n\n## Mirror options\n\nMirror mirror mirror.\n",
		"copy.md":        "# Copying\n\nCopy a stream to keep it; read it in another region only when needed.\n",
		"regions.md":     "# Regions\n\nServers in each region keep a copy of a stream; read only what you need.\n",
		"streams.md":     "# Streams\n\nA stream keeps messages; read a copy of them in any region, only once.\n",
	}
	// Pages that share the question's other words make them common.
	for i := range 8 {
		pages[fmt.Sprintf("f%d.md", i)] = fmt.Sprintf("# F%d\n\nKeep a copy of a stream in another region, read only.\n", i)
	}
	e := engineWithChunked(t, pages)
	const q = "mirror: keep a read-only copy of a stream in another region"
	off := DefaultPageScoring()
	off.PageCoord = 0
	if got := topPage(t, e.WithPageScoring(off), q); got != "mirror.md" {
		t.Fatalf("without page coordination %s comes first: the case no longer tests anything", got)
	}
	if got := topPage(t, e, q); got != "replication.md" {
		t.Errorf("first page %s, want replication.md", got)
	}
}
