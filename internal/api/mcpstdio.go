package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMCPLineBytes bounds one JSON-RPC message on the stdio transport.
const MaxMCPLineBytes = 8 << 20

// LineTransport is MCP's stdio transport (newline-delimited JSON-RPC)
// that survives bad input: a line that is not a JSON-RPC message, or is
// longer than MaxMCPLineBytes, is answered with a JSON-RPC error and
// skipped, where the SDK's own transport ends the session. The end of In
// ends the session cleanly.
type LineTransport struct {
	In  io.Reader
	Out io.Writer
	Log *slog.Logger
}

// Connect implements mcp.Transport; a transport serves one session.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	log := t.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &lineConn{out: t.Out, log: log, msgs: make(chan lineMsg), closed: make(chan struct{})}
	go c.readLoop(t.In)
	return c, nil
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	log       *slog.Logger
	wmu       sync.Mutex
	out       io.Writer
	msgs      chan lineMsg
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lineConn) readLoop(in io.Reader) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, MaxMCPLineBytes)
		if len(line) > 0 || tooLong {
			if m, ok := c.decode(line, tooLong); ok {
				select {
				case c.msgs <- lineMsg{msg: m}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			select {
			case c.msgs <- lineMsg{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// decode parses one line, answering a bad one itself.
func (c *lineConn) decode(line []byte, tooLong bool) (jsonrpc.Message, bool) {
	var reason string
	code := jsonrpc.CodeParseError
	switch {
	case tooLong:
		reason = fmt.Sprintf("message over %d bytes", MaxMCPLineBytes)
		code = jsonrpc.CodeInvalidRequest
	case !json.Valid(line):
		reason = "not valid JSON"
	default:
		m, err := jsonrpc.DecodeMessage(line)
		if err == nil {
			return m, true
		}
		reason = "not a JSON-RPC 2.0 message: " + err.Error()
		code = jsonrpc.CodeInvalidRequest
	}
	c.log.Warn("skipped a bad message", "component", "mcp", "reason", reason)
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": reason}})
	if err := c.write(resp); err != nil {
		c.log.Warn("answer a bad message", "component", "mcp", "err", err)
	}
	return nil, false
}

// readLine reads one line without its end; a line over max is discarded
// up to its end and reported as tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			line = nil
		}
		for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
			line = line[:len(line)-1]
		}
		return line, tooLong, err
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.msgs:
		return m.msg, m.err
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return c.write(data)
}

func (c *lineConn) write(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
