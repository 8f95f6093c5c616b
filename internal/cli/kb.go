package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/indexer"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/redact"
)

// kbSynopsis is the usage line of each kb subcommand.
var kbSynopsis = map[string]string{
	"save":    "kb save --task T --content C --types tool[,...] [--score N] [--scopes S] [--owner O] [--source S] [--json]",
	"search":  `kb search "QUERY" [--top-k N] [--types T] [--scopes S] [--min-score N] [--format prompt] [--json]`,
	"get":     "kb get ID [--scopes S]",
	"helpful": "kb helpful ID [--task T] [--outcome O] [--reason R] [--json]",
	"harmful": "kb harmful ID [--task T] [--outcome O] [--reason R] [--json]",
	"review":  "kb review [list] [--json] | kb review release|revoke ID [--reason R] [--json]",
	"revoke":  "kb revoke --transcript ID [--reason R] [--json]",
	"revise":  "kb revise ID --content C [--task T] [--reason R] [--json]",
	"replay":  "kb replay [--json]",
}

func kbUsage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, sub := range []string{"save", "search", "get", "helpful", "harmful", "revise", "review", "revoke", "replay"} {
		b.WriteString("  knowhub " + kbSynopsis[sub] + "\n")
	}
	b.WriteString("\nknowhub kb SUBCOMMAND -h lists its flags.\n")
	return b.String()
}

func cmdKB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("missing subcommand: save, search, get, helpful, harmful, revise, review, revoke or replay")}
	}
	sub, rest := args[0], args[1:]
	if isHelp(sub) {
		fmt.Fprint(stdout, kbUsage())
		return nil
	}
	syn, ok := kbSynopsis[sub]
	if !ok {
		return usageError{fmt.Errorf("unknown kb subcommand %q: want save, search, get, helpful, harmful, revise, review, revoke or replay", sub)}
	}
	c := newCommon("kb "+sub, syn, stdout, stderr)
	// Each subcommand has only the flags it reads.
	var (
		task, content, owner, source, format, outcome, reason, tid = new(string), new(string), new(string), new(string), new(string), new(string), new(string), new(string)
		score, topK                                                = new(int), new(int)
		minScore                                                   = new(float64)
		asJSON                                                     = new(bool)
		types, scopes                                              stringList
	)
	*topK = 5
	has := func(subs ...string) bool { return slices.Contains(subs, sub) }
	if has("save", "helpful", "harmful", "revise") {
		task = c.fs.String("task", "", "the situation the knowledge applies to")
	}
	if has("save", "revise") {
		content = c.fs.String("content", "", "the knowledge itself")
	}
	if has("save") {
		score = c.fs.Int("score", 0, "author score 1-5 (default 3)")
		owner = c.fs.String("owner", "", "owner of the entry")
		source = c.fs.String("source", "", "source name")
	}
	if has("save", "search") {
		c.fs.Var(&types, "types", "entry types, comma-separated: "+strings.Join(kb.KnownTypes(), ", "))
	}
	if has("save", "search", "get") {
		c.fs.Var(&scopes, "scopes", "scopes, comma-separated (kind:value)")
	}
	if has("search") {
		minScore = c.fs.Float64("min-score", 0, "only entries with at least this author score (0-5, any number)")
		topK = c.fs.Int("top-k", 5, "number of entries")
		format = c.fs.String("format", "", "json (default) or prompt")
	}
	if !has("get") { // get prints JSON always
		asJSON = c.fs.Bool("json", false, "print the raw JSON reply")
	}
	if has("helpful", "harmful") {
		outcome = c.fs.String("outcome", "", "what happened")
	}
	if has("helpful", "harmful", "review", "revoke", "revise") {
		reason = c.fs.String("reason", "", "why")
	}
	if has("revoke") {
		tid = c.fs.String("transcript", "", "the transcript whose entries to revoke")
	}
	pos, err := c.parse(rest)
	if err != nil {
		return err
	}
	if has("replay", "revoke") && len(pos) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q: usage: knowhub %s", pos[0], syn)}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-kb")
	if err != nil {
		return err
	}
	defer nc.Close()
	feedback := func(helpful bool) error {
		if len(pos) != 1 {
			return usageError{fmt.Errorf("usage: knowhub kb %s ID [--task T] [--outcome O] [--reason R]", sub)}
		}
		req := kb.UpdateRequest{ID: pos[0], Action: kb.ActionFeedback, Helpful: &helpful,
			Case: &kb.Case{Task: *task, Outcome: *outcome, Reason: *reason, Timestamp: time.Now().UTC()}}
		var resp kb.UpdateResponse
		if err := request(nc, contract.SubjectKBUpdate, req, &resp, 10*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		fmt.Fprintf(stdout, "recorded at sequence %d\n", resp.Seq)
		return nil
	}
	switch sub {
	case "save":
		req := kb.SaveRequest{Task: *task, Content: *content, Types: types, Score: *score, Scopes: scopes, Owner: *owner, Source: kb.Source{Name: *source}}
		var resp kb.SaveResponse
		if err := request(nc, contract.SubjectKBSave, req, &resp, 10*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		fmt.Fprintf(stdout, "%s %s (sequence %d)", resp.ID, resp.State, resp.Seq)
		if resp.Duplicate != "" {
			fmt.Fprintf(stdout, ", %s duplicate of %s%s", resp.Duplicate, resp.DuplicateOf, resp.Supersedes)
		}
		if resp.Quarantine != "" {
			fmt.Fprintf(stdout, ", quarantined: %s", resp.Quarantine)
		}
		fmt.Fprintln(stdout)
	case "search":
		if len(pos) == 0 {
			return usageError{errors.New(`usage: knowhub kb search "what you are about to do"`)}
		}
		req := kb.SearchRequest{Query: strings.Join(pos, " "), Limit: *topK, Types: types, Scopes: scopes, MinScore: *minScore, Format: *format}
		var resp kb.SearchResponse
		if err := request(nc, contract.SubjectSearchKB, req, &resp, 10*time.Second); err != nil {
			return err
		}
		switch {
		case *asJSON:
			return printJSON(stdout, resp)
		}
		printIndexing(stdout, resp.Completeness)
		switch {
		case resp.Prompt != "":
			fmt.Fprintln(stdout, resp.Prompt)
			return nil
		}
		if len(resp.Hits) == 0 {
			fmt.Fprintf(stdout, "no knowledge matches %q\n", resp.Query)
		}
		for i, h := range resp.Hits {
			fmt.Fprintf(stdout, "%2d. %s  [%s]  score %.2f  quality %.2f  author %d/5\n    %s\n    %s\n",
				i+1, h.ID, strings.Join(h.Types, ","), h.Score, h.QualityScore, h.Eval.Score, h.Task, h.Content)
		}
	case "get":
		if len(pos) != 1 {
			return usageError{errors.New("usage: knowhub kb get ID [--scopes s]")}
		}
		var e kb.Entry
		if err := request(nc, contract.SubjectKBGet, contract.KBGetRequest{ID: pos[0], Scopes: scopes}, &e, 10*time.Second); err != nil {
			return err
		}
		return printJSON(stdout, e)
	case "helpful":
		return feedback(true)
	case "harmful":
		return feedback(false)
	case "review":
		if len(pos) == 0 || pos[0] == "list" {
			var entries []kb.Entry
			if err := request(nc, contract.SubjectKBReview, struct{}{}, &entries, 30*time.Second); err != nil {
				return err
			}
			if *asJSON {
				if entries == nil {
					entries = []kb.Entry{} // an empty queue is an empty list
				}
				return printJSON(stdout, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(stdout, "nothing is quarantined")
			}
			for _, e := range entries {
				fmt.Fprintf(stdout, "%s  %s  quarantined: %s\n    %s\n", e.ID, e.CreatedAt.Format(time.RFC3339), e.Quarantine, e.Content)
			}
			return nil
		}
		if len(pos) != 2 || (pos[0] != kb.ActionRelease && pos[0] != kb.ActionRevoke) {
			return usageError{errors.New("usage: knowhub kb review [list] | release ID | revoke ID [--reason R]")}
		}
		var resp kb.UpdateResponse
		if err := request(nc, contract.SubjectKBUpdate, kb.UpdateRequest{ID: pos[1], Action: pos[0], Reason: *reason}, &resp, 10*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		fmt.Fprintf(stdout, "%s %sd at sequence %d\n", pos[1], pos[0], resp.Seq)
	case "revise":
		if len(pos) != 1 || *content == "" {
			return usageError{errors.New("usage: knowhub kb revise ID --content C [--task T] [--reason R]")}
		}
		var resp kb.UpdateResponse
		if err := request(nc, contract.SubjectKBUpdate, kb.UpdateRequest{ID: pos[0], Action: kb.ActionRevise, Content: *content, Task: *task, Reason: *reason}, &resp, 10*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		for _, e := range resp.Evolved {
			fmt.Fprintf(stdout, "%s revises %s (%s)\n", e.Into, e.ID, e.Reason)
		}
	case "revoke":
		if *tid == "" {
			return usageError{errors.New("usage: knowhub kb revoke --transcript ID (or kb review revoke ID for one entry)")}
		}
		n, err := app.RevokeTranscript(ctx, js, nc, *tid, *reason)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, struct {
				Transcript string `json:"transcript"`
				Revoked    int    `json:"revoked"`
			}{*tid, n})
		}
		fmt.Fprintf(stdout, "revoked %s extracted from transcript %s\n", plural(n, "entry", "entries"), *tid)
	case "replay":
		n, err := indexer.ReplayKB(ctx, js, kb.Folder{})
		if err != nil {
			return err
		}
		red, err := redact.New(nil)
		if err != nil {
			return err
		}
		files, err := indexer.ReplayLearned(ctx, js, analysis.New(), red)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, struct {
				Entries      int `json:"entries"`
				LearnedFiles int `json:"learned_files"`
			}{n, files})
		}
		fmt.Fprintf(stdout, "recomputed %s from the knowledge log\n", plural(n, "knowledge entry", "knowledge entries"))
		fmt.Fprintf(stdout, "recomputed the learned words of %s from %s\n", plural(files, "docs file", "docs files"), contract.StreamLearned)
	}
	return nil
}
