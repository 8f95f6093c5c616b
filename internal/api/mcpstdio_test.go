package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/natstest"
)

func TestLineTransportSkipsAnOversizedLineAndEndsOnEOF(t *testing.T) {
	srv := natstest.Start(t, "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- api.NewMCPServer(&api.Remote{NC: srv.NC}, nil).Run(t.Context(), &api.LineTransport{In: inR, Out: outW})
		outW.Close()
	}()
	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	send := func(line string) map[string]any {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, line+"\n") }()
		if !replies.Scan() {
			t.Fatalf("no reply: %v", replies.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", api.MaxMCPLineBytes) + `"}}`
	r := send(huge)
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "over") {
		t.Errorf("oversized line: %v", r)
	}
	r = send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r["id"] != float64(2) || r["result"] == nil {
		t.Errorf("initialize after the oversized line: %v", r)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("run ended with %v on EOF, want nil", err)
	}
}
