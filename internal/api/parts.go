package api

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// A shard's part of a docs search carries the sections' text, and its
// depth is the request's (hundreds of sections for a phrase query): it
// may not fit in one NATS message. So shard replies are gob-encoded (no
// escaping of the text, several times faster than JSON both ways) and,
// when longer than the connection's maximum payload, sent as several
// messages to the request's reply subject, each with the part's number
// and the count in headers, in order.
const (
	headerParts = "Kh-Parts"
	headerPart  = "Kh-Part"
	// partSlack leaves room in a part for its headers.
	partSlack = 1024
)

// gobEndpoint adapts fn to a micro handler: a gob request in, a gob reply
// out, in parts when it is long, or a service error.
func gobEndpoint[Req, Resp any](nc *nats.Conn, fn func(Req) (*Resp, error)) micro.HandlerFunc {
	return func(req micro.Request) {
		var in Req
		if err := gob.NewDecoder(bytes.NewReader(req.Data())).Decode(&in); err != nil {
			_ = req.Error("400", "decode request: "+err.Error(), nil)
			return
		}
		out, err := fn(in)
		if err != nil {
			_ = req.Error(strconv.Itoa(StatusOf(err)), err.Error(), nil)
			return
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(out); err != nil {
			_ = req.Error("500", "encode reply: "+err.Error(), nil)
			return
		}
		if err := respondParts(nc, req, buf.Bytes()); err != nil {
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

// requestParts sends a gob request on subject and decodes its gob reply,
// gathered from its parts, into resp. A service error is returned as the
// error its code stands for.
func requestParts(ctx context.Context, nc *nats.Conn, subject string, req, resp any) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(req); err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(subject, inbox, buf.Bytes()); err != nil {
		return err
	}
	var data []byte
	for part, parts := 0, 1; part < parts; part++ {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return err
		}
		if msg.Header.Get("Status") == "503" {
			return nats.ErrNoResponders
		}
		if e := msg.Header.Get(micro.ErrorHeader); e != "" {
			return serviceError(msg)
		}
		if h := msg.Header.Get(headerParts); h != "" {
			n, err1 := strconv.Atoi(h)
			i, err2 := strconv.Atoi(msg.Header.Get(headerPart))
			if err1 != nil || err2 != nil || n < 1 || i != part {
				return errors.New("reply parts out of order")
			}
			parts = n
		}
		data = append(data, msg.Data...)
	}
	return gob.NewDecoder(bytes.NewReader(data)).Decode(resp)
}
