package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/transcript"
)

// Extract takes a raw transcript, sanitizes it and stores it for the
// extractor; extraction itself is asynchronous. Malformed or oversize
// transcripts are rejected and nothing is stored.
func (s *Service) Extract(ctx context.Context, raw []byte) (*contract.ExtractReply, error) {
	return s.extractScoped(ctx, raw, nil)
}

// extractScoped is Extract for a sender whose entries must stay within
// scopes (see transcript.Store).
func (s *Service) extractScoped(ctx context.Context, raw []byte, scopes []string) (*contract.ExtractReply, error) {
	if s.intake == nil {
		return nil, fmt.Errorf("%w: no transcript intake", ErrUnavailable)
	}
	if err := checkText(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, err := transcript.Store(ctx, s.js, s.intake, raw, scopes)
	switch {
	case errors.Is(err, transcript.ErrTooLarge):
		return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
	case errors.Is(err, transcript.ErrInvalid):
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return reply, nil
}

// MaxExtractWait caps the wait of POST /api/extract?wait=.
const MaxExtractWait = 30 * time.Second

// DefaultExtractWait is how long POST /api/extract waits for the
// extraction when the request names no wait: the rules extractor is done
// well within it, so the reply carries extracted_count, and a gateway
// uploading at the end of a run (which gets a few seconds) is not held up
// for long. wait=0 answers at once.
const DefaultExtractWait = 1500 * time.Millisecond

// AwaitExtraction waits, at most wait and while ctx lives, for the
// extractor to record what the transcript id yielded (KH_EXTRACTIONS), and
// completes reply with it: status extracted with the count and ids, or
// pending when the wait ran out first. A duplicate transcript finds the
// record of its first intake at once. Within the same wait, the reply
// comes once the entries are searchable.
func (s *Service) AwaitExtraction(ctx context.Context, reply *contract.ExtractReply, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	kv, err := s.js.KeyValue(ctx, contract.BucketExtractions)
	if err != nil {
		return fmt.Errorf("%w: open bucket %s: %v", ErrUnavailable, contract.BucketExtractions, err)
	}
	watcher, err := kv.Watch(ctx, reply.TranscriptID)
	if err != nil {
		return fmt.Errorf("%w: watch extraction of %s: %v", ErrUnavailable, reply.TranscriptID, err)
	}
	defer func() { _ = watcher.Stop() }()
	reply.Status = contract.ExtractPending
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-watcher.Updates():
			if !ok {
				return nil
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue // nil marks the end of the current values
			}
			var done contract.Extraction
			if err := json.Unmarshal(e.Value(), &done); err != nil {
				return fmt.Errorf("decode extraction of %s: %w", reply.TranscriptID, err)
			}
			n := len(done.IDs)
			reply.Status, reply.ExtractedCount, reply.IDs = contract.ExtractDone, &n, done.IDs
			if done.Seq > 0 {
				s.engine.WaitApplied(ctx, contract.CollectionKB, done.Seq)
			}
			return nil
		}
	}
}

// waitParam reads the wait parameter: a duration such as 5s or 1500ms, or
// a number of seconds, capped at MaxExtractWait.
func waitParam(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseFloat(v, 64)
		if nerr != nil {
			return 0, errors.New("wait must be a duration such as 5s or a number of seconds")
		}
		d = time.Duration(n * float64(time.Second))
	}
	if d < 0 {
		return 0, errors.New("wait must not be negative")
	}
	return min(d, MaxExtractWait), nil
}

// ErrTooLarge marks a request over a size limit.
var ErrTooLarge = errors.New("too large")

func (s *Service) handleExtract(ctx context.Context) micro.HandlerFunc {
	return func(req micro.Request) {
		reply, err := s.Extract(ctx, req.Data())
		if err != nil {
			_ = req.Error(strconv.Itoa(StatusOf(err)), err.Error(), nil)
			return
		}
		_ = req.RespondJSON(reply)
	}
}

func (s *Service) httpExtract(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("transcript over %d bytes", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, err)
		return
	}
	wait := DefaultExtractWait
	if v, ok := r.URL.Query()["wait"]; ok && len(v) > 0 {
		if wait, err = waitParam(v[0]); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
	}
	// A token's transcript yields entries within the token's scopes.
	scopes, err := saveScopes(CallerFrom(r.Context()), nil)
	if err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	reply, err := s.extractScoped(r.Context(), raw, scopes)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	if wait > 0 {
		if err := s.AwaitExtraction(r.Context(), reply, wait); err != nil {
			writeError(w, StatusOf(err), err)
			return
		}
	}
	status := http.StatusAccepted
	if reply.Status == contract.ExtractDone {
		status = http.StatusOK
	}
	writeJSON(w, status, reply)
}
