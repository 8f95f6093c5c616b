package contract

import "encoding/json"

// Transcript intake. Gateways publish raw transcripts to
// kh.transcripts.<agent> (KH_TRANSCRIPTS_IN: memory storage, work queue,
// short age: raw text never reaches disk); the extractor sanitizes each
// and stores it on kh.transcripts.s.<agent> (KH_TRANSCRIPTS), from which
// entries are extracted and can be re-extracted.
const (
	StreamTranscriptsIn      = "KH_TRANSCRIPTS_IN"
	SubjectTranscriptsIn     = SubjectTranscripts        // kh.transcripts.<agent>
	SubjectTranscriptsStored = SubjectTranscripts + ".s" // kh.transcripts.s.<agent>
	SubjectExtract           = "kh.extract"              // request: raw transcript in, ExtractReply out
)

// TranscriptSubjectToken makes an agent id subject-safe.
func TranscriptSubjectToken(agent string) string {
	if ValidRepoName(agent) {
		return agent
	}
	return FileKey(agent)
}

// StoredTranscript is the payload of a KH_TRANSCRIPTS message: a
// sanitized transcript and its id.
type StoredTranscript struct {
	Schema     int             `json:"schema"`
	ID         string          `json:"id"`
	Privacy    string          `json:"privacy_mode"`
	Transcript json.RawMessage `json:"transcript"`
}

// ExtractReply answers an intake: extraction is asynchronous.
type ExtractReply struct {
	TranscriptID string `json:"transcript_id"`
	// Duplicate is set when the same transcript was already received.
	Duplicate bool   `json:"duplicate,omitempty"`
	Seq       uint64 `json:"seq,omitempty"`
}
