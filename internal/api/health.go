package api

import (
	"errors"
	"net/http"

	"github.com/nats-io/nats.go"
)

// WorkerHandler is the health and metrics listener of a worker process
// that serves no API (watcher, chunker, indexer, extractor): /metrics
// (runtime, build and, when m reads JetStream, the pipeline's position),
// /healthz (the process answers) and /readyz (its NATS connection is up
// and ready reports no problem). Every other path is a JSON 404.
func WorkerHandler(m *Metrics, nc *nats.Conn, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if st := nc.Status(); st != nats.CONNECTED {
			writeError(w, http.StatusServiceUnavailable, errors.New("NATS connection is "+st.String()))
			return
		}
		if ready != nil {
			if err := ready(); err != nil {
				writeError(w, http.StatusServiceUnavailable, err)
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	return jsonUnmatched(mux)
}
