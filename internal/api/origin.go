package api

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// A loopback API is reachable from every page the user's browser opens.
// browserGuard, in front of every handler, keeps such pages out:
//
//   - A Host header must name this API: localhost, an IP address or one
//     of the configured names. A DNS-rebinding page reaches the API under
//     its own domain name, so its requests carry that name and are
//     refused, reads included. An IP address cannot be rebound, so every
//     one is answered: a probe may use the container's or the pod's.
//   - A write (POST, PUT, PATCH, DELETE) from another origin is refused,
//     by the standard library's CrossOriginProtection (Sec-Fetch-Site,
//     else Origin against Host). The page at / is same-origin; clients
//     that are not browsers send neither header and pass.
//   - A write with a body must say Content-Type: application/json. A
//     browser sends a cross-origin "simple request" (text/plain, no
//     preflight) without asking first; JSON it must ask for.
//
// The checks come before authentication: a token does not make a foreign
// Host or a cross-origin write acceptable, and the answers (421, 403,
// 415) tell a misconfigured client what to fix.
type browserGuard struct {
	hosts map[string]bool // lower case, no trailing dot
	cop   *http.CrossOriginProtection
}

// newBrowserGuard answers the given host names besides localhost and IP
// addresses.
func newBrowserGuard(hosts []string) *browserGuard {
	g := &browserGuard{hosts: map[string]bool{"localhost": true}, cop: http.NewCrossOriginProtection()}
	for _, h := range hosts {
		g.hosts[normalHost(h)] = true
	}
	return g
}

func (g *browserGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, ok := g.knownHost(r.Host); !ok {
			refused(w, r, http.StatusMisdirectedRequest, fmt.Errorf("this knowhub does not answer to the host %q: a DNS-rebinding page would send an unknown name; if clients reach it by that name, add it to http.allowedHosts", host))
			return
		}
		if err := g.cop.Check(r); err != nil {
			refused(w, r, http.StatusForbidden, fmt.Errorf("cross-origin %s refused: a page from another origin may not change this knowhub (%v)", r.Method, err))
			return
		}
		if writes(r) && hasBody(r) {
			if err := checkJSONType(r.Header.Get("Content-Type")); err != nil {
				refused(w, r, http.StatusUnsupportedMediaType, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// knownHost reports whether the API answers to the Host header value
// hostport, and the host it names.
func (g *browserGuard) knownHost(hostport string) (string, bool) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return hostport, false // HTTP/1.1 requires a Host
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return host, true
	}
	return host, g.hosts[normalHost(host)]
}

func normalHost(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }

// writes reports whether r may change state.
func writes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// hasBody reports whether r carries a body: a length above zero, or one
// not known in advance (chunked).
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

var errNotJSON = errors.New("a request body needs Content-Type: application/json")

// checkJSONType accepts application/json, with no charset or UTF-8.
func checkJSONType(ct string) error {
	if ct == "" {
		return errNotJSON
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return fmt.Errorf("content type %q is not accepted: %w", ct, errNotJSON)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Errorf("charset %q is not accepted: JSON bodies are UTF-8", cs)
	}
	return nil
}

// refused answers a request the guard turns away, and labels it so in
// the request metrics.
func refused(w http.ResponseWriter, r *http.Request, status int, err error) {
	if p, ok := r.Context().Value(patternKey{}).(*string); ok {
		*p = "refused"
	}
	writeError(w, status, err)
}
