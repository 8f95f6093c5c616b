package cli

import (
	"bytes"
	"strings"
	"testing"
)

// noServer is a NATS URL where nothing listens: help, version and usage
// errors must not need a server.
const noServer = "nats://127.0.0.1:1"

func TestHelpAndVersionNeedNoServer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in stdout
		not  []string // not in stdout
	}{
		{[]string{"--help"}, []string{"knowhub up [DIR ...]", "knowhub COMMAND -h"}, nil},
		{[]string{"help", "search"}, []string{"usage: knowhub search", "-top-k"}, nil},
		{[]string{"--version"}, []string{"knowhub ", "go1."}, nil},
		{[]string{"version"}, []string{"knowhub "}, nil},
		{[]string{"search", "-h"}, []string{"-repo", "-nats-url"}, []string{"-content"}},
		{[]string{"kb", "-h"}, []string{"knowhub kb save", "knowhub kb review"}, nil},
		{[]string{"kb", "search", "-h"}, []string{"-min-score", "-types"}, []string{"-content", "-transcript", "-owner"}},
		{[]string{"kb", "save", "--help"}, []string{"-content", "-types"}, []string{"-min-score", "-format"}},
		{[]string{"kb", "replay", "-h"}, []string{"usage: knowhub kb replay"}, []string{"-task"}},
		{[]string{"tools", "-h"}, []string{"knowhub tools add", "knowhub tools search"}, nil},
		{[]string{"tools", "rm", "-h"}, []string{"knowhub tools rm NAME"}, []string{"-limit"}},
		{[]string{"tools", "search", "-h"}, []string{"-limit", "-instance"}, nil},
		{[]string{"worker", "-h"}, []string{"knowhub worker watcher|chunker"}, nil},
		{[]string{"worker", "query", "-h"}, []string{"-http"}, []string{"-metrics"}},
		{[]string{"worker", "indexer", "-h"}, []string{"-metrics"}, []string{"-http"}},
		{[]string{"reindex", "-h"}, []string{"-rescan", "-json"}, nil},
		{[]string{"extract", "-h"}, []string{"-replay", "-json"}, nil},
		{[]string{"up", "-h"}, []string{"-nats-listen", "-data"}, nil},
		{[]string{"eval", "-h"}, []string{"knowhub eval --sets SETS_DIR", "-semantic"}, []string{"-nats-url"}},
	} {
		name := strings.Join(tc.args, " ")
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append(tc.args, "--nats-url", noServer), &out, &errOut)
		if code != 0 {
			t.Errorf("knowhub %s: exit %d, stderr %q", name, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("knowhub %s: stdout lacks %q:\n%s", name, w, out.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out.String(), w) {
				t.Errorf("knowhub %s: stdout has %q, a flag of another command:\n%s", name, w, out.String())
			}
		}
	}
}

func TestUsageErrorsAreShortAndNeedNoServer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--bogus", "x"}, "flag provided but not defined: -bogus"},
		{[]string{"kb", "search", "--content", "x", "q"}, "flag provided but not defined: -content"},
		{[]string{"kb", "frob"}, `unknown kb subcommand "frob"`},
		{[]string{"tools", "frob"}, `unknown tools subcommand "frob"`},
		{[]string{"tools", "search", "--top-k", "3", "q"}, "flag provided but not defined: -top-k"},
		{[]string{"worker", "frob"}, `unknown stage "frob"`},
		{[]string{"stats", "--top-k=3"}, "flag provided but not defined: -top-k"},
		{[]string{"kb", "replay", "extra"}, `unexpected argument "extra"`},
	} {
		name := strings.Join(tc.args, " ")
		var out, errOut bytes.Buffer
		code := Main(t.Context(), append(tc.args, "--nats-url", noServer), &out, &errOut)
		if code != 2 {
			t.Errorf("knowhub %s: exit %d, want 2; stderr %q", name, code, errOut.String())
		}
		msg := errOut.String()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("knowhub %s: stderr lacks %q:\n%s", name, tc.want, msg)
		}
		if n := strings.Count(strings.TrimSpace(msg), "\n") + 1; n > 3 {
			t.Errorf("knowhub %s: %d lines on stderr, want at most 3:\n%s", name, n, msg)
		}
		if strings.Contains(msg, "connect") || strings.Contains(msg, "no servers") {
			t.Errorf("knowhub %s: tried to connect:\n%s", name, msg)
		}
	}
}
