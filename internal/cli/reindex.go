package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/watcher"
)

// rescanTimeout bounds a rescan asked of the running watcher.
const rescanTimeout = 10 * time.Minute

func cmdReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("reindex", "reindex [--rescan] [--config F | --openclaw F] [--wait D] [--json]", stdout, stderr)
	rescan := c.fs.Bool("rescan", false, "re-read every repository (of --config or --openclaw, or else of the running watcher) instead of replaying the files already read")
	openclaw := c.fs.String("openclaw", "", "with --rescan: take the repositories and secretPatterns from this OpenClaw `openclaw.json`, as up --openclaw does")
	wait := c.fs.Duration("wait", 0, "wait up to this long for the pipeline to catch up (0: don't wait)")
	asJSON := c.fs.Bool("json", false, "print a JSON summary at the end instead of text")
	var sum struct {
		Mode       string `json:"mode"` // replay or rescan
		Files      int    `json:"files"`
		Tombstones int    `json:"tombstones"`
		Changed    int    `json:"changed_meanwhile"`
		Skipped    int    `json:"skipped"`
		// OtherLanguage counts pages left out for their language.
		OtherLanguage int   `json:"other_language,omitempty"`
		CaughtUp      bool  `json:"caught_up"`
		TookMillis    int64 `json:"took_ms"`
	}
	if _, err := c.parse(args); err != nil {
		return err
	}
	// With --json, stdout holds the one JSON document: the text lines
	// go nowhere.
	text := stdout
	if *asJSON {
		text = io.Discard
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if *openclaw != "" {
		oc, err := config.LoadOpenClaw(*openclaw)
		if err != nil {
			return err
		}
		cfg.ApplyOpenClaw(oc)
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-reindex")
	if err != nil {
		return err
	}
	defer nc.Close()
	start := time.Now()
	switch {
	case *rescan && len(cfg.Repositories) == 0:
		// No configuration names the repositories: the running watcher,
		// which has them (`up DIR...`), reads them again.
		rctx, cancel := context.WithTimeout(ctx, rescanTimeout)
		defer cancel()
		res, err := app.RequestRescan(rctx, nc)
		if err != nil {
			return err
		}
		sum.Mode, sum.Files, sum.Tombstones, sum.Skipped, sum.OtherLanguage = "rescan", res.Published, res.Deleted, res.Skipped, res.OtherLanguage
		fmt.Fprintf(text, "rescanned %s: %s published, %d deleted, %d unchanged, %d skipped%s\n",
			strings.Join(res.Repos, ", "), plural(res.Published, "file", "files"), res.Deleted, res.Unchanged, res.Skipped, otherLanguages(res.OtherLanguage))
	case *rescan:
		if err := cfg.CheckPaths(); err != nil {
			return err
		}
		red, err := app.NewRedactor(cfg)
		if err != nil {
			return err
		}
		w, err := app.NewWatcher(cfg, js, nc.MaxPayload(), red, log)
		if err != nil {
			return err
		}
		res, err := w.Scan(ctx, true)
		if err != nil {
			return err
		}
		sum.Mode, sum.Files, sum.Tombstones, sum.Skipped, sum.OtherLanguage = "rescan", res.Published, res.Deleted, res.Skipped, res.OtherLanguage
		fmt.Fprintf(text, "rescanned: %s published, %d deleted, %d skipped%s\n", plural(res.Published, "file", "files"), res.Deleted, res.Skipped,
			otherLanguages(res.OtherLanguage))
	default:
		res, err := watcher.Replay(ctx, js)
		if err != nil {
			return err
		}
		sum.Mode, sum.Files, sum.Tombstones, sum.Changed = "replay", res.Files, res.Tombstones, res.Changed
		fmt.Fprintf(text, "replayed the files read: %s and %s republished, %d changed meanwhile and left as they are\n",
			plural(res.Files, "file", "files"), plural(res.Tombstones, "deletion", "deletions"), res.Changed)
	}
	if *wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		// Progress goes to stderr, so that stdout stays the summary.
		meter := app.NewMeter(stderr, "reindex", start)
		total := sum.Files + sum.Tombstones
		err := app.WatchPipeline(wctx, js, func(p app.Progress) {
			meter.Update(time.Now(), app.MeterSample{Done: total - p.InFlight(), Total: total})
		})
		meter.Finish()
		if err != nil {
			return fmt.Errorf("wait for the pipeline: %w", err)
		}
		sum.CaughtUp = true
		fmt.Fprintf(text, "pipeline caught up in %s\n", time.Since(start).Round(time.Millisecond))
	}
	if *asJSON {
		sum.TookMillis = time.Since(start).Milliseconds()
		return printJSON(stdout, sum)
	}
	return nil
}

// otherLanguages renders the pages a rescan left out for their language,
// or nothing when there were none.
func otherLanguages(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %s in languages not indexed", plural(n, "page", "pages"))
}
