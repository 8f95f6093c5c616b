package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// defaultHealthURL is the readiness endpoint of a node with the default
// HTTP listen address.
const defaultHealthURL = "http://127.0.0.1:7700/readyz"

// cmdHealth probes a knowhub process's /readyz (or /healthz) and exits 0
// when it answers 200: the health check of a container whose image has no
// shell or curl, such as the distroless one docker-compose.yml runs.
func cmdHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("health", "health [URL] [--timeout D]   (default "+defaultHealthURL+")", stdout, stderr)
	timeout := c.fs.Duration("timeout", 3*time.Second, "give up after this long")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	target := defaultHealthURL
	switch len(pos) {
	case 0:
	case 1:
		target = pos[0]
	default:
		return usageError{errors.New("usage: knowhub health [URL]")}
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Errorf("%q is not an http(s) URL", target)}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	line := strings.Join(strings.Fields(string(body)), " ")
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, line)
	}
	fmt.Fprintf(stdout, "%s: %s\n", target, line)
	return nil
}
