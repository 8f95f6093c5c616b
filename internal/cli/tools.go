package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
)

var toolsSynopsis = map[string]string{
	"add":    "tools add CATALOG.json [--json]",
	"rm":     "tools rm NAME... [--json]",
	"search": `tools search "QUERY" [--type core|sourced] [--instance I] [--limit N] [--detail D] [--json]`,
}

func cmdTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("missing subcommand: add CATALOG.json, rm NAME... or search QUERY")}
	}
	sub, rest := args[0], args[1:]
	if isHelp(sub) {
		fmt.Fprintf(stdout, "usage:\n  knowhub %s\n  knowhub %s\n  knowhub %s\n\nknowhub tools SUBCOMMAND -h lists its flags.\n",
			toolsSynopsis["add"], toolsSynopsis["rm"], toolsSynopsis["search"])
		return nil
	}
	syn, ok := toolsSynopsis[sub]
	if !ok {
		return usageError{fmt.Errorf("unknown tools subcommand %q: want add, rm or search", sub)}
	}
	c := newCommon("tools "+sub, syn, stdout, stderr)
	var (
		limit         = new(int)
		typ, instance = new(string), new(string)
		detail        = new(string)
		asJSON        = new(bool)
	)
	asJSON = c.fs.Bool("json", false, "print the raw JSON reply")
	if sub == "search" {
		limit = c.fs.Int("limit", 0, "number of tools (default 8, at most 50)")
		typ = c.fs.String("type", "", "only core or sourced tools")
		instance = c.fs.String("instance", "", "only tools of this instance")
		detail = c.fs.String("detail", "", "name, name_desc (default) or full")
	}
	pos, err := c.parse(rest)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, err := connectClient(cfg, "knowhub-tools")
	if err != nil {
		return err
	}
	defer nc.Close()
	switch sub {
	case "add":
		if len(pos) != 1 {
			return usageError{errors.New("usage: knowhub tools add CATALOG.json")}
		}
		tools, err := readCatalog(pos[0])
		if err != nil {
			return err
		}
		var resp contract.ToolsWriteResponse
		if err := request(nc, contract.SubjectToolsUpsert, contract.ToolsUpsertRequest{Tools: tools}, &resp, 30*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		fmt.Fprintf(stdout, "%s written to the catalog\n", plural(len(resp.Written), "tool", "tools"))
	case "rm":
		if len(pos) == 0 {
			return usageError{errors.New("usage: knowhub tools rm NAME...")}
		}
		var resp contract.ToolsWriteResponse
		if err := request(nc, contract.SubjectToolsRemove, contract.ToolsRemoveRequest{Names: pos}, &resp, 30*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		fmt.Fprintf(stdout, "%s removed\n", plural(len(resp.Written), "tool", "tools"))
	case "search":
		if len(pos) == 0 {
			return usageError{errors.New(`usage: knowhub tools search "what the tool should do"`)}
		}
		req := contract.ToolSearchRequest{Query: strings.Join(pos, " "), Limit: *limit, Type: *typ, Instance: *instance, Detail: *detail}
		var resp contract.ToolSearchResponse
		if err := request(nc, contract.SubjectSearchTools, req, &resp, 5*time.Second); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, resp)
		}
		printIndexing(stdout, resp.Completeness)
		if len(resp.Hits) == 0 {
			fmt.Fprintf(stdout, "no tool matches %q\n", resp.Query)
		}
		for i, h := range resp.Hits {
			fmt.Fprintf(stdout, "%2d. %-32s %7.2f  %s", i+1, h.Name, h.Score, h.Match)
			if h.Type != "" {
				fmt.Fprintf(stdout, "  [%s%s]", h.Type, prefixed(":", h.Instance))
			}
			if h.Description != "" {
				fmt.Fprintf(stdout, "\n    %s", h.Description)
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// readCatalog reads a JSON array of tools, or an object with a "tools" array.
func readCatalog(path string) ([]contract.Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	var tools []contract.Tool
	if len(data) > 0 && data[0] == '[' {
		err = json.Unmarshal(data, &tools)
	} else {
		var req contract.ToolsUpsertRequest
		err = json.Unmarshal(data, &req)
		tools = req.Tools
	}
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	return tools, nil
}
