package api

import (
	"fmt"
	"slices"
	"strings"
)

// saveScopes returns the scopes a caller's save is stored with. It is the
// one scope rule of every save that is not a trusted NATS request: the
// HTTP API, MCP over HTTP and `knowhub mcp`. A trusted caller of an open
// API keeps what it asked for. Any other caller may only name scopes it
// holds, and one that names none gets its own scopes (its permission
// scope, kb:admin, aside), so that an entry is never visible beyond the
// scopes of the caller that wrote it.
func saveScopes(c *Caller, asked []string) ([]string, error) {
	if c.Trusted {
		return asked, nil
	}
	var own []string
	for _, sc := range c.Scopes {
		if sc != AdminScope {
			own = append(own, sc)
		}
	}
	for _, sc := range asked {
		if !slices.Contains(c.Scopes, sc) {
			held := "none"
			if len(own) > 0 {
				held = strings.Join(own, ", ")
			}
			return nil, fmt.Errorf("scope %q is not granted to this caller (its scopes: %s)", sc, held)
		}
	}
	if len(asked) > 0 {
		return asked, nil
	}
	return own, nil
}
