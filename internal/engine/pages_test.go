package engine

import (
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
