package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/extractor"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/transcript"
)

// ExtractReport counts what a re-extraction found and did.
type ExtractReport struct {
	Transcripts int              `json:"transcripts"`
	Added       int              `json:"added"`
	Quarantined int              `json:"quarantined"`
	Superseded  int              `json:"superseded"`
	Duplicates  int              `json:"duplicates"`
	Rejected    int              `json:"rejected"`
	Entries     []kb.SaveRequest `json:"entries,omitempty"` // with DryRun
}

// ReplayExtraction runs the current extractor again over the stored
// transcripts received since since (all when zero) and saves what it finds
// through kh.kb.save; with dryRun it only reports the entries.
func ReplayExtraction(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, p *extractor.Pipeline, since time.Time, dryRun bool) (*ExtractReport, error) {
	rep := &ExtractReport{}
	stream, err := js.Stream(ctx, contract.StreamTranscripts)
	if err != nil {
		return nil, err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.State.Msgs == 0 {
		return rep, nil
	}
	cfg := jetstream.OrderedConsumerConfig{}
	if !since.IsZero() {
		cfg.DeliverPolicy = jetstream.DeliverByStartTimePolicy
		cfg.OptStartTime = &since
	}
	cons, err := stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, nats.ErrTimeout) {
			return rep, nil // nothing since that time
		}
		if err != nil {
			return rep, err
		}
		md, err := msg.Metadata()
		if err != nil {
			return rep, err
		}
		st, t, err := transcript.DecodeStored(msg.Data())
		if err == nil {
			rep.Transcripts++
			res, err := p.Extract(ctx, t, st.ID)
			if err != nil {
				return rep, err
			}
			if !dryRun {
				if err := extractor.PublishLearned(ctx, js, p.Learn(t, st.ID)); err != nil {
					return rep, err
				}
			}
			for _, r := range res.Requests {
				r = extractor.ScopeRequest(r, t)
				if dryRun {
					rep.Entries = append(rep.Entries, r)
					continue
				}
				resp, err := extractor.SaveEntry(nc, r)
				switch {
				case err != nil:
					rep.Rejected++
				case resp.Duplicate == kb.DuplicateExact:
					rep.Duplicates++
				case resp.Supersedes != "":
					rep.Superseded++
				case resp.State == kb.StateQuarantined:
					rep.Quarantined++
				default:
					rep.Added++
				}
			}
		}
		if md.NumPending == 0 || md.Sequence.Stream >= info.State.LastSeq {
			return rep, nil
		}
	}
}

// RevokeTranscript revokes every entry extracted from one transcript, and
// the words it taught docs sections (RevokeLearned), and returns how many
// entries it revoked.
func RevokeTranscript(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, transcriptID, reason string) (int, error) {
	if _, err := RevokeLearned(ctx, js, transcriptID); err != nil {
		return 0, err
	}
	bucket, err := js.KeyValue(ctx, contract.BucketKB)
	if err != nil {
		return 0, err
	}
	keys, err := bucket.ListKeys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for k := range keys.Keys() {
		e, err := bucket.Get(ctx, k)
		if err != nil {
			continue
		}
		var entry kb.Entry
		if json.Unmarshal(e.Value(), &entry) != nil || entry.TranscriptID != transcriptID || entry.State == kb.StateRevoked {
			continue
		}
		data, _ := json.Marshal(kb.UpdateRequest{ID: entry.ID, Action: kb.ActionRevoke, Reason: reason})
		msg, err := nc.Request(contract.SubjectKBUpdate, data, 10*time.Second)
		if err != nil {
			return n, fmt.Errorf("revoke %s: %w", entry.ID, err)
		}
		if e := msg.Header.Get("Nats-Service-Error"); e != "" {
			return n, fmt.Errorf("revoke %s: %s", entry.ID, e)
		}
		n++
	}
	return n, nil
}

// RevokeLearned publishes to KH_LEARNED a revocation for every file whose
// learned words (KH_LEARNED_WORDS) hold words taught by a transcript, and
// returns how many files that is. The indexer removes the words and
// reindexes each file.
func RevokeLearned(ctx context.Context, js jetstream.JetStream, transcriptID string) (int, error) {
	bucket, err := js.KeyValue(ctx, contract.BucketLearned)
	if err != nil {
		return 0, fmt.Errorf("open bucket %s: %w", contract.BucketLearned, err)
	}
	keys, err := bucket.ListKeys(ctx)
	if err != nil {
		return 0, err
	}
	var evs []contract.LearnedEvent
	for k := range keys.Keys() {
		e, err := bucket.Get(ctx, k)
		if err != nil {
			continue
		}
		var rec contract.LearnedRecord
		if json.Unmarshal(e.Value(), &rec) != nil || !rec.Taught(transcriptID) {
			continue
		}
		evs = append(evs, contract.LearnedEvent{Schema: contract.SchemaVersion, Op: contract.LearnedRevoke,
			TranscriptID: transcriptID, Repo: rec.Repo, Path: rec.Path})
	}
	return len(evs), extractor.PublishLearned(ctx, js, evs)
}
