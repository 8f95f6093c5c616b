package api

import (
	"embed"
	"io/fs"
	"net/http"
)

// The search page: plain HTML, CSS and JavaScript, embedded in the binary
// and served without a build step. It calls the same HTTP API as every
// other client, with the bearer token the user enters.
//
//go:embed web
var webFiles embed.FS

func (s *Service) webRoutes(mux *http.ServeMux) {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(sub))
	mux.Handle("GET /ui/", pageHeaders(files))
	mux.Handle("GET /{$}", pageHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "index.html")
	})))
}

// pageHeaders keeps the page to its own origin: no inline script, no
// framing, nothing loaded from elsewhere.
func pageHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
