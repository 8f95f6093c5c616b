package engine

import "github.com/knowhub/knowhub/internal/analysis"

// requestWords frame a request to an agent rather than name the capability
// wanted: "Could you please help me find the latest stock prices?" asks
// for stock prices. Tool descriptions use some of them in passing ("Provide
// you with...", "the latest news"), and a tool catalog is small enough
// that such a word, rare in it, can outweigh the words that matter. They
// are general English, grouped by role, not taken from any catalog; they
// are stemmed like queries, so inflections need no entry. The English stop
// list (package analysis) already drops pronouns, auxiliaries and the like.
// On MetaTool, weighing them at half (Scoring.RequestWeight) lifts nDCG@10
// by 0.003; the qualifiers alone, or the other words alone, hardly do.
var requestWords = []string{
	// greetings and courtesy
	"please", "kindly", "hey", "hi", "hello", "thank", "sure", "okay", "ok",
	// wishes, and modal verbs the stop list lacks
	"could", "would", "may", "might", "shall", "must", "need", "want", "wish", "like", "love",
	"interested", "curious", "wonder", "hope", "try", "look",
	// asking for help
	"help", "assist", "assistance", "provide", "give", "tell", "let", "know",
	// the catalog itself: every candidate is a tool
	"tool", "plugin",
	// qualifiers of the answer wanted rather than of the capability
	"current", "latest", "recent", "new", "today",
	"best", "top", "popular", "good", "great", "various", "different", "relevant",
	"available", "comprehensive", "well", "really",
}

// termSet returns the terms an analyzer makes of words.
func termSet(an *analysis.Analyzer, words []string) map[string]bool {
	set := make(map[string]bool, len(words))
	for _, w := range words {
		for _, t := range an.QueryTerms(w) {
			set[t] = true
		}
	}
	return set
}
