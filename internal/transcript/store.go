package transcript

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/contract"
)

// Store prepares a raw transcript with in and appends the sanitized
// transcript to KH_TRANSCRIPTS; the raw one is never persisted. The same
// transcript (same session and content) is stored once: its id is the
// message id, and the stream drops duplicates for a day.
//
// scopes, when not empty, are those of the token that sent the transcript:
// its entries must stay within them (see extractor.ScopeRequest). They are
// part of the transcript's id, so two audiences sending the same session
// each get their entries.
func Store(ctx context.Context, js jetstream.JetStream, in *Intake, raw []byte, scopes []string) (*contract.ExtractReply, error) {
	t, id, err := in.Prepare(raw)
	if err != nil {
		return nil, err
	}
	if len(scopes) > 0 {
		t.Scopes = slices.Clone(scopes)
		slices.Sort(t.Scopes)
		t.Scopes = slices.Compact(t.Scopes)
		sum := sha256.Sum256([]byte(id + "\x00" + strings.Join(t.Scopes, "\x00")))
		id = hex.EncodeToString(sum[:16])
	}
	body, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode transcript: %w", err)
	}
	data, err := json.Marshal(contract.StoredTranscript{Schema: contract.SchemaVersion, ID: id, Privacy: string(in.mode), Transcript: body})
	if err != nil {
		return nil, err
	}
	ack, err := js.PublishMsg(ctx, &nats.Msg{
		Subject: contract.SubjectTranscriptsStored + "." + contract.TranscriptSubjectToken(t.AgentID),
		Data:    data,
		Header: nats.Header{
			nats.MsgIdHdr:         {id},
			contract.HeaderSchema: {strconv.Itoa(contract.SchemaVersion)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("store transcript %s: %w", id, err)
	}
	return &contract.ExtractReply{TranscriptID: id, Status: contract.ExtractQueued, Duplicate: ack.Duplicate, Seq: ack.Sequence}, nil
}

// DecodeStored decodes a KH_TRANSCRIPTS payload.
func DecodeStored(data []byte) (*contract.StoredTranscript, *Transcript, error) {
	var st contract.StoredTranscript
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, nil, fmt.Errorf("decode stored transcript: %w", err)
	}
	if st.Schema > contract.SchemaVersion || st.ID == "" {
		return nil, nil, fmt.Errorf("stored transcript has schema %d and id %q", st.Schema, st.ID)
	}
	var t Transcript
	if err := json.Unmarshal(st.Transcript, &t); err != nil {
		return nil, nil, fmt.Errorf("decode transcript %s: %w", st.ID, err)
	}
	return &st, &t, nil
}
