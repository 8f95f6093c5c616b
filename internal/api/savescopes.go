package api

import (
	"fmt"
	"slices"
)

// saveScopes returns the scopes a caller's save is stored with. A trusted
// caller of an open API keeps what it asked for. A token's save may only
// name scopes the token holds, and one that names none gets the token's
// own scopes (its permission scope, kb:admin, aside), so that an entry is
// never visible beyond the scopes of the caller that wrote it.
func saveScopes(c *Caller, asked []string) ([]string, error) {
	if c.Trusted {
		return asked, nil
	}
	for _, sc := range asked {
		if !slices.Contains(c.Scopes, sc) {
			return nil, fmt.Errorf("scope %q is not granted to this token", sc)
		}
	}
	if len(asked) > 0 {
		return asked, nil
	}
	var own []string
	for _, sc := range c.Scopes {
		if sc != AdminScope {
			own = append(own, sc)
		}
	}
	return own, nil
}
