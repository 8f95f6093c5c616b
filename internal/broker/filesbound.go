package broker

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// FilesBound knows the last sequence KH_FILES has stored. The KH_FILES
// sequence a chunk set claims to come from (its file_seq, its
// Kh-Source-Seq header) is written by its producer, who could claim any
// number; no real chunk set can carry one past that last sequence, the
// one fact about it that the stream itself vouches for. The bound only
// grows, so it is cached and read again only when a claim exceeds it.
// The zero value is not usable: use NewFilesBound.
type FilesBound struct {
	js   jetstream.JetStream
	mu   sync.Mutex
	last uint64
}

// NewFilesBound returns a bound read through js.
func NewFilesBound(js jetstream.JetStream) *FilesBound { return &FilesBound{js: js} }

// Covers reports whether KH_FILES has stored a message at seq or later,
// and its last sequence, reading the stream's state when the cached bound
// is below seq.
func (b *FilesBound) Covers(ctx context.Context, seq uint64) (bool, uint64, error) {
	b.mu.Lock()
	last := b.last
	b.mu.Unlock()
	if seq <= last {
		return true, last, nil
	}
	s, err := b.js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		return false, 0, fmt.Errorf("stream %s: %w", contract.StreamFiles, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, 0, fmt.Errorf("stream %s info: %w", contract.StreamFiles, err)
	}
	b.mu.Lock()
	b.last = max(b.last, info.State.LastSeq)
	last = b.last
	b.mu.Unlock()
	return seq <= last, last, nil
}
