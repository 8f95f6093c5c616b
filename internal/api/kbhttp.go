package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
)

// The knowledge HTTP API, in the shapes the OpenClaw KnowHub plugin calls.
func (s *Service) kbRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/knowledge/search", s.httpSearchKB)
	mux.HandleFunc("POST /api/knowledge", s.httpSaveKB)
	mux.HandleFunc("GET /api/knowledge/review", s.httpReviewKB)
	mux.HandleFunc("GET /api/knowledge/{id}", s.httpGetKB)
	mux.HandleFunc("PUT /api/knowledge/{id}", s.httpFeedbackKB)
	mux.HandleFunc("POST /api/knowledge/{id}/release", s.httpModerateKB(kb.ActionRelease))
	mux.HandleFunc("POST /api/knowledge/{id}/revoke", s.httpModerateKB(kb.ActionRevoke))
	mux.HandleFunc("POST /api/knowledge/{id}/revise", s.httpReviseKB)
}

// reviseBody is the body of POST /api/knowledge/{id}/revise.
type reviseBody struct {
	Content string `json:"content"`
	Task    string `json:"task,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// httpReviseKB saves a revision of an entry that was partly right: a new
// entry with the corrected content replaces it.
func (s *Service) httpReviseKB(w http.ResponseWriter, r *http.Request) {
	var body reviseBody
	if !readJSON(w, r, &body) {
		return
	}
	scopes, all := callerScopes(r)
	resp, err := s.UpdateKB(r.Context(), kb.UpdateRequest{ID: r.PathValue("id"), Action: kb.ActionRevise, Content: body.Content, Task: body.Task, Reason: body.Reason},
		scopes, all)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// callerScopes are the scopes a request acts with, and whether it sees
// every scope. A token's caller acts with the token's scopes; the scopes
// parameter can only narrow them, never widen them. A trusted caller of
// an open API acts with the scopes it names, or, naming none, sees every
// scope: on a local node without tokens, what an agent saved or what was
// extracted from its transcripts is found by plain requests.
func callerScopes(r *http.Request) (scopes []string, all bool) {
	c := CallerFrom(r.Context())
	asked := splitList(r.URL.Query()["scopes"])
	if c.Trusted {
		return asked, len(asked) == 0
	}
	if len(asked) == 0 {
		return c.Scopes, false
	}
	var narrowed []string
	for _, s := range asked {
		if slices.Contains(c.Scopes, s) && !slices.Contains(narrowed, s) {
			narrowed = append(narrowed, s)
		}
	}
	return narrowed, false
}

func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// KBSearchHTTP is the reply of GET /api/knowledge/search.
type KBSearchHTTP struct {
	Count   int      `json:"count"`
	Total   int      `json:"total"`
	Results []kb.Hit `json:"results"`
	Prompt  string   `json:"prompt,omitempty"`
	contract.Completeness
}

func (s *Service) httpSearchKB(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := kb.SearchRequest{Query: q.Get("q"), Types: splitList(q["types"]), Format: q.Get("format")}
	req.Scopes, req.AllScopes = callerScopes(r)
	if req.Query == "" {
		req.Query = q.Get("query")
	}
	var err error
	if req.Limit, err = intParam(q.Get("top_k"), "top_k"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if req.MinScore, err = numberParam(q.Get("min_score"), "min_score"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	minSeq, err := intParam(q.Get("min_seq"), "min_seq")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	req.MinSeq = uint64(minSeq)
	if !s.IsReady() {
		writeError(w, http.StatusServiceUnavailable, errors.New("index is still loading"))
		return
	}
	resp, err := s.SearchKB(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	out := KBSearchHTTP{Count: len(resp.Hits), Total: resp.Total, Results: resp.Hits, Prompt: resp.Prompt, Completeness: resp.Completeness}
	if out.Results == nil {
		out.Results = []kb.Hit{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Service) httpSaveKB(w http.ResponseWriter, r *http.Request) {
	var req kb.SaveRequest
	if !readJSON(w, r, &req) {
		return
	}
	scopes, err := saveScopes(CallerFrom(r.Context()), req.Scopes)
	if err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	req.Scopes = scopes
	resp, err := s.SaveKB(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Service) httpGetKB(w http.ResponseWriter, r *http.Request) {
	c := CallerFrom(r.Context())
	scopes, all := callerScopes(r)
	e, err := s.GetKB(r.Context(), contract.KBGetRequest{ID: r.PathValue("id"), Scopes: scopes}, all || !c.Trusted && c.Admin())
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// feedbackBody is the body of PUT /api/knowledge/{id}.
type feedbackBody struct {
	Helpful *feedbackCase `json:"add_helpful_case,omitempty"`
	Harmful *feedbackCase `json:"add_harmful_case,omitempty"`
}

// feedbackCase is a kb.Case whose timestamp is RFC 3339 or epoch
// milliseconds (JavaScript's Date.now()).
type feedbackCase struct {
	Task      string          `json:"task,omitempty"`
	Outcome   string          `json:"outcome,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Timestamp json.RawMessage `json:"timestamp,omitempty"`
}

// parseTimestamp reads a case's timestamp: absent or null is zero (the
// event's time is used), a JSON number is epoch milliseconds, a string is
// RFC 3339.
func parseTimestamp(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, errors.New("must be an RFC 3339 time (2026-03-01T12:00:00Z) or epoch milliseconds")
	}
	ms, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || ms < 0 {
		return time.Time{}, errors.New("must be epoch milliseconds (a non-negative integer) or an RFC 3339 time")
	}
	return time.UnixMilli(ms).UTC(), nil
}

func (s *Service) httpFeedbackKB(w http.ResponseWriter, r *http.Request) {
	var body feedbackBody
	if !readJSON(w, r, &body) {
		return
	}
	if (body.Helpful == nil) == (body.Harmful == nil) {
		writeError(w, http.StatusBadRequest, errors.New(`send exactly one of "add_helpful_case" and "add_harmful_case"`))
		return
	}
	helpful := body.Helpful != nil
	fc, field := body.Helpful, "add_helpful_case"
	if !helpful {
		fc, field = body.Harmful, "add_harmful_case"
	}
	at, err := parseTimestamp(fc.Timestamp)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%s.timestamp: %w", field, err))
		return
	}
	c := &kb.Case{Task: fc.Task, Outcome: fc.Outcome, Reason: fc.Reason, Timestamp: at}
	scopes, all := callerScopes(r)
	resp, err := s.UpdateKB(r.Context(), kb.UpdateRequest{ID: r.PathValue("id"), Action: kb.ActionFeedback, Helpful: &helpful, Case: c},
		scopes, all)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Service) httpReviewKB(w http.ResponseWriter, r *http.Request) {
	if !CallerFrom(r.Context()).Admin() {
		writeError(w, http.StatusForbidden, fmt.Errorf("review needs the %s scope", AdminScope))
		return
	}
	entries, err := s.ReviewKB(r.Context())
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	if entries == nil {
		entries = []kb.Entry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(entries), "entries": entries})
}

func (s *Service) httpModerateKB(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Reason string `json:"reason"`
		}
		if r.ContentLength != 0 && !readJSON(w, r, &body) {
			return
		}
		resp, err := s.UpdateKB(r.Context(), kb.UpdateRequest{ID: r.PathValue("id"), Action: action, Reason: body.Reason},
			nil, CallerFrom(r.Context()).Admin())
		if err != nil {
			writeError(w, StatusOf(err), err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}
