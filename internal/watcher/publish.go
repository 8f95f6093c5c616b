package watcher

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/knowhub/knowhub/internal/contract"
)

// Limits of one publisher's asynchronous publishes.
const (
	maxInFlightMsgs  = 256
	maxInFlightBytes = 32 << 20
	// ackTimeout bounds the wait for one acknowledgement, so a message
	// lost in a server failover fails the sync instead of hanging it.
	ackTimeout = 30 * time.Second
	// stalledRetries bounds the retries when the JetStream context's own
	// async limit (shared with other users) is reached; each attempt
	// waits up to the library's stall wait (200ms).
	stalledRetries = 50
	// payloadMargin is kept free below the server's max payload.
	payloadMargin = 512
)

// escapePath renders a slash-separated path for HeaderPath: each segment
// URL-path-escaped, joined by '/'.
func escapePath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// unescapePath reverses escapePath.
func unescapePath(h string) (string, error) { return url.PathUnescape(h) }

// headers returns the headers every KH_FILES message carries.
func headers(op string, r *repo, rel, sha string) nats.Header {
	h := nats.Header{}
	h.Set(contract.HeaderOp, op)
	h.Set(contract.HeaderRepo, r.name)
	h.Set(contract.HeaderPath, escapePath(rel))
	h.Set(contract.HeaderSHA256, sha)
	h.Set(contract.HeaderRepoMeta, r.metaStr)
	h.Set(contract.HeaderSchema, strconv.Itoa(contract.SchemaVersion))
	h.Set(contract.HeaderCorrelation, nuid.Next())
	return h
}

// putMsg builds the message publishing the content of a file. Its error
// says why the file cannot be published (the event would not fit).
func (w *Watcher) putMsg(r *repo, rel, sha string, data []byte) (*nats.Msg, error) {
	msg := &nats.Msg{
		Subject: contract.FileSubject(r.name, rel),
		Header:  headers(contract.OpPut, r, rel, sha),
		Data: contract.EncodeFileEvent(&contract.FileEvent{
			Schema:  contract.SchemaVersion,
			Repo:    r.name,
			Path:    rel,
			SHA256:  sha,
			Size:    int64(len(data)),
			Meta:    r.meta,
			Content: w.redactor.String(string(data)),
		}),
	}
	if size := msgSize(msg); size > w.maxPayload-payloadMargin {
		return nil, fmt.Errorf("event of %d bytes exceeds the server's max payload of %d bytes", size, w.maxPayload)
	}
	return msg, nil
}

// tombstoneMsg builds the message marking a file as deleted.
func (w *Watcher) tombstoneMsg(r *repo, rel string) (*nats.Msg, error) {
	return &nats.Msg{
		Subject: contract.FileSubject(r.name, rel),
		Header:  headers(contract.OpDelete, r, rel, ""),
		Data: contract.EncodeFileEvent(&contract.FileEvent{
			Schema:  contract.SchemaVersion,
			Repo:    r.name,
			Path:    rel,
			Meta:    r.meta,
			Deleted: true,
		}),
	}, nil
}

// msgSize is the size the server checks against its max payload: the
// encoded header block plus the payload.
func msgSize(m *nats.Msg) int64 {
	n := len("NATS/1.0\r\n") + len("\r\n")
	for k, vs := range m.Header {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return int64(n + len(m.Data))
}

// publisher publishes asynchronously with a bounded number of messages and
// bytes in flight, and runs each message's callback once JetStream has
// acknowledged it. It waits on its own futures rather than on the
// JetStream context's PublishAsyncComplete, which other users of a shared
// context would hold up, and which does not say which publish failed.
// A publisher is used by one goroutine.
type publisher struct {
	js      jetstream.JetStream
	pending []inflight // oldest first
	bytes   int
}

type inflight struct {
	fut     jetstream.PubAckFuture
	subject string
	size    int
	onAck   func()
}

func newPublisher(js jetstream.JetStream) *publisher { return &publisher{js: js} }

// publish sends msg and returns once it is in flight; onAck runs (in a
// later publish or flush) when it is acknowledged.
func (p *publisher) publish(ctx context.Context, msg *nats.Msg, onAck func()) error {
	size := len(msg.Data)
	for len(p.pending) > 0 && (len(p.pending) >= maxInFlightMsgs || p.bytes+size > maxInFlightBytes) {
		if err := p.waitOldest(ctx); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		fut, err := p.js.PublishMsgAsync(msg)
		if err == nil {
			p.pending = append(p.pending, inflight{fut: fut, subject: msg.Subject, size: size, onAck: onAck})
			p.bytes += size
			return nil
		}
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || attempt >= stalledRetries {
			return fmt.Errorf("publish %s: %w", msg.Subject, err)
		}
		if len(p.pending) > 0 {
			if err := p.waitOldest(ctx); err != nil {
				return err
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// flush waits until every message in flight is acknowledged.
func (p *publisher) flush(ctx context.Context) error {
	for len(p.pending) > 0 {
		if err := p.waitOldest(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (p *publisher) waitOldest(ctx context.Context) error {
	f := p.pending[0]
	p.pending = p.pending[1:]
	p.bytes -= f.size
	timer := time.NewTimer(ackTimeout)
	defer timer.Stop()
	select {
	case <-f.fut.Ok():
		f.onAck()
		return nil
	case err := <-f.fut.Err():
		return fmt.Errorf("publish %s: %w", f.subject, err)
	case <-timer.C:
		return fmt.Errorf("publish %s: no acknowledgement after %s", f.subject, ackTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}
