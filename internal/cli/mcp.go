package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/broker"
)

// cmdMCP serves MCP over stdin and stdout, calling a running knowhub over
// NATS. It runs until stdin closes or the process is told to stop; a bad
// request is answered with an error, never ends it. Logs go to stderr:
// stdout carries the protocol.
func cmdMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("mcp", "mcp [--scopes S] [flags]", stdout, stderr)
	var scopes stringList
	c.fs.Var(&scopes, "scopes", "knowledge scopes to search, rate and save with, comma-separated (kind:value); a save names a subset or gets them all")
	timeout := c.fs.Duration("timeout", 10*time.Second, "bound on each request to knowhub")
	c.logLevel = "warn"
	c.fs.Lookup("log-level").DefValue = "warn"
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q: knowhub mcp takes flags only", pos[0])}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	n := cfg.NATS
	// Start even when knowhub is down: the client lists the tools, and each
	// call says that knowhub is unreachable until it comes up.
	nc, err := broker.Connect(broker.ClientConfig{
		URL: n.URL, Name: "knowhub-mcp", CredsFile: n.CredsFile, NKeyFile: n.NKeyFile,
		User: n.User, Password: n.Password, Token: n.Token,
		TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey, Retry: true,
	})
	if err != nil {
		return err
	}
	defer nc.Close()
	srv := api.NewMCPServer(&api.Remote{NC: nc, Scopes: scopes, Timeout: *timeout}, log)
	err = srv.Run(ctx, &api.LineTransport{In: os.Stdin, Out: os.Stdout, Log: log})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("serve mcp on stdio: %w", err)
}
