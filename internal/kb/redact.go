package kb

// Redactor replaces secrets in text; *redact.Redactor is one.
type Redactor interface {
	String(s string) string
}

// RedactSave redacts every free-text field of a save request in place.
// kh.kb.save does it before the request's first publish, and the indexer
// again before it folds a saved event, since a producer that writes into
// KH_KNOWLEDGE directly may not have.
func RedactSave(r *SaveRequest, red Redactor) {
	r.Task = red.String(r.Task)
	r.Content = red.String(r.Content)
	r.Owner = red.String(r.Owner)
	r.Source.Name = red.String(r.Source.Name)
	r.Source.Category = red.String(r.Source.Category)
	for i, u := range r.Source.URLs {
		r.Source.URLs[i] = red.String(u)
	}
}

// Clean makes an event from KH_KNOWLEDGE safe to fold, whoever wrote it:
// its free text redacted (the save, the feedback case, the reasons) and a
// save that screening flags quarantined, as kh.kb.save would have saved
// it. Both steps are idempotent, so an event kh.kb.save wrote comes out
// as it went in.
func Clean(ev *Event, red Redactor, screen *Screen) {
	if s := ev.Save; s != nil {
		RedactSave(s, red)
		if ev.Quarantine == "" && screen != nil {
			if reason, flagged := screen.CheckSave(s); flagged {
				ev.Quarantine = reason
			}
		}
	}
	if c := ev.Case; c != nil {
		c.Task = red.String(c.Task)
		c.Outcome = red.String(c.Outcome)
		c.Reason = red.String(c.Reason)
	}
	ev.Reason = red.String(ev.Reason)
	ev.Quarantine = red.String(ev.Quarantine)
}
