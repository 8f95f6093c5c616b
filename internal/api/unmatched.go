package api

import (
	"fmt"
	"net/http"
	"strings"
)

// jsonUnmatched answers requests that match no route as every other
// error is answered, in JSON: 404 for an unknown path, 405 (with Allow)
// for a known path and another method. The mux's own answers are plain
// text.
func jsonUnmatched(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &headerProbe{h: http.Header{}}
		h.ServeHTTP(probe, r)
		switch probe.code {
		case http.StatusMethodNotAllowed:
			allow := probe.h.Get("Allow")
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.ReplaceAll(allow, ",", ", ")))
		case http.StatusNotFound, 0:
			writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
		default:
			// A redirect (a path cleaned by the mux) or anything else the
			// mux decides: let it answer as it does.
			mux.ServeHTTP(w, r)
		}
	})
}

// headerProbe records the status and headers a handler would send,
// discarding its body.
type headerProbe struct {
	h    http.Header
	code int
}

func (p *headerProbe) Header() http.Header { return p.h }

func (p *headerProbe) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *headerProbe) Write(b []byte) (int, error) {
	if p.code == 0 {
		p.code = http.StatusOK
	}
	return len(b), nil
}
