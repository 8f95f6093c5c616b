package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/knowhub/knowhub/internal/app"
)

// cmdRepos lists the repositories the index holds, or removes one:
// `knowhub repos [list]`, `knowhub repos remove NAME`.
func cmdRepos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("repos", "repos [list] [--json] | repos remove NAME [--json]", stdout, stderr)
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
		if *asJSON {
			return printJSON(stdout, struct {
				Repo    string `json:"repo"`
				Removed int    `json:"files_removed"`
			}{rest[0], n})
		}
		fmt.Fprintf(stdout, "removed repository %s: %s taken out of the index\n", rest[0], plural(n, "file", "files"))
		return nil
	}
	repos, err := app.ListRepos(ctx, js)
	if err != nil {
		return err
	}
	if *asJSON {
		if repos == nil {
			repos = []app.RepoFiles{}
		}
		return printJSON(stdout, repos)
	}
	if len(repos) == 0 {
		fmt.Fprintln(stdout, "no repository is indexed")
	}
	for _, r := range repos {
		fmt.Fprintf(stdout, "%-24s %s\n", r.Name, plural(r.Files, "file", "files"))
	}
	return nil
}
