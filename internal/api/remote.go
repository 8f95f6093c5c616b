package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
)

// Remote is Ops over the kh.* micro endpoints of a running knowhub, for
// clients in another process (`knowhub mcp`). NATS trusts its callers, so
// Remote itself keeps its client within Scopes, as a token's scopes keep
// an HTTP caller: searches and feedback see the public entries and those
// of Scopes, and saves follow saveScopes.
type Remote struct {
	NC *nats.Conn
	// Scopes are the knowledge scopes the client acts with.
	Scopes []string
	// Timeout bounds a request whose ctx has no deadline (default 10s).
	Timeout time.Duration
}

// SearchDocs asks kh.search.docs.
func (r *Remote) SearchDocs(ctx context.Context, req contract.SearchRequest) (*contract.SearchResponse, error) {
	var resp contract.SearchResponse
	return &resp, r.request(ctx, contract.SubjectSearchDocs, req, &resp)
}

// ListRepos asks kh.docs.repos.
func (r *Remote) ListRepos(ctx context.Context, _ struct{}) (*contract.DocsReposResponse, error) {
	var resp contract.DocsReposResponse
	return &resp, r.request(ctx, contract.SubjectDocsRepos, struct{}{}, &resp)
}

// ListPages asks kh.docs.pages.
func (r *Remote) ListPages(ctx context.Context, req contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
	var resp contract.DocsPagesResponse
	return &resp, r.request(ctx, contract.SubjectDocsPages, req, &resp)
}

// ReadDocs asks kh.docs.read.
func (r *Remote) ReadDocs(ctx context.Context, req contract.DocsReadRequest) (*contract.DocsReadResponse, error) {
	var resp contract.DocsReadResponse
	return &resp, r.request(ctx, contract.SubjectReadDocs, req, &resp)
}

// SearchTools asks kh.search.tools.
func (r *Remote) SearchTools(ctx context.Context, req contract.ToolSearchRequest) (*contract.ToolSearchResponse, error) {
	var resp contract.ToolSearchResponse
	return &resp, r.request(ctx, contract.SubjectSearchTools, req, &resp)
}

// SearchKB asks kh.search.kb with the configured scopes.
func (r *Remote) SearchKB(ctx context.Context, req kb.SearchRequest) (*kb.SearchResponse, error) {
	req.Scopes = r.Scopes
	var resp kb.SearchResponse
	return &resp, r.request(ctx, contract.SubjectSearchKB, req, &resp)
}

// SaveKB asks kh.kb.save with the scopes saveScopes allows: the ones
// asked for if Scopes hold them, all of Scopes if none are asked for.
func (r *Remote) SaveKB(ctx context.Context, req kb.SaveRequest) (*kb.SaveResponse, error) {
	scopes, err := saveScopes(&Caller{Name: "knowhub mcp", Scopes: r.Scopes}, req.Scopes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrForbidden, err)
	}
	req.Scopes = scopes
	var resp kb.SaveResponse
	return &resp, r.request(ctx, contract.SubjectKBSave, req, &resp)
}

// FeedbackKB asks kh.kb.update, for feedback only, on an entry that
// kh.kb.get shows with Scopes.
func (r *Remote) FeedbackKB(ctx context.Context, req kb.UpdateRequest) (*kb.UpdateResponse, error) {
	if req.Action != kb.ActionFeedback && req.Action != kb.ActionRevise {
		return nil, fmt.Errorf("%w: only feedback and revisions are allowed here", ErrForbidden)
	}
	var entry kb.Entry
	if err := r.request(ctx, contract.SubjectKBGet, contract.KBGetRequest{ID: req.ID, Scopes: r.Scopes}, &entry); err != nil {
		return nil, err
	}
	var resp kb.UpdateResponse
	return &resp, r.request(ctx, contract.SubjectKBUpdate, req, &resp)
}

// request sends req as JSON and decodes the reply into resp. A service
// error comes back with the error class of its code (ErrBadRequest, ...)
// so that it reads the same as in process.
func (r *Remote) request(ctx context.Context, subject string, req, resp any) error {
	if _, ok := ctx.Deadline(); !ok {
		timeout := r.Timeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if !r.NC.IsConnected() {
		return fmt.Errorf("%w: the NATS connection is %s; start knowhub (knowhub up) or check --nats-url", errMCPUnreachable, r.NC.Status())
	}
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	msg, err := r.NC.RequestWithContext(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: nothing answers %s on %s; is knowhub up running there?", errMCPUnreachable, subject, r.NC.ConnectedUrlRedacted())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%w: no reply on %s in time", ErrUnavailable, subject)
	case err != nil:
		return fmt.Errorf("%w: request %s: %v", errMCPUnreachable, subject, err)
	}
	if e := msg.Header.Get(micro.ErrorHeader); e != "" {
		code, _ := strconv.Atoi(msg.Header.Get(micro.ErrorCodeHeader))
		class := classOf(code)
		return fmt.Errorf("%w: %s", class, strings.TrimPrefix(e, class.Error()+": "))
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("decode reply of %s: %w", subject, err)
	}
	return nil
}

// classOf is the error class of a service error code, the inverse of
// StatusOf.
func classOf(code int) error {
	for _, c := range []error{ErrBadRequest, ErrUnavailable, ErrNotFound, ErrForbidden, ErrTooLarge} {
		if StatusOf(c) == code {
			return c
		}
	}
	return errors.New("knowhub error " + strconv.Itoa(code))
}
