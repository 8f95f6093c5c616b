package redact

import "testing"

// Redacting redacted text changes nothing: the chunker rewrites a foreign
// producer's file event with its redacted content and would otherwise
// rewrite it again on every pass.
func TestRedactIsIdempotent(t *testing.T) {
	r := newRedactor(t)
	for _, p := range plantedSecrets() {
		once := r.String(p.text())
		if once == p.text() {
			t.Errorf("%s: nothing redacted", p.name)
			continue
		}
		if twice := r.String(once); twice != once {
			t.Errorf("%s: redacting again changed %q to %q", p.name, once, twice)
		}
	}
	for _, a := range assignments() {
		once := r.String(a)
		if twice := r.String(once); twice != once {
			t.Errorf("redacting again changed %q to %q", once, twice)
		}
	}
}
