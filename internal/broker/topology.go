package broker

import (
	"context"
	"fmt"
	"time"

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
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("ensure stream %s: %w", sc.Name, err)
		}
	}
	for _, kc := range bucketConfigs() {
		kc.Replicas = replicas
		if _, err := js.CreateOrUpdateKeyValue(ctx, kc); err != nil {
			return fmt.Errorf("ensure bucket %s: %w", kc.Bucket, err)
		}
	}
	return nil
}
