package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"
)

// subscriber is a watermill message.Subscriber over one durable JetStream
// pull consumer. Each Subscribe call runs one goroutine that fetches a
// message, hands it to the router and waits for its ack or nack before the
// next, and that goroutine alone closes the output channel, so no message
// is ever sent on a closed channel during shutdown.
type subscriber struct {
	js       jetstream.JetStream
	consumer Consumer
	log      *slog.Logger
}

// consumerAttempts bounds how often a consumer is declared before the
// subscription fails.
const consumerAttempts = 10

// Subscribe implements message.Subscriber; topic is the consumer's filter.
func (s *subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	c := s.consumer
	cfg := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		FilterSubject: topic,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxAckPending: 256,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	// A cluster that is electing leaders answers late: keep asking
	// (bounded) rather than stop the worker.
	var cons jetstream.Consumer
	var err error
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cons, err = s.js.CreateOrUpdateConsumer(cctx, c.Stream, cfg)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil || attempt == consumerAttempts {
			return nil, fmt.Errorf("consumer %s on %s: %w", c.Durable, c.Stream, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(8))
	if err != nil {
		return nil, fmt.Errorf("consume %s: %w", c.Durable, err)
	}
	out := make(chan *message.Message)
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	go func() {
		defer close(out)
		for {
			msg, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) || ctx.Err() != nil {
					return
				}
				// Transient (heartbeats missed, server restarting): the
				// iterator keeps pulling; pause so a persistent error
				// cannot spin.
				select {
				case <-ctx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			wm := toWatermill(msg)
			mctx, cancel := context.WithCancel(ctx)
			wm.SetContext(mctx)
			select {
			case out <- wm:
			case <-ctx.Done():
				cancel()
				_ = msg.Nak()
				return
			}
			s.await(ctx, msg, wm)
			cancel()
		}
	}()
	return out, nil
}

// await waits for the router's verdict on msg and passes it on. While the
// handler works it tells JetStream so every quarter of the ack wait, so
// that the short ack wait redelivers only a dead worker's messages.
func (s *subscriber) await(ctx context.Context, msg jetstream.Msg, wm *message.Message) {
	beat := time.NewTicker(max(s.consumer.AckWait/4, 10*time.Millisecond))
	defer beat.Stop()
	for {
		select {
		case <-wm.Acked():
			_ = msg.Ack()
			return
		case <-wm.Nacked():
			s.nak(msg)
			return
		case <-beat.C:
			_ = msg.InProgress()
		case <-ctx.Done():
			// Unacked: JetStream redelivers after AckWait.
			return
		}
	}
}

// nak returns a message whose handling failed and that was not
// dead-lettered: the handler could not store its result, or the dead
// letter itself could not be stored (JetStream out of storage). Such a
// message is never dropped: it is redelivered after the consumer's
// NakDelay, doubled at each delivery up to MaxNakDelay, so that a
// condition that lasts (a full disk) costs a redelivery every MaxNakDelay
// and work resumes by itself once it clears.
func (s *subscriber) nak(msg jetstream.Msg) {
	delivered := uint64(1)
	if md, err := msg.Metadata(); err == nil {
		delivered = md.NumDelivered
	}
	_ = msg.NakWithDelay(nakDelay(s.consumer.NakDelay, s.consumer.MaxNakDelay, delivered))
}

// nakDelay is first doubled for each delivery after the first, at most
// limit.
func nakDelay(first, limit time.Duration, delivered uint64) time.Duration {
	d := first
	for i := uint64(1); i < delivered && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Close implements message.Subscriber; subscriptions end with their
// context, and the connection belongs to the caller.
func (s *subscriber) Close() error { return nil }
