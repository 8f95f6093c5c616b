package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/extractor"
)

// Extract takes a raw transcript, sanitizes it and stores it for the
// extractor; extraction itself is asynchronous. Malformed or oversize
// transcripts are rejected and nothing is stored.
func (s *Service) Extract(ctx context.Context, raw []byte) (*contract.ExtractReply, error) {
	return s.extractScoped(ctx, raw, nil)
}

// extractScoped is Extract for a sender whose entries must stay within
// scopes (see extractor.StoreScoped).
func (s *Service) extractScoped(ctx context.Context, raw []byte, scopes []string) (*contract.ExtractReply, error) {
	if s.pipe == nil {
		return nil, fmt.Errorf("%w: no transcript pipeline", ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, err := extractor.StoreScoped(ctx, s.js, s.pipe, raw, scopes)
	switch {
	case errors.Is(err, extractor.ErrTooLarge):
		return nil, fmt.Errorf("%w: %v", ErrTooLarge, err)
	case errors.Is(err, extractor.ErrInvalid):
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return reply, nil
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
	writeJSON(w, http.StatusAccepted, reply)
}
