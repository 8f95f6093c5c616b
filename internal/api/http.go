package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
)

// Handler returns the HTTP API of the service: known hosts, same-origin
// writes and JSON bodies only (browserGuard), bearer-token
// authentication, bounded bodies, JSON errors.
func (s *Service) Handler() http.Handler {
	return s.metrics.instrument(s.guard.wrap(s.auth.middleware(s.cfg.MaxBodyBytes, recordPattern(jsonUnmatched(s.routes())))))
}

func (s *Service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.httpReadyz)
	mux.HandleFunc("GET /api/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.stats())
	})
	mux.HandleFunc("GET /api/status", s.httpStatus)
	mux.Handle("GET /metrics", s.metrics.Handler())
	s.webRoutes(mux)
	mux.HandleFunc("GET /api/docs/search", s.httpSearchDocs)
	mux.HandleFunc("GET /api/docs/read", s.httpReadDocs)
	mux.HandleFunc("GET /api/docs/repos", func(w http.ResponseWriter, r *http.Request) {
		resp, _ := s.ListRepos(r.Context(), struct{}{})
		writeJSON(w, http.StatusOK, resp)
	})
	mux.HandleFunc("GET /api/docs/pages", s.httpListPages)
	mux.HandleFunc("GET /api/tools/search", s.httpSearchTools)
	mux.HandleFunc("POST /api/tools", s.httpUpsertTools)
	mux.HandleFunc("DELETE /api/tools/{name}", s.httpRemoveTool)
	s.kbRoutes(mux)
	mux.HandleFunc("POST /api/extract", s.httpExtract)
	mux.Handle("/mcp", checkedBody(s.mcpHandler()))
	return mux
}

// Readiness is the body of GET /readyz. Status is "ready" with 200 while
// the node answers searches, and State tells whether it answers from the
// complete index or, during its initial sync, from a partial one; any
// other status comes with 503 and Error says why.
type Readiness struct {
	Status   string `json:"status"`
	State    string `json:"state"`
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
}

// Readiness states.
const (
	StateLoading  = "loading"  // the index has not loaded: 503
	StateServing  = "serving"  // searches answer from a partial index: 200
	StateComplete = "complete" // the initial sync is indexed: 200
	StateStalled  = "stalled"  // a problem (disk full, damaged store) blocks progress: 503
)

func (s *Service) httpReadyz(w http.ResponseWriter, r *http.Request) {
	rd := Readiness{Status: "ready", State: StateServing, Complete: s.Complete()}
	if rd.Complete {
		rd.State = StateComplete
	}
	problem := s.Problem()
	if problem == "" {
		problem = s.Integrity()
	}
	switch {
	case !s.IsReady():
		rd = Readiness{Status: "unavailable", State: StateLoading, Error: "index is still loading"}
	case problem != "":
		rd.Status, rd.State, rd.Error = "unavailable", StateStalled, problem
	}
	code := http.StatusOK
	if rd.Status != "ready" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

func (s *Service) httpSearchTools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := contract.ToolSearchRequest{Query: q.Get("q"), Type: q.Get("type"), Instance: q.Get("instance"), Detail: q.Get("detail")}
	if req.Query == "" {
		req.Query = q.Get("query")
	}
	var err error
	if req.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if req.Semantic, err = semanticParam(q.Get("semantic")); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if !s.IsReady() {
		writeError(w, http.StatusServiceUnavailable, errors.New("index is still loading"))
		return
	}
	resp, err := s.SearchTools(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// ToolsWriteScope lets a token change the tool catalog.
const ToolsWriteScope = "tools:write"

// canWriteTools reports whether the caller may change the catalog,
// answering 403 itself when not.
func canWriteTools(w http.ResponseWriter, r *http.Request) bool {
	c := CallerFrom(r.Context())
	if c.Trusted || slices.Contains(c.Scopes, ToolsWriteScope) {
		return true
	}
	writeError(w, http.StatusForbidden, fmt.Errorf("changing tools needs the %s scope", ToolsWriteScope))
	return false
}

func (s *Service) httpUpsertTools(w http.ResponseWriter, r *http.Request) {
	if !canWriteTools(w, r) {
		return
	}
	var req contract.ToolsUpsertRequest
	if !readJSON(w, r, &req) {
		return
	}
	resp, err := s.UpsertTools(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Service) httpRemoveTool(w http.ResponseWriter, r *http.Request) {
	if !canWriteTools(w, r) {
		return
	}
	resp, err := s.RemoveTools(r.Context(), contract.ToolsRemoveRequest{Names: []string{r.PathValue("name")}})
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// readJSON decodes a JSON body (bounded by the middleware) with
// decodeBody, answering 413 or 400 itself.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	data, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := decodeBody(data, v, false); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return false
	}
	return true
}

func (s *Service) httpSearchDocs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := contract.SearchRequest{Query: q.Get("q")}
	if req.Query == "" {
		req.Query = q.Get("query")
	}
	var err error
	if req.TopK, err = intParam(q.Get("top_k"), "top_k"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if v, err := intParam(q.Get("min_seq"), "min_seq"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	} else {
		req.MinSeq = uint64(v)
	}
	switch v := q.Get("content"); v {
	case "", "0", "false":
	case "1", "true":
		req.Content = true
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("content must be 1, true, 0 or false, not %q", v))
		return
	}
	if req.Semantic, err = semanticParam(q.Get("semantic")); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	req.Group = q.Get("group")
	req.Lang = q.Get("lang")
	if req.MaxTokens, err = intParam(q.Get("max_tokens"), "max_tokens"); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	for _, r := range q["repo"] {
		for _, name := range strings.Split(r, ",") {
			if name = strings.TrimSpace(name); name != "" {
				req.Repos = append(req.Repos, name)
			}
		}
	}
	if !s.IsReady() {
		writeError(w, http.StatusServiceUnavailable, errors.New("index is still loading"))
		return
	}
	resp, err := s.SearchDocs(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// semanticParam reads the semantic switch of a search: nil when unset.
func semanticParam(v string) (*bool, error) {
	switch v {
	case "":
		return nil, nil
	case "1", "true":
		on := true
		return &on, nil
	case "0", "false":
		off := false
		return &off, nil
	}
	return nil, fmt.Errorf("semantic must be 1, true, 0 or false, not %q", v)
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errors.New(name + " must be a non-negative integer")
	}
	return n, nil
}

// numberParam parses a non-negative number ("3", "3.5"), or zero when v
// is empty.
func numberParam(v, name string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New(name + " must be a non-negative number")
	}
	return f, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := encodeReply(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"encode reply"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, contract.ErrorResponse{Error: err.Error()})
}

// httpReadDocs reads a section by id (a hit's chunk_id), with context=
// section, neighbours or page, or a page by repo and path.
func (s *Service) httpReadDocs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	resp, err := s.ReadDocs(r.Context(), contract.DocsReadRequest{ID: q.Get("id"), Repo: q.Get("repo"), Path: q.Get("path"), Context: q.Get("context")})
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// httpListPages lists a repository's pages: repo, offset and limit.
func (s *Service) httpListPages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := contract.DocsPagesRequest{Repo: q.Get("repo")}
	var err error
	if req.Offset, err = intParam(q.Get("offset"), "offset"); err == nil {
		req.Limit, err = intParam(q.Get("limit"), "limit")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	resp, err := s.ListPages(r.Context(), req)
	if err != nil {
		writeError(w, StatusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
