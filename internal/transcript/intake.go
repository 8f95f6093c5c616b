package transcript

import (
	"errors"
	"fmt"
)

// Config configures the intake.
type Config struct {
	// Privacy is strict (the default) or relaxed.
	Privacy PrivacyMode `json:"privacyMode,omitempty"`
	// Limits bound the transcripts Parse accepts.
	Limits Limits `json:"limits,omitzero"`
}

// Validate reports every problem of the configuration, or nil.
func (c Config) Validate() error {
	var errs []error
	if _, err := ParsePrivacyMode(string(c.Privacy)); err != nil {
		errs = append(errs, fmt.Errorf("privacyMode: %w", err))
	}
	if c.Limits.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("limits.maxBytes: %d is negative", c.Limits.MaxBytes))
	}
	if c.Limits.MaxMessages < 0 {
		errs = append(errs, fmt.Errorf("limits.maxMessages: %d is negative", c.Limits.MaxMessages))
	}
	return errors.Join(errs...)
}

// Intake turns an intake payload into a sanitized transcript and its id.
// It is immutable and safe for concurrent use.
type Intake struct {
	mode   PrivacyMode
	limits Limits
	san    *Sanitizer
}

// NewIntake checks cfg and returns an intake that sanitizes with san.
func NewIntake(cfg Config, san *Sanitizer) (*Intake, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("transcript config: %w", err)
	}
	if san == nil {
		return nil, errors.New("transcript: a sanitizer is required")
	}
	mode, _ := ParsePrivacyMode(string(cfg.Privacy))
	return &Intake{mode: mode, limits: cfg.Limits.withDefaults(), san: san}, nil
}

// Privacy returns the privacy mode the intake sanitizes in.
func (in *Intake) Privacy() PrivacyMode { return in.mode }

// Prepare parses and sanitizes an intake payload and returns the sanitized
// transcript and its id. Only the sanitized transcript may be persisted or
// passed on. Errors wrap ErrInvalid.
func (in *Intake) Prepare(data []byte) (*Transcript, string, error) {
	t, err := Parse(data, in.limits)
	if err != nil {
		return nil, "", err
	}
	t = in.san.Transcript(t, in.mode)
	return t, ID(t), nil
}

// Text sanitizes text found in or derived from a transcript as the
// intake sanitizes transcripts.
func (in *Intake) Text(s string) string { return in.san.Text(s, in.mode) }

// Sanitize sanitizes a transcript again, as Prepare did when it was
// received: a transcript read back from KH_TRANSCRIPTS may have been
// written there by a producer that did not.
func (in *Intake) Sanitize(t *Transcript) *Transcript { return in.san.Transcript(t, in.mode) }
