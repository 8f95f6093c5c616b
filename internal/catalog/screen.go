package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
)

// Screener flags prompt injection in text; *kb.Screen is one.
type Screener interface {
	Check(text string) (reason string, flagged bool)
}

// Screen checks the text of every tool that agents are served (the
// description, the keywords and every string of the input schema) for
// prompt injection, and returns an error naming each tool, field and
// reason flagged, or nil. A tool has no quarantine: a flagged one is
// refused.
func Screen(tools []contract.Tool, sc Screener) error {
	var errs []error
	for i, t := range tools {
		flag := func(field, text string) bool {
			reason, ok := sc.Check(text)
			if ok {
				errs = append(errs, fmt.Errorf("tools[%d] (%q).%s: reads as %s; a tool's text is served to agents, so the tool is refused", i, t.Name, field, reason))
			}
			return ok
		}
		flag("description", t.Description)
		if len(t.Keywords) > 0 {
			flag("keywords", strings.Join(t.Keywords, "\n"))
		}
		if len(t.InputSchema) > 0 {
			// One reason per schema is enough to refuse it.
			done := false
			_, _ = mapStrings(t.InputSchema, func(s string) string {
				if !done {
					done = flag("input_schema", s)
				}
				return s
			})
		}
	}
	return errors.Join(errs...)
}
