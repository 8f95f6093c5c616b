package transcript

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"zero is valid", Config{}, nil},
		{"relaxed", Config{Privacy: Relaxed}, nil},
		{"bad", Config{Privacy: "none", Limits: Limits{MaxBytes: -1, MaxMessages: -1}},
			[]string{"privacyMode", "limits.maxBytes", "limits.maxMessages"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != (c.want == nil) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := NewIntake(Config{Privacy: "none"}, newTestSanitizer(t)); err == nil {
		t.Error("NewIntake accepted an invalid config")
	}
	if _, err := NewIntake(Config{}, nil); err == nil {
		t.Error("NewIntake accepted a nil sanitizer")
	}
}

// TestIntakePrepare: what Prepare returns is sanitized in the intake's
// mode, and malformed input is rejected with ErrInvalid.
func TestIntakePrepare(t *testing.T) {
	payload := []byte(doc(`[{"role":"system","content":"operator prompt"},{"role":"user","content":"mail maria@example.com about it"}]`))
	for _, c := range []struct {
		mode PrivacyMode
		keep bool
	}{{Strict, false}, {Relaxed, true}} {
		in, err := NewIntake(Config{Privacy: c.mode}, newTestSanitizer(t))
		if err != nil {
			t.Fatal(err)
		}
		tr, id, err := in.Prepare(payload)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Messages) != 1 || tr.Messages[0].Role != RoleUser {
			t.Fatalf("%s: messages %+v, want the user message only", c.mode, tr.Messages)
		}
		if got := strings.Contains(tr.Messages[0].Content[0].Text, "maria@example.com"); got != c.keep {
			t.Errorf("%s: kept the address = %v; text %q", c.mode, got, tr.Messages[0].Content[0].Text)
		}
		if id != ID(tr) {
			t.Errorf("%s: id %s is not the sanitized transcript's %s", c.mode, id, ID(tr))
		}
		if got := strings.Contains(in.Text("maria@example.com"), "maria@example.com"); got != c.keep {
			t.Errorf("%s: Text kept the address = %v", c.mode, got)
		}
	}
	in, err := NewIntake(Config{Limits: Limits{MaxBytes: 64}}, newTestSanitizer(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.Prepare(payload); !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversize payload: err = %v, want ErrInvalid and ErrTooLarge", err)
	}
}
