package contract

// A running watcher answers SubjectRescan by reading every repository it
// serves again and publishing what changed: how `knowhub reindex --rescan`
// reaches the repositories of a node started without a configuration
// file. One watcher of the queue group answers.
const (
	SubjectRescan    = "kh.ctl.rescan"
	RescanQueueGroup = "knowhub-watcher"
)

// RescanReply is a watcher's answer to SubjectRescan.
type RescanReply struct {
	Repos     []string `json:"repos"` // the repositories read
	Published int      `json:"published"`
	Deleted   int      `json:"deleted"`
	Unchanged int      `json:"unchanged"`
	Skipped   int      `json:"skipped"`
	// OtherLanguage counts pages left out for their language (a
	// repository's languages setting).
	OtherLanguage int    `json:"other_language,omitempty"`
	Error         string `json:"error,omitempty"`
}
