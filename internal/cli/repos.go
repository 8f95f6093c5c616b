package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/knowhub/knowhub/internal/app"
)

// cmdRepos lists the repositories the index holds, or removes one:
// `knowhub repos [list]`, `knowhub repos remove NAME`.
func cmdRepos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("repos", "repos [list] | repos remove NAME", stdout, stderr)
	asJSON := c.fs.Bool("json", false, "print JSON")
	rest, err := c.parse(args)
	if err != nil {
		return err
	}
	action := "list"
	if len(rest) > 0 {
		action, rest = rest[0], rest[1:]
	}
	if (action == "list" && len(rest) != 0) || (action == "remove" && len(rest) != 1) || (action != "list" && action != "remove") {
		return usageError{fmt.Errorf("usage: knowhub repos [list] | knowhub repos remove NAME")}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	nc, js, err := app.Connect(ctx, cfg.NATS, "knowhub-repos")
	if err != nil {
		return err
	}
	defer nc.Close()
	if action == "remove" {
		n, err := app.RemoveRepo(ctx, js, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed repository %s: %d files tombstoned\n", rest[0], n)
		return nil
	}
	repos, err := app.ListRepos(ctx, js)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(repos)
	}
	for _, r := range repos {
		fmt.Fprintf(stdout, "%-24s %d files\n", r.Name, r.Files)
	}
	return nil
}
