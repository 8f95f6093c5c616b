package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestRetryUnanswered(t *testing.T) {
	failing := func(errs ...error) (func(context.Context) error, *int) {
		calls := 0
		return func(ctx context.Context) error {
			calls++
			if _, ok := ctx.Deadline(); !ok {
				t.Error("an attempt without a deadline")
			}
			if calls <= len(errs) {
				return errs[calls-1]
			}
			return nil
		}, &calls
	}
	refused := errors.New("stream name already in use")
	for _, tc := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   error
	}{
		{"answered", nil, 1, nil},
		{"timed out, then answered", []error{context.DeadlineExceeded, nats.ErrTimeout}, 3, nil},
		{"no responders, then answered", []error{nats.ErrNoResponders}, 2, nil},
		{"no peers yet, then answered", []error{fmt.Errorf("create: %w", &jetstream.APIError{Code: 400, ErrorCode: 10005,
			Description: "no suitable peers for placement, peer offline"})}, 2, nil},
		{"refused", []error{refused}, 1, refused},
	} {
		op, calls := failing(tc.errs...)
		err := retryUnanswered(context.Background(), op)
		if !errors.Is(err, tc.wantErr) || *calls != tc.wantCalls {
			t.Errorf("%s: %d calls, error %v; want %d calls, error %v", tc.name, *calls, err, tc.wantCalls, tc.wantErr)
		}
	}
	// A caller's cancelled context stops the retries.
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := retryUnanswered(ctx, func(context.Context) error {
		calls++
		cancel()
		return context.DeadlineExceeded
	})
	if calls != 1 || err == nil {
		t.Errorf("after cancel: %d calls, error %v", calls, err)
	}
}
