package pii

import (
	"strings"
	"testing"
)

func TestPhones(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ring 555 345 6789 now", "ring # now"},
		{"手机13812345678，谢谢", "手机#，谢谢"},
		{"Телефон: +7 (495) 123-45-67.", "Телефон: #."},
		{"hotel 12345678 rooms", "hotel 12345678 rooms"},
		{"cellar 030 1234", "cellar 030 1234"},
		{"call 0612345678 or 0687654321", "call # or #"},
		{"version 0.12.3456789", "version 0.12.3456789"},
		{"ts 2026-03-02 10:42", "ts 2026-03-02 10:42"},
		{"tel 2026-03-02", "tel 2026-03-02"},
		{"uuid 123e4567-e89b-12d3-a456-426614174000", "uuid 123e4567-e89b-12d3-a456-426614174000"},
		{"path /var/0612345678/x", "path /var/0612345678/x"},
	}
	for _, c := range cases {
		if got := Replace(c.in, Phones(c.in), "#"); got != c.want {
			t.Errorf("Phones(%q) → %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzPhones(f *testing.F) {
	for _, s := range []string{"555 345 6789", "电话13812345678", "+49 (0)30 1234567", "tel: 01 23 45 67 89", "1 000 000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spans := Phones(s)
		last := 0
		for _, sp := range spans {
			if sp.Start < last || sp.End <= sp.Start || sp.End > len(s) {
				t.Fatalf("bad spans %v for %q", spans, s)
			}
			last = sp.End
		}
		out := Replace(s, spans, "[phone]")
		if again := Replace(out, Phones(out), "[phone]"); again != out {
			t.Errorf("not idempotent: %q → %q → %q", s, out, again)
		}
		if len(spans) > 0 && !strings.Contains(out, "[phone]") {
			t.Errorf("spans found but nothing replaced")
		}
	})
}
