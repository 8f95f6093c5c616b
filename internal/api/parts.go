package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
)

// A shard's part of a docs search carries the sections' text, and its
// depth is the request's (hundreds of sections for a phrase query): it
// may not fit in one NATS message. So shard replies are binary
// (contract.EncodeShardReply: no escaping, no reflection) and, when
// longer than the connection's maximum payload, sent as several messages
// to the request's reply subject, each with the part's number and the
// count in headers, in order.
const (
	headerParts = "Kh-Parts"
	headerPart  = "Kh-Part"
	// partSlack leaves room in a part for its headers.
	partSlack = 1024
)

// shardEndpoint adapts fn to a micro handler: a JSON request in, a
// binary reply out, in parts when it is long, or a service error.
func shardEndpoint[Req any](nc *nats.Conn, fn func(Req) (*contract.ShardSearchReply, error)) micro.HandlerFunc {
	return func(req micro.Request) {
		var in Req
		if err := decodeBody(req.Data(), &in, true); err != nil {
			_ = req.Error("400", err.Error(), nil)
			return
		}
		out, err := fn(in)
		if err != nil {
			_ = req.Error(strconv.Itoa(StatusOf(err)), err.Error(), nil)
			return
		}
		if err := respondParts(nc, req, contract.EncodeShardReply(out)); err != nil {
			_ = req.Error("500", "send reply: "+err.Error(), nil)
		}
	}
}

// respondParts sends data as req's reply, in parts when it is longer than
// one message may be.
func respondParts(nc *nats.Conn, req micro.Request, data []byte) error {
	limit := int(nc.MaxPayload()) - partSlack
	if len(data) <= limit || limit <= 0 {
		return req.Respond(data)
	}
	n := (len(data) + limit - 1) / limit
	for i := range n {
		m := nats.NewMsg(req.Reply())
		m.Header.Set(headerParts, strconv.Itoa(n))
		m.Header.Set(headerPart, strconv.Itoa(i))
		m.Data = data[i*limit : min((i+1)*limit, len(data))]
		if err := nc.PublishMsg(m); err != nil {
			return err
		}
	}
	return nil
}

// replies receives the replies of shard requests, which may come in
// several messages: one subscription to a wildcard inbox for the
// connection, routing each message to its request by the last token, as
// nats.go's own request mux does for one-message replies.
type shardReplies struct {
	nc      *nats.Conn
	once    sync.Once
	err     error
	prefix  string
	mu      sync.Mutex
	waiting map[string]chan *nats.Msg
	next    atomic.Uint64
}

// maxParts bounds the parts of one reply that may wait to be read.
const maxParts = 256

func newShardReplies(nc *nats.Conn) *shardReplies {
	return &shardReplies{nc: nc, waiting: map[string]chan *nats.Msg{}}
}

func (r *shardReplies) start() error {
	r.once.Do(func() {
		r.prefix = r.nc.NewInbox()
		_, r.err = r.nc.Subscribe(r.prefix+".*", func(msg *nats.Msg) {
			token := msg.Subject[len(r.prefix)+1:]
			r.mu.Lock()
			ch := r.waiting[token]
			r.mu.Unlock()
			select {
			case ch <- msg:
			default: // a request gone, or a reply of too many parts: it times out
			}
		})
	})
	return r.err
}

// request sends a JSON request on subject and decodes the shard's reply,
// gathered from its parts. A service error is returned as the error its
// code stands for.
func (r *shardReplies) request(ctx context.Context, subject string, req any) (*contract.ShardSearchReply, error) {
	if err := r.start(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	token := strconv.FormatUint(r.next.Add(1), 36)
	ch := make(chan *nats.Msg, maxParts)
	r.mu.Lock()
	r.waiting[token] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, token)
		r.mu.Unlock()
	}()
	if err := r.nc.PublishRequest(subject, r.prefix+"."+token, body); err != nil {
		return nil, err
	}
	var data []byte
	for part, parts := 0, 1; part < parts; part++ {
		var msg *nats.Msg
		select {
		case msg = <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if msg.Header.Get("Status") == "503" {
			return nil, nats.ErrNoResponders
		}
		if msg.Header.Get(micro.ErrorHeader) != "" {
			return nil, serviceError(msg)
		}
		if h := msg.Header.Get(headerParts); h != "" {
			n, err1 := strconv.Atoi(h)
			i, err2 := strconv.Atoi(msg.Header.Get(headerPart))
			if err1 != nil || err2 != nil || n < 1 || i != part {
				return nil, errors.New("reply parts out of order")
			}
			parts = n
		}
		if parts == 1 {
			data = msg.Data
		} else {
			data = append(data, msg.Data...)
		}
	}
	return contract.DecodeShardReply(data)
}
