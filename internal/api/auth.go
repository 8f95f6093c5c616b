package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// AdminScope lets a caller review quarantined knowledge (list, release,
// revoke).
const AdminScope = "kb:admin"

// Token is one accepted bearer token and the scopes it grants.
type Token struct {
	Name   string
	Token  string
	Scopes []string
}

// Caller is who made an HTTP request.
type Caller struct {
	Name   string
	Scopes []string
	// Trusted callers (no tokens configured: a local, open API) may name
	// their scopes in the request body.
	Trusted bool
	// id tells tokens apart even when they share a name.
	id string
}

// Admin reports whether the caller may moderate knowledge.
func (c *Caller) Admin() bool {
	if c.Trusted {
		return true
	}
	for _, s := range c.Scopes {
		if s == AdminScope {
			return true
		}
	}
	return false
}

type callerKey struct{}

// CallerFrom returns the caller the auth middleware put in ctx.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	if c == nil {
		return &Caller{}
	}
	return c
}

// authenticator checks bearer tokens in constant time. With no tokens
// configured every request is a trusted anonymous caller.
type authenticator struct {
	tokens []hashedToken
}

type hashedToken struct {
	sum    [32]byte
	id     string
	name   string
	scopes []string
}

func newAuthenticator(tokens []Token) *authenticator {
	a := &authenticator{}
	for i, t := range tokens {
		a.tokens = append(a.tokens, hashedToken{sum: sha256.Sum256([]byte(t.Token)), id: "token-" + strconv.Itoa(i), name: t.Name, scopes: t.Scopes})
	}
	return a
}

var errUnauthorized = errors.New("missing or unknown bearer token")

func (a *authenticator) caller(r *http.Request) (*Caller, error) {
	if len(a.tokens) == 0 {
		return &Caller{Name: "anonymous", Trusted: true}, nil
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil, errUnauthorized
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	var found *hashedToken
	for i := range a.tokens {
		// Compare every token so timing does not tell which one matched.
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].sum[:]) == 1 {
			found = &a.tokens[i]
		}
	}
	if found == nil {
		return nil, errUnauthorized
	}
	return &Caller{Name: found.name, Scopes: found.scopes, id: found.id}, nil
}

// middleware authenticates every request except health checks, metrics
// and the web page's static files (the page sends the token with its API
// calls), and bounds request bodies.
func (a *authenticator) middleware(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r) {
			next.ServeHTTP(w, r)
			return
		}
		c, err := a.caller(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="knowhub"`)
			writeError(w, http.StatusUnauthorized, err)
			return
		}
		if r.ContentLength > maxBody {
			writeError(w, http.StatusRequestEntityTooLarge, errors.New("request body too large"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// public reports whether r needs no token: health checks, metrics (no
// content beyond counts and repository names) and the web page's files.
func public(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch p := r.URL.Path; {
	case p == "/healthz", p == "/readyz", p == "/metrics", p == "/":
		return true
	default:
		return strings.HasPrefix(p, "/ui/")
	}
}
