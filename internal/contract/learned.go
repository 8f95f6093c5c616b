package contract

import (
	"fmt"
	"slices"
)

// Learned vocabulary. The extractor finds, in a stored transcript, a docs
// search whose result the agent then used, and publishes the search's
// screened query words for the section it used on
// kh.learned.<repo>.<fileKey> (KH_LEARNED, append-only). The indexer folds
// the events into KH_LEARNED_WORDS, one record per file, and indexes each
// section's words as the docs field FieldLearned. Revoking a transcript
// publishes a revocation per file it taught, which removes its words.
const (
	StreamLearned  = "KH_LEARNED"
	SubjectLearned = "kh.learned" // kh.learned.<repo>.<fileKey>
	BucketLearned  = "KH_LEARNED_WORDS"
	// FieldLearned is the docs field of the words agents used to find a
	// section.
	FieldLearned = "learned"
)

// Ops of a LearnedEvent.
const (
	LearnedAdd    = "learned" // a transcript taught a section words
	LearnedRevoke = "revoked" // remove every word a transcript taught the file
)

// Bounds of a LearnedEvent.
const (
	MaxLearnedWords    = 8  // words per event
	MaxLearnedWordLen  = 24 // bytes per word
	MaxLearnedSections = 64 // taught sections per file record
	MaxLearnedHeadings = 16 // headings in a section's heading path
	MaxLearnedHeading  = 512
)

// LearnedSubject is the KH_LEARNED subject of one file's events.
func LearnedSubject(repo, path string) string {
	return SubjectLearned + "." + repo + "." + FileKey(path)
}

// LearnedKey is the KH_LEARNED_WORDS key of one file's record.
func LearnedKey(repo, path string) string { return repo + "." + FileKey(path) }

// LearnedEvent is the payload of a KH_LEARNED message.
type LearnedEvent struct {
	Schema       int    `json:"schema"`
	Op           string `json:"op"`
	TranscriptID string `json:"transcript_id"`
	Repo         string `json:"repo"`
	Path         string `json:"path"`
	// HeadingPath and Words are set on LearnedAdd: the section used and
	// the screened words of the query that found it.
	HeadingPath []string `json:"heading_path,omitempty"`
	Words       []string `json:"words,omitempty"`
	// How names the evidence: "quoted", "read", "ran" or "cited".
	How string `json:"how,omitempty"`
}

// Check reports what makes the event invalid on subject, or nil.
func (e *LearnedEvent) Check(subject string) error {
	switch {
	case e.Schema > SchemaVersion:
		return fmt.Errorf("learned event schema %d is newer than %d", e.Schema, SchemaVersion)
	case e.Op != LearnedAdd && e.Op != LearnedRevoke:
		return fmt.Errorf("learned event has unknown op %q", e.Op)
	case e.TranscriptID == "" || len(e.TranscriptID) > 128:
		return fmt.Errorf("learned event needs a transcript id of 1 to 128 bytes")
	case !ValidRepoName(e.Repo) || !ValidPath(e.Path):
		return fmt.Errorf("learned event has an invalid repo or path")
	case subject != LearnedSubject(e.Repo, e.Path):
		return fmt.Errorf("learned event for %s/%s arrived on %s", e.Repo, e.Path, subject)
	case e.Op == LearnedAdd && (len(e.Words) == 0 || len(e.Words) > MaxLearnedWords):
		return fmt.Errorf("learned event carries %d words, want 1 to %d", len(e.Words), MaxLearnedWords)
	case len(e.HeadingPath) > MaxLearnedHeadings:
		return fmt.Errorf("learned event has %d headings, want at most %d", len(e.HeadingPath), MaxLearnedHeadings)
	}
	for _, h := range e.HeadingPath {
		if len(h) > MaxLearnedHeading {
			return fmt.Errorf("learned event has a heading of %d bytes, want at most %d", len(h), MaxLearnedHeading)
		}
	}
	for _, w := range e.Words {
		if w == "" || len(w) > MaxLearnedWordLen {
			return fmt.Errorf("learned event carries a word of %d bytes, want 1 to %d", len(w), MaxLearnedWordLen)
		}
	}
	return nil
}

// LearnedRecord is a KH_LEARNED_WORDS value: the fold of one file's
// learned events.
type LearnedRecord struct {
	Schema   int              `json:"schema"`
	Repo     string           `json:"repo"`
	Path     string           `json:"path"`
	Sections []LearnedSection `json:"sections,omitempty"`
	// Revoked lists the transcripts revoked for this file, so that a
	// replayed or late event of theirs teaches nothing.
	Revoked []string `json:"revoked,omitempty"`
}

// LearnedSection is what transcripts taught one section.
type LearnedSection struct {
	HeadingPath []string          `json:"heading_path"`
	Words       []TranscriptWords `json:"words"`
}

// TranscriptWords are the words one transcript taught a section.
type TranscriptWords struct {
	TranscriptID string   `json:"transcript_id"`
	Words        []string `json:"words"`
}

// Apply folds e into r and reports whether r changed. A learned event
// replaces what its transcript taught the section (a repeat changes
// nothing); a revocation removes its transcript from every section and
// remembers it.
func (r *LearnedRecord) Apply(e *LearnedEvent) bool {
	if slices.Contains(r.Revoked, e.TranscriptID) {
		return false
	}
	if e.Op == LearnedRevoke {
		r.Revoked = append(r.Revoked, e.TranscriptID)
		for i := range r.Sections {
			s := &r.Sections[i]
			s.Words = slices.DeleteFunc(s.Words, func(tw TranscriptWords) bool { return tw.TranscriptID == e.TranscriptID })
		}
		r.Sections = slices.DeleteFunc(r.Sections, func(s LearnedSection) bool { return len(s.Words) == 0 })
		return true
	}
	i := slices.IndexFunc(r.Sections, func(s LearnedSection) bool { return slices.Equal(s.HeadingPath, e.HeadingPath) })
	if i < 0 {
		if len(r.Sections) >= MaxLearnedSections {
			return false
		}
		r.Sections = append(r.Sections, LearnedSection{HeadingPath: slices.Clone(e.HeadingPath)})
		i = len(r.Sections) - 1
	}
	s := &r.Sections[i]
	tw := TranscriptWords{TranscriptID: e.TranscriptID, Words: slices.Clone(e.Words)}
	if j := slices.IndexFunc(s.Words, func(tw TranscriptWords) bool { return tw.TranscriptID == e.TranscriptID }); j >= 0 {
		if slices.Equal(s.Words[j].Words, tw.Words) {
			return false
		}
		s.Words[j] = tw
		return true
	}
	s.Words = append(s.Words, tw)
	return true
}

// Words returns every word taught to the section at headingPath, one entry
// per transcript that taught it, or nil.
func (r *LearnedRecord) Words(headingPath []string) []string {
	if r == nil {
		return nil
	}
	for _, s := range r.Sections {
		if slices.Equal(s.HeadingPath, headingPath) {
			var out []string
			for _, tw := range s.Words {
				out = append(out, tw.Words...)
			}
			return out
		}
	}
	return nil
}

// Taught reports whether transcript id taught the file anything.
func (r *LearnedRecord) Taught(id string) bool {
	for _, s := range r.Sections {
		for _, tw := range s.Words {
			if tw.TranscriptID == id {
				return true
			}
		}
	}
	return false
}
