package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Requests that match no route get JSON errors like every other one.
func TestUnmatchedRoutesAnswerJSON(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]int{"n": 1}) })
	mux.HandleFunc("POST /api/tools", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]int{"n": 2}) })
	srv := httptest.NewServer(jsonUnmatched(mux))
	defer srv.Close()
	for _, c := range []struct {
		method, path string
		code         int
		says, allow  string
	}{
		{"GET", "/api/nothing", http.StatusNotFound, "no such endpoint: GET /api/nothing", ""},
		{"DELETE", "/api/stats", http.StatusMethodNotAllowed, "DELETE is not allowed on /api/stats", "GET, HEAD"},
		{"GET", "/api/tools", http.StatusMethodNotAllowed, "allowed: POST", "POST"},
		{"GET", "/api/stats", http.StatusOK, "", ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.code || err != nil {
			t.Errorf("%s %s: %d, JSON error %v; want %d and JSON", c.method, c.path, resp.StatusCode, err, c.code)
			continue
		}
		if c.says != "" {
			if msg, _ := body["error"].(string); !strings.Contains(msg, c.says) {
				t.Errorf("%s %s: error %q does not say %q", c.method, c.path, msg, c.says)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
			}
		}
		if c.allow != "" && resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, resp.Header.Get("Allow"), c.allow)
		}
	}
}
