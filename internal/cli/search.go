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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"golang.org/x/term"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/highlight"
)

func connectClient(cfg *config.Config, name string) (*nats.Conn, error) {
	n := cfg.NATS
	return broker.Connect(broker.ClientConfig{
		URL: n.URL, Name: name, CredsFile: n.CredsFile, NKeyFile: n.NKeyFile,
		User: n.User, Password: n.Password, Token: n.Token,
		TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
	})
}

// request sends a JSON request and decodes the JSON reply, turning a micro
// service error into a Go error.
func request(nc *nats.Conn, subject string, req, resp any, timeout time.Duration) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg, err := nc.Request(subject, data, timeout)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("no query service answers on %s: is knowhub up running?", subject)
	}
	if err != nil {
		return fmt.Errorf("request %s: %w", subject, err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		return fmt.Errorf("%s (code %s)", e, msg.Header.Get(micro.ErrorCodeHeader))
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("decode reply: %w", err)
	}
	return nil
}

func cmdSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("search", `search "QUERY" [--top-k N] [--repo R] [--lang L] [--max-tokens N] [--json]`, stdout, stderr)
	topK := c.fs.Int("top-k", 0, "number of sections (default 10)")
	var repos stringList
	c.fs.Var(&repos, "repo", "only this `repository` (repeatable, or comma-separated)")
	lang := c.fs.String("lang", "", "only pages in this `language` (a tag such as en or zh-CN)")
	asJSON := c.fs.Bool("json", false, "print the raw JSON reply")
	timeout := c.fs.Duration("timeout", 5*time.Second, "request timeout")
	maxTokens := c.fs.Int("max-tokens", 0, "a budget of tokens: the best sections whole while they fit, then the sections around them (their text is printed)")
	words, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usageError{errors.New(`missing query: knowhub search "how do I ..."`)}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, err := connectClient(cfg, "knowhub-search")
	if err != nil {
		return err
	}
	defer nc.Close()
	req := contract.SearchRequest{Query: strings.Join(words, " "), TopK: *topK, Repos: repos, Lang: *lang, MaxTokens: *maxTokens, Content: *maxTokens > 0}
	var resp contract.SearchResponse
	if err := request(nc, contract.SubjectSearchDocs, req, &resp, *timeout); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, resp)
	}
	printHits(stdout, &resp, ansiStyles(stdout, os.LookupEnv))
	return nil
}

// ansiStyles reports whether w shows ANSI styles: a terminal, unless
// NO_COLOR is set (https://no-color.org) or TERM is dumb.
func ansiStyles(w io.Writer, env func(string) (string, bool)) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && stylesWanted(env)
}

// stylesWanted is the environment's part of ansiStyles.
func stylesWanted(env func(string) (string, bool)) bool {
	if v, ok := env("NO_COLOR"); ok && v != "" {
		return false
	}
	v, _ := env("TERM")
	return v != "dumb"
}

// printHits writes the hits as text, matched words in bold where ansi
// styles show and unmarked elsewhere.
func printHits(w io.Writer, resp *contract.SearchResponse, ansi bool) {
	printIndexing(w, resp.Completeness)
	if len(resp.Hits) == 0 {
		fmt.Fprintf(w, "no sections match %q\n", resp.Query)
		return
	}
	for i, h := range resp.Hits {
		fmt.Fprintf(w, "%2d. %s  %s", i+1, h.Repo, h.Path)
		if len(h.HeadingPath) > 0 {
			fmt.Fprintf(w, "  § %s", strings.Join(h.HeadingPath, " > "))
		}
		fmt.Fprintf(w, "  (score %.2f)\n", h.Score)
		if h.Snippet != "" {
			fmt.Fprintf(w, "    %s\n", highlight.Terminal(h.Snippet, ansi))
		}
	}
	for _, s := range resp.Shadowed {
		// The winner's repository and path; its section id is for programs.
		by, _, _ := strings.Cut(s.ShadowedBy, "#")
		fmt.Fprintf(w, "shadowed: %s  %s  by %s: %s\n", s.Repo, s.Path, strings.Replace(by, ":", "  ", 1), s.Reason)
	}
	fmt.Fprintf(w, "%d of %d matching sections in %dµs\n", len(resp.Hits), resp.Total, resp.TookMicros)
	if resp.Tokens > 0 {
		printBudgeted(w, resp)
	}
}

// printIndexing prints the line that warns of results from a partial
// index.
func printIndexing(w io.Writer, c contract.Completeness) {
	if c.Indexing {
		fmt.Fprintln(w, contract.IndexingNote)
	}
	if c.Partial {
		fmt.Fprintln(w, contract.PartialNote)
	}
}

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

func cmdStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("stats", "stats [--json]", stdout, stderr)
	asJSON := c.fs.Bool("json", false, "print JSON")
	if _, err := c.parse(args); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-stats")
	if err != nil {
		return err
	}
	defer nc.Close()
	var st contract.StatsResponse
	if err := request(nc, contract.SubjectStats, struct{}{}, &st, 5*time.Second); err != nil {
		return err
	}
	prog, err := app.ReadProgress(ctx, js)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, struct {
			contract.StatsResponse
			Pipeline app.Progress `json:"pipeline"`
		}{st, prog})
	}
	docs := st.Collections[contract.CollectionDocs]
	fmt.Fprintf(stdout, "files     %d\nsections  %d\nterms     %d\n", docs.Sources, docs.Chunks, docs.Terms)
	for _, r := range st.Repos {
		fmt.Fprintf(stdout, "  %-24s %6d files %7d sections\n", r.Repo, r.Files, r.Chunks)
	}
	fmt.Fprintf(stdout, "index     revision %d applied (bucket at %d), analyzer %s, replica ready: %v\n",
		st.IndexRevision, prog.IndexLastRev, st.Analyzer, st.Ready)
	fmt.Fprintf(stdout, "pipeline  file events %d, chunker pending %d, indexer pending %d, dead letters %d\n",
		prog.FilesLastSeq, prog.ChunkerPending, prog.IndexerPending, prog.DeadLetters)
	if st.Indexing {
		fmt.Fprintln(stdout, "state     "+contract.IndexingNote)
	}
	if st.Problem != "" {
		fmt.Fprintln(stdout, "problem   "+st.Problem)
	}
	return nil
}

// printBudgeted prints the section texts a budgeted search chose: each
// hit's whole section, then the sections around it.
func printBudgeted(w io.Writer, resp *contract.SearchResponse) {
	for i, h := range resp.Hits {
		fmt.Fprintf(w, "\n[%d] %s  %s  § %s\n%s\n", i+1, h.Repo, h.Path, strings.Join(h.HeadingPath, " > "), h.Content)
		for _, c := range resp.Context {
			if c.Of == h.ChunkID {
				fmt.Fprintf(w, "\n    (same page) § %s\n%s\n", strings.Join(c.HeadingPath, " > "), c.Text)
			}
		}
	}
	fmt.Fprintf(w, "\nabout %d tokens\n", resp.Tokens)
}
