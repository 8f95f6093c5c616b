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
	// Status is ExtractQueued, or with a wait ExtractDone or ExtractPending.
	Status string `json:"status"`
	// Duplicate is set when the same transcript was already received.
	Duplicate bool   `json:"duplicate,omitempty"`
	Seq       uint64 `json:"seq,omitempty"`
	// ExtractedCount and IDs, set once Status is ExtractDone, are the
	// knowledge entries saved from the transcript.
	ExtractedCount *int     `json:"extracted_count,omitempty"`
	IDs            []string `json:"ids,omitempty"`
}

// Extraction statuses of an ExtractReply.
const (
	ExtractQueued  = "queued"    // stored; extraction runs in the background
	ExtractDone    = "extracted" // extraction finished (see ExtractedCount)
	ExtractPending = "pending"   // the wait ended before extraction did
)

// BucketExtractions holds, per transcript id, the Extraction that the
// extractor records once it has saved what the transcript yielded.
const BucketExtractions = "KH_EXTRACTIONS"

// Extraction is the outcome of extracting one transcript.
type Extraction struct {
	Schema       int      `json:"schema"`
	TranscriptID string   `json:"transcript_id"`
	IDs          []string `json:"ids"`
	// Rejected counts candidates that kb.save refused.
	Rejected int `json:"rejected,omitempty"`
	// Seq is the last KH_KNOWLEDGE sequence of the saves, to wait on as a
	// search's min_seq.
	Seq uint64 `json:"seq,omitempty"`
}
