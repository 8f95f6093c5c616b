package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// streamConfigs lists every stream of the contract with its settings.
func streamConfigs() []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{
			Name:              contract.StreamFiles,
			Description:       "latest redacted content of every watched file; replay = full reindex",
			Subjects:          []string{contract.SubjectFiles + ".>"},
			MaxMsgsPerSubject: 1,
			Storage:           jetstream.FileStorage,
			Discard:           jetstream.DiscardOld,
		},
		{
			Name:              contract.StreamChunks,
			Description:       "chunk set of the latest version of each file",
			Subjects:          []string{contract.SubjectChunks + ".>"},
			MaxMsgsPerSubject: 1,
			Storage:           jetstream.FileStorage,
		},
		{
			Name:              contract.StreamVectors,
			Description:       "section vectors of the latest chunk set of each file, from the configured embeddings endpoint",
			Subjects:          []string{contract.SubjectVectors + ".>"},
			MaxMsgsPerSubject: 1,
			Storage:           jetstream.FileStorage,
		},
		{
			Name:              contract.StreamTools,
			Description:       "tool catalog, last value per tool",
			Subjects:          []string{contract.SubjectToolsEvents + ".>"},
			MaxMsgsPerSubject: 1,
			Storage:           jetstream.FileStorage,
		},
		{
			Name:        contract.StreamKnowledge,
			Description: "append-only knowledge events",
			Subjects:    []string{contract.SubjectKnowledge + ".>"},
			Storage:     jetstream.FileStorage,
		},
		{
			Name:        contract.StreamTranscriptsIn,
			Description: "raw agent transcripts awaiting sanitization (memory only, removed once taken)",
			Subjects:    []string{contract.SubjectTranscriptsIn + ".*"},
			Storage:     jetstream.MemoryStorage,
			Retention:   jetstream.WorkQueuePolicy,
			MaxAge:      time.Hour,
			MaxBytes:    256 << 20,
		},
		{
			Name:        contract.StreamTranscripts,
			Description: "sanitized agent transcripts, kept so extraction can be re-run",
			Subjects:    []string{contract.SubjectTranscriptsStored + ".>"},
			Storage:     jetstream.FileStorage,
			Duplicates:  24 * time.Hour,
		},
		{
			Name:        contract.StreamLearned,
			Description: "append-only learned-vocabulary events: query words per used docs section, per transcript",
			Subjects:    []string{contract.SubjectLearned + ".>"},
			Storage:     jetstream.FileStorage,
			Duplicates:  24 * time.Hour,
		},
		{
			Name:        contract.StreamDLQ,
			Description: "messages a stage could not process, with the reason in headers",
			Subjects:    []string{contract.SubjectDLQ + ".>"},
			Storage:     jetstream.FileStorage,
			MaxAge:      30 * 24 * time.Hour,
		},
	}
}

func bucketConfigs() []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{
		{Bucket: contract.BucketIndex, Description: "per document term vectors and display text", History: 1, Storage: jetstream.FileStorage},
		{Bucket: contract.BucketKB, Description: "current knowledge records", History: 1, Storage: jetstream.FileStorage},
		{Bucket: contract.BucketLearned, Description: "learned query words per docs file, a fold of KH_LEARNED", History: 1, Storage: jetstream.FileStorage},
		{Bucket: contract.BucketExtractions, Description: "what extraction saved from each transcript", History: 1,
			Storage: jetstream.FileStorage, TTL: 7 * 24 * time.Hour},
	}
}

// EnsureTopology creates or updates every stream and bucket with one
// replica. It is idempotent and safe to call from every worker at start-up.
func EnsureTopology(ctx context.Context, js jetstream.JetStream) error {
	return EnsureReplicated(ctx, js, 1)
}

// EnsureReplicated is EnsureTopology for a JetStream cluster: every
// stream and bucket keeps replicas copies (1, 3 or 5), so losing a
// minority of servers loses nothing.
func EnsureReplicated(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if replicas < 1 {
		replicas = 1
	}
	for _, sc := range streamConfigs() {
		sc.Replicas = replicas
		err := retryUnanswered(ctx, func(ctx context.Context) error { _, err := js.CreateOrUpdateStream(ctx, sc); return err })
		if err != nil {
			return fmt.Errorf("ensure stream %s: %w", sc.Name, err)
		}
	}
	for _, kc := range bucketConfigs() {
		kc.Replicas = replicas
		err := retryUnanswered(ctx, func(ctx context.Context) error { _, err := js.CreateOrUpdateKeyValue(ctx, kc); return err })
		if err != nil {
			return fmt.Errorf("ensure bucket %s: %w", kc.Bucket, err)
		}
	}
	return nil
}

// Attempts of a JetStream API request that may go unanswered: each waits
// up to topologyAttemptTimeout, then the next starts after a backoff that
// doubles up to 2s; about 35s in all.
const (
	topologyAttempts       = 10
	topologyAttemptTimeout = 2 * time.Second
	topologyBackoff        = 100 * time.Millisecond
)

// Errors of the JetStream API from a cluster that is still forming: no
// peers are known yet to place replicas on, or the meta layer is not
// available yet.
const (
	jsErrClusterNoPeers  jetstream.ErrorCode = 10005
	jsErrClusterNotAvail jetstream.ErrorCode = 10008
)

// retryUnanswered runs op again, with backoff, while it fails for want of
// an answer, or of a cluster ready to give one: a request that timed out,
// one that found no JetStream to answer it, or one that a forming cluster
// could not place yet. Workers that start together against a cluster that
// is still forming get such failures: while one of them creates a
// replicated stream, the same request from the others can go unanswered,
// and until every server has reported in, replicas find no peers (a
// cluster too small for the replicas fails so too, after the retries). Any
// other error, or ctx ending, returns at once.
func retryUnanswered(ctx context.Context, op func(context.Context) error) error {
	wait := topologyBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, topologyAttemptTimeout)
		err := op(actx)
		cancel()
		var apiErr *jetstream.APIError
		unanswered := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
			errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
			errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
			errors.As(err, &apiErr) && (apiErr.ErrorCode == jsErrClusterNoPeers || apiErr.ErrorCode == jsErrClusterNotAvail)
		if err == nil || !unanswered || ctx.Err() != nil || attempt == topologyAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
