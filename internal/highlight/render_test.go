package highlight

import "testing"

func TestTerminal(t *testing.T) {
	for _, tc := range []struct {
		in          string
		ansi, plain string
	}{
		{"set the **fallback** **model**", "set the \x1b[1mfallback\x1b[22m \x1b[1mmodel\x1b[22m", "set the fallback model"},
		{"no marks", "no marks", "no marks"},
		{"**a** then 2**3 stays", "**a** then 2**3 stays", "**a** then 2**3 stays"},
	} {
		if got := Terminal(tc.in, true); got != tc.ansi {
			t.Errorf("Terminal(%q, ansi) = %q, want %q", tc.in, got, tc.ansi)
		}
		if got := Terminal(tc.in, false); got != tc.plain {
			t.Errorf("Terminal(%q, plain) = %q, want %q", tc.in, got, tc.plain)
		}
	}
}
