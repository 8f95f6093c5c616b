// Package embedtest serves OpenAI's /v1/embeddings protocol from
// knowhub's own word table (package semantic): each input's vector is the
// pooled vector of its index terms. It is for tests and measurement: a
// real HTTP server that speaks the protocol, with vectors good enough to
// tell a paraphrase from an unrelated text.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/knowhub/knowhub/internal/analysis"
	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/semantic"
)

// Model is the model name the server reports.
const Model = "knowhub-wordvec"

// Reject is refused with 400 when an input holds it, as an endpoint
// refuses an input it cannot embed.
const Reject = "EMBEDTEST-REJECT"

// Server is a running embeddings server.
type Server struct {
	*httptest.Server
	// Down, while true, makes every request fail with 503.
	Down atomic.Bool
	// Requests and Inputs count the requests answered and their inputs;
	// Failed counts the requests refused while Down.
	Requests, Inputs, Failed atomic.Int64
	// Key, when set, is the bearer token every request must carry.
	Key string
	an  *analysis.Analyzer
	t   *semantic.Table
}

// New starts a server; Close stops it. Its BaseURL is URL + "/v1".
func New() *Server {
	s := &Server{an: analysis.New(), t: semantic.Default()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.Server = httptest.NewServer(mux)
	return s
}

// BaseURL is the API root to configure.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Vector returns the server's vector of text: its terms' pooled vector,
// unit length, or zeros.
func (s *Server) Vector(text string) []float32 {
	p := s.t.NewPool()
	for _, term := range s.an.AppendTerms(nil, text) {
		p.Add(term, 1)
	}
	if v := p.Unit(); v != nil {
		return v
	}
	return make([]float32, s.t.Dim())
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	if s.Down.Load() {
		s.Failed.Add(1)
		http.Error(w, `{"error":{"message":"model is loading"}}`, http.StatusServiceUnavailable)
		return
	}
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		http.Error(w, `{"error":{"message":"bad api key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"want a model and an input"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil || len(inputs) == 0 {
		http.Error(w, `{"error":{"message":"input: want a string or a list of strings"}}`, http.StatusBadRequest)
		return
	}
	var reply embedding.Reply
	reply.Object, reply.Model = "list", req.Model
	for i, in := range inputs {
		if strings.Contains(in, Reject) {
			http.Error(w, `{"error":{"message":"input cannot be embedded"}}`, http.StatusBadRequest)
			return
		}
		d := reply.Data
		d = append(d, struct {
			Object    string    `json:"object,omitempty"`
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}{"embedding", s.Vector(in), i})
		reply.Data = d
		reply.Usage.PromptTokens += len(strings.Fields(in))
	}
	reply.Usage.TotalTokens = reply.Usage.PromptTokens
	s.Requests.Add(1)
	s.Inputs.Add(int64(len(inputs)))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}
