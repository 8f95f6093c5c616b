package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/contract"
)

func cmdExtract(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("extract", "extract TRANSCRIPT.json | extract --replay [--since T] [--dry-run] [--json]", stdout, stderr)
	replay := c.fs.Bool("replay", false, "re-run extraction over the stored transcripts with the current extractor")
	since := c.fs.String("since", "", "with --replay: only transcripts received since this RFC 3339 time or this long ago (e.g. 24h)")
	dryRun := c.fs.Bool("dry-run", false, "with --replay: show the entries without saving them")
	asJSON := c.fs.Bool("json", false, "print the JSON reply (a transcript) or report (--replay)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-extract")
	if err != nil {
		return err
	}
	defer nc.Close()
	if !*replay {
		if len(pos) != 1 {
			return usageError{errors.New("usage: knowhub extract TRANSCRIPT.json | knowhub extract --replay [--since T] [--dry-run]")}
		}
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		msg, err := nc.Request(contract.SubjectExtract, data, 10*time.Second)
		if err != nil {
			return fmt.Errorf("send transcript: %w", err)
		}
		if e := msg.Header.Get("Nats-Service-Error"); e != "" {
			return errors.New(e)
		}
		var reply contract.ExtractReply
		if err := json.Unmarshal(msg.Data, &reply); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, reply)
		}
		if reply.Duplicate {
			fmt.Fprintf(stdout, "transcript %s was already received\n", reply.TranscriptID)
		} else {
			fmt.Fprintf(stdout, "transcript %s stored; extraction runs in the background\n", reply.TranscriptID)
		}
		return nil
	}
	var from time.Time
	if *since != "" {
		if d, err := time.ParseDuration(*since); err == nil {
			from = time.Now().Add(-d)
		} else if from, err = time.Parse(time.RFC3339, *since); err != nil {
			return usageError{fmt.Errorf("--since %q: want an RFC 3339 time or a duration", *since)}
		}
	}
	red, err := app.NewRedactor(cfg)
	if err != nil {
		return err
	}
	pipe, err := app.NewPipeline(cfg, red)
	if err != nil {
		return err
	}
	rep, err := app.ReplayExtraction(ctx, js, nc, pipe, from, *dryRun)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, rep)
	}
	if *dryRun {
		fmt.Fprintf(stdout, "%s would yield %s (dry run: nothing saved)\n",
			plural(rep.Transcripts, "transcript", "transcripts"), plural(len(rep.Entries), "entry", "entries"))
		for _, e := range rep.Entries {
			fmt.Fprintf(stdout, "  [%s] %s\n    %s\n", strings.Join(e.Types, ","), e.Task, e.Content)
		}
		return nil
	}
	fmt.Fprintf(stdout, "%d transcripts: %d entries added, %d quarantined, %d superseded older ones, %d already known, %d rejected\n",
		rep.Transcripts, rep.Added, rep.Quarantined, rep.Superseded, rep.Duplicates, rep.Rejected)
	return nil
}
