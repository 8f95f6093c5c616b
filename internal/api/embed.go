package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/engine"
)

// QueryEmbedder embeds a docs query (embedding.Client is one). It must be
// safe for concurrent use.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, q string) ([]float32, error)
}

// Defaults of query embedding.
const (
	DefaultEmbedTimeout = time.Second
	// embedPause is how long queries skip the endpoint after it failed,
	// so that an endpoint that is down costs one query a timeout, not
	// every query.
	embedPause = 10 * time.Second
)

// queryEmbedder embeds queries with a short timeout and stands aside for
// a while after a failure.
type queryEmbedder struct {
	e       QueryEmbedder
	timeout time.Duration
	failed  atomic.Int64 // unix nanoseconds of the latest failure
}

// embed sets sr.Embedding when the endpoint answers in time; otherwise the
// search stays lexical and the reason is logged without the query.
func (s *Service) embed(ctx context.Context, sr *contract.SearchRequest) {
	qe := s.embedder
	if qe == nil || (sr.Semantic != nil && !*sr.Semantic) {
		return
	}
	// A query the engine will refuse is not sent.
	if strings.TrimSpace(sr.Query) == "" || len(sr.Query) > engine.MaxQueryBytes || !utf8.ValidString(sr.Query) {
		return
	}
	if t := qe.failed.Load(); t != 0 && time.Since(time.Unix(0, t)) < embedPause {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, qe.timeout)
	defer cancel()
	vec, err := qe.e.EmbedQuery(ctx, sr.Query)
	if err != nil {
		qe.failed.Store(time.Now().UnixNano())
		s.log.Warn("embed query; answering lexically", "err", embedReason(err), "pause", embedPause)
		return
	}
	qe.failed.Store(0)
	sr.Embedding = vec
}

// embedReason names why embedding failed without what the endpoint
// echoed of the query.
func embedReason(err error) string {
	var se *embedding.StatusError
	if errors.As(err, &se) {
		return fmt.Sprintf("embeddings endpoint answered HTTP %d", se.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "embeddings endpoint did not answer in time"
	}
	return err.Error()
}
