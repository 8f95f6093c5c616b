package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
)

// cmdRead reads a section a search found (by its id), with its neighbours
// or its page, or a page by repository and path.
func cmdRead(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("read", "read ID [--context section|neighbours|page] | read --repo R --path P [--json]", stdout, stderr)
	repo := c.fs.String("repo", "", "with --path: the page's repository")
	path := c.fs.String("path", "", "with --repo: the page's path")
	readCtx := c.fs.String("context", "", "section (default with an ID), neighbours, or page (default without one)")
	asJSON := c.fs.Bool("json", false, "print the raw JSON reply")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	req := contract.DocsReadRequest{Repo: *repo, Path: *path, Context: *readCtx}
	switch {
	case len(pos) == 1 && *repo == "" && *path == "":
		req.ID = pos[0]
	case len(pos) == 0 && *repo != "" && *path != "":
	default:
		return usageError{errors.New("usage: knowhub read ID (a search hit's chunk_id) | knowhub read --repo R --path P")}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, err := connectClient(cfg, "knowhub-read")
	if err != nil {
		return err
	}
	defer nc.Close()
	var resp contract.DocsReadResponse
	if err := request(nc, contract.SubjectReadDocs, req, &resp, 5*time.Second); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, resp)
	}
	fmt.Fprintf(stdout, "%s  %s  (%s on the page)\n", resp.Repo, resp.Path, plural(resp.PageSections, "section", "sections"))
	for _, s := range resp.Sections {
		fmt.Fprintf(stdout, "\n§ %s  [%s]\n%s\n", strings.Join(s.HeadingPath, " > "), s.ID, s.Text)
	}
	return nil
}
