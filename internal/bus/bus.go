// Package bus runs knowhub's stream consumers on watermill's message router
// over NATS JetStream. It hides watermill behind a small API so the
// transport stays swappable: a stage registers a Handler for a durable
// consumer and gets retries with backoff for transient errors, a poison
// queue to KH_DLQ carrying the reason, panic recovery and correlation ids.
//
// The router's subscriber is our own (subscriber.go) rather than
// watermill-nats' JetStream one, which can send on a closed channel when a
// subscription stops while messages are in flight, and drains the
// connection it was given on Close.
package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// Message is one stream message handed to a Handler.
type Message struct {
	Subject       string
	Seq           uint64 // stream sequence
	Delivered     uint64 // delivery attempt, from 1
	Header        nats.Header
	Data          []byte
	CorrelationID string
}

// Handler processes one message. Returning nil acknowledges it; an error
// wrapped with Permanent sends it straight to the dead-letter stream; any
// other error is retried with backoff and dead-lettered when retries run
// out. Handlers must be idempotent: delivery is at least once.
type Handler func(ctx context.Context, m *Message) error

type permanentError struct {
	err error
	// discard asks for the message's removal from its stream once its
	// dead letter is stored.
	discard bool
}

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// laterError marks an error of a condition outside the message.
type laterError struct{ err error }

func (e laterError) Error() string { return e.err.Error() }
func (e laterError) Unwrap() error { return e.err }

// Later marks err as a condition outside the message that lasts (an
// endpoint that is down, a result another stage has yet to write): the
// message is neither retried at once nor dead-lettered, but redelivered
// after the consumer's NakDelay, doubling up to MaxNakDelay, until it
// succeeds.
func Later(err error) error {
	if err == nil {
		return nil
	}
	return laterError{err: err}
}

// IsLater reports whether err was marked with Later.
func IsLater(err error) bool { return errors.As(err, new(laterError)) }

// waits reports whether a failed message is to be redelivered later
// rather than retried now or dead-lettered.
func waits(err error) bool { return IsStorageFull(err) || IsLater(err) }

// Permanent marks err as one that retrying cannot fix (malformed payload,
// invalid UTF-8, unsupported schema).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

// Malformed marks err as Permanent for a message that no consumer can
// read (it does not decode, or names a path or subject it may not), and
// asks the bus to remove the message from its stream once the dead letter
// is stored. Such a message cannot be redacted in place: left in the
// stream it would keep whatever raw content it carries, and a reindex
// would replay it. The dead letter keeps its subject, sequence and reason.
func Malformed(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err, discard: true}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// DecodeJSON decodes m's JSON payload into v. Invalid UTF-8 (which JSON
// decoding would quietly turn into U+FFFD) and malformed JSON are
// permanent errors naming what was expected.
func DecodeJSON(m *Message, v any, what string) error {
	if !utf8.Valid(m.Data) {
		return Permanent(fmt.Errorf("%s on %s is not valid UTF-8", what, m.Subject))
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		return Permanent(fmt.Errorf("decode %s: %w", what, err))
	}
	return nil
}

// Consumer describes one durable consumer.
type Consumer struct {
	Stage   string // names the handler, the DLQ subject and logs
	Stream  string
	Durable string // shared by every replica: they split the work
	Filter  string // subject filter
	// MaxRetries before a transient failure is dead-lettered (default 5).
	MaxRetries int
	// AckWait is how long a message may go without an ack or an
	// in-progress signal before redelivery to another replica (default
	// DefaultAckWait). A handler at work sends in-progress signals, so it
	// may take longer; only a dead worker's messages wait it out.
	AckWait time.Duration
	// Sensitive marks messages that hold raw content (transcripts). Every
	// dead letter is now stored without its payload, so it changes nothing;
	// it documents the consumer.
	Sensitive bool
	// Concurrency is the number of messages this process handles at once
	// (default 8). Messages of one subject may then be handled out of
	// order, so handlers must order writes by stream sequence themselves.
	Concurrency int
	// NakDelay is how long a message that could not be handled nor
	// dead-lettered waits before its first redelivery (default 1s); each
	// further one waits twice as long, up to MaxNakDelay.
	NakDelay time.Duration
	// MaxNakDelay bounds the wait between redeliveries (default 30s).
	MaxNakDelay time.Duration
}

// DefaultAckWait is the default Consumer.AckWait: short, so that the
// messages a killed worker held are redelivered within a couple of
// seconds.
const DefaultAckWait = 2 * time.Second

// Bus owns a watermill router bound to one shared NATS connection.
type Bus struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	log    *slog.Logger
	router *message.Router
	dlq    *Publisher
}

// New builds a Bus on nc. The connection stays the caller's: closing the bus
// never closes it.
func New(nc *nats.Conn, log *slog.Logger) (*Bus, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	wlog := watermillLogger(log.With("component", "bus"))
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, wlog)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	router.AddMiddleware(middleware.Recoverer)
	return &Bus{nc: nc, js: js, log: log, router: router, dlq: &Publisher{js: js}}, nil
}

// JetStream returns the bus's JetStream context.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Handle registers h for c. Call before Run.
func (b *Bus) Handle(c Consumer, h Handler) error {
	if c.MaxRetries == 0 {
		c.MaxRetries = 5
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.NakDelay <= 0 {
		c.NakDelay = time.Second
	}
	if c.MaxNakDelay <= 0 {
		c.MaxNakDelay = 30 * time.Second
	}
	c.MaxNakDelay = max(c.MaxNakDelay, c.NakDelay)
	sub := &subscriber{js: b.js, consumer: c, log: b.log.With("component", c.Stage)}
	retry := middleware.Retry{
		MaxRetries:      c.MaxRetries,
		InitialInterval: 50 * time.Millisecond,
		MaxInterval:     2 * time.Second,
		Multiplier:      2,
		ShouldRetry:     func(p middleware.RetryParams) bool { return !IsPermanent(p.Err) && !waits(p.Err) },
		Logger:          watermillLogger(b.log.With("component", "bus", "stage", c.Stage)),
	}
	// A dead letter keeps the metadata only: the payload may hold a
	// producer's unredacted content. It stays in the source stream at the
	// sequence the dead letter names, unless the handler found it
	// Malformed.
	// A message that failed for want of storage is not poison: it is
	// returned and redelivered, with backoff, until there is room again.
	poison, err := middleware.PoisonQueueWithFilter(payloadless{b.dlq}, contract.DLQSubject(c.Stage),
		func(err error) bool { return !waits(err) })
	if err != nil {
		return fmt.Errorf("poison queue for %s: %w", c.Stage, err)
	}
	log := b.log.With("component", c.Stage)
	fn := func(wm *message.Message) error {
		m := fromWatermill(wm)
		err := h(wm.Context(), m)
		if p := (permanentError{}); errors.As(err, &p) && p.discard {
			wm.Metadata.Set(mdDiscard, "1")
		}
		switch {
		case err == nil:
		case IsLater(err):
			log.Info("message waits for redelivery", "subject", m.Subject, "seq", m.Seq, "delivered", m.Delivered, "correlation", m.CorrelationID, "err", err)
		case IsStorageFull(err):
			log.Error("JetStream has no room to store the result (is its disk full?); the message waits for redelivery",
				"subject", m.Subject, "seq", m.Seq, "correlation", m.CorrelationID, "err", err)
		default:
			log.Warn("handle message", "subject", m.Subject, "seq", m.Seq, "correlation", m.CorrelationID, "permanent", IsPermanent(err), "err", err)
		}
		return err
	}
	// Each handler is one concurrent pull subscription on the shared
	// durable consumer.
	for i := range c.Concurrency {
		handler := b.router.AddConsumerHandler(fmt.Sprintf("%s-%d", c.Stage, i), c.Filter, sub, fn)
		// Poison wraps retry: only a message that still fails after its
		// retries (or fails permanently) reaches the dead-letter stream.
		// Outside both, a malformed message is removed from its stream
		// once its dead letter is stored.
		handler.AddMiddleware(b.discardMalformed(c, log), poison, retry.Middleware)
	}
	return nil
}

// discardMalformed removes a message its handler marked Malformed from
// c's stream, after the poison queue stored its dead letter (the handler
// chain then returns nil). The removal overwrites the message on disk. A
// removal that keeps failing is logged: the message is acknowledged
// either way, since handling it again would dead-letter it twice.
func (b *Bus) discardMalformed(c Consumer, log *slog.Logger) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(wm *message.Message) ([]*message.Message, error) {
			out, err := h(wm)
			if err != nil || wm.Metadata.Get(mdDiscard) == "" {
				return out, err
			}
			seq, _ := strconv.ParseUint(wm.Metadata.Get(mdSeq), 10, 64)
			var derr error
			for attempt := range 3 {
				if attempt > 0 {
					time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
				}
				if derr = b.removeMsg(c.Stream, seq); derr == nil {
					log.Warn("removed a malformed message from its stream after dead-lettering it", "stream", c.Stream, "subject", wm.Metadata.Get(mdSubject), "seq", seq)
					return out, nil
				}
			}
			log.Error("remove a dead-lettered malformed message from its stream", "stream", c.Stream, "subject", wm.Metadata.Get(mdSubject), "seq", seq, "err", derr)
			return out, nil
		}
	}
}

// removeMsg securely deletes message seq of stream; one already gone (a
// newer version replaced it) is no error.
func (b *Bus) removeMsg(stream string, seq uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	if err := s.SecureDeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return err
	}
	return nil
}

// Run runs the router until ctx is cancelled, then stops fetching and
// finishes in-flight messages within the close timeout.
func (b *Bus) Run(ctx context.Context) error {
	return b.router.Run(ctx)
}

// Running is closed once every handler is subscribed.
func (b *Bus) Running() chan struct{} { return b.router.Running() }

// Close stops the router.
func (b *Bus) Close() error { return b.router.Close() }

// Publisher publishes watermill messages to JetStream, mapping metadata to
// headers. It serves the poison queue.
type Publisher struct{ js jetstream.JetStream }

// Publish implements message.Publisher.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	for _, wm := range msgs {
		h := nats.Header{}
		if stage, ok := strings.CutPrefix(topic, contract.SubjectDLQ+"."); ok {
			h.Set(contract.HeaderStage, stage)
		}
		for k, v := range wm.Metadata {
			switch k {
			case middleware.ReasonForPoisonedKey:
				h.Set(contract.HeaderReason, truncate(v, 1024))
			case middleware.PoisonedTopicKey, middleware.PoisonedSubscriberKey, middleware.PoisonedHandlerKey:
			case middleware.CorrelationIDMetadataKey:
				h.Set(contract.HeaderCorrelation, v)
			case mdSubject:
				h.Set(contract.HeaderOrigSubject, v)
			case mdSeq:
				h.Set(contract.HeaderOrigSeq, v)
			case mdDelivered, mdDiscard:
			default:
				// Only knowhub's own headers are kept: Nats-* ones
				// steer the server (expected sequences, message ids),
				// so copied they would make the dead letter fail, and
				// another producer's may carry anything, secrets
				// included.
				if isKnowhubHeader(k) {
					h.Set(k, v)
				}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := p.js.PublishMsg(ctx, &nats.Msg{Subject: topic, Header: h, Data: wm.Payload})
		cancel()
		if err != nil {
			return fmt.Errorf("publish to %s: %w", topic, err)
		}
	}
	return nil
}

// Close implements message.Publisher.
func (p *Publisher) Close() error { return nil }

// payloadless dead-letters messages without their payload.
type payloadless struct{ *Publisher }

func (p payloadless) Publish(topic string, msgs ...*message.Message) error {
	for _, m := range msgs {
		m.Metadata.Set(contract.HeaderDLQSize, strconv.Itoa(len(m.Payload)))
		m.Payload = nil
	}
	return p.Publisher.Publish(topic, msgs...)
}

// isKnowhubHeader reports whether k is one of knowhub's own headers (Kh-*),
// never one of the Nats-* headers JetStream acts on.
func isKnowhubHeader(k string) bool {
	return len(k) >= 3 && strings.EqualFold(k[:3], "kh-")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

const (
	mdSubject   = "kh_subject"
	mdSeq       = "kh_seq"
	mdDelivered = "kh_delivered"
	// mdDiscard marks a message its handler found malformed.
	mdDiscard = "kh_discard"
)

// toWatermill turns a JetStream message into a watermill one: headers
// become metadata, plus the subject, stream sequence and delivery count.
func toWatermill(msg jetstream.Msg) *message.Message {
	wm := message.NewMessage(watermill.NewUUID(), msg.Data())
	for k, v := range msg.Headers() {
		if len(v) > 0 {
			wm.Metadata.Set(k, v[0])
		}
	}
	wm.Metadata.Set(mdSubject, msg.Subject())
	if md, err := msg.Metadata(); err == nil {
		wm.Metadata.Set(mdSeq, strconv.FormatUint(md.Sequence.Stream, 10))
		wm.Metadata.Set(mdDelivered, strconv.FormatUint(md.NumDelivered, 10))
	}
	if c := msg.Headers().Get(contract.HeaderCorrelation); c != "" {
		middleware.SetCorrelationID(c, wm)
	} else {
		middleware.SetCorrelationID(watermill.NewShortUUID(), wm)
	}
	return wm
}

func fromWatermill(wm *message.Message) *Message {
	m := &Message{
		Subject:       wm.Metadata.Get(mdSubject),
		Data:          wm.Payload,
		Header:        nats.Header{},
		CorrelationID: middleware.MessageCorrelationID(wm),
	}
	m.Seq, _ = strconv.ParseUint(wm.Metadata.Get(mdSeq), 10, 64)
	m.Delivered, _ = strconv.ParseUint(wm.Metadata.Get(mdDelivered), 10, 64)
	for k, v := range wm.Metadata {
		switch k {
		case mdSubject, mdSeq, mdDelivered, middleware.CorrelationIDMetadataKey:
		default:
			m.Header.Set(k, v)
		}
	}
	return m
}

// IsStorageFull reports whether err is JetStream refusing a write for want
// of storage: the server's or the account's limit is reached ("insufficient
// resources"), or the disk itself is full. Retrying helps once space is
// freed, so such a message is neither dead-lettered nor dropped.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jsErrAccountResourcesExceeded, jsErrInsufficientResources, jsErrStorageResourcesExceeded:
			return true
		}
	}
	// Errors that crossed a process boundary keep only their text.
	msg := err.Error()
	return strings.Contains(msg, "insufficient resources") || strings.Contains(msg, "resource limits exceeded") ||
		strings.Contains(msg, "no space left on device")
}

// JetStream's error codes for a write refused for want of storage
// (nats-server's errors.json).
const (
	jsErrAccountResourcesExceeded jetstream.ErrorCode = 10002
	jsErrInsufficientResources    jetstream.ErrorCode = 10023
	jsErrStorageResourcesExceeded jetstream.ErrorCode = 10047
)

// IsWrongLastSequence reports whether err is JetStream refusing a publish
// whose Nats-Expected-Last-Subject-Sequence (or -Sequence) no longer holds:
// someone else published first. Replicated streams report it with its own
// code.
func IsWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
