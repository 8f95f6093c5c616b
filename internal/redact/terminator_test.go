package redact

import (
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/redact/redacttest"
)

// TestSecretsBeforePunctuation plants tokens followed by the punctuation
// of prose, lists, calls and URLs, and passwords named in sentences:
// each must be redacted, in docs, knowledge and transcripts alike (they
// share New's rules).
func TestSecretsBeforePunctuation(t *testing.T) {
	r := newRedactor(t)
	for _, tt := range redacttest.Punctuated() {
		t.Run(tt.Name, func(t *testing.T) {
			out, found := r.Redact(tt.Text())
			if strings.Contains(out, tt.Value) || !strings.Contains(out, "[REDACTED:") {
				t.Errorf("secret survived: %q", out)
			}
			checkFindings(t, tt.Text(), out, found)
			if again := r.String(out); again != out {
				t.Errorf("not idempotent: %q -> %q", out, again)
			}
		})
	}
}

// TestPasswordWordsStay holds sentences about passwords, tokens and keys
// that name no secret: none may change.
func TestPasswordWordsStay(t *testing.T) {
	r := newRedactor(t)
	for _, in := range []string{
		"the password is stored in Vault",
		"password: <your password>",
		"set the password field",
		"The password is required.",
		"The password is optional, the token is not.",
		"password: ${DB_PASSWORD}",
		"password: $ADMIN_PASS,",
		"password: \"your-password\"",
		"password: changeme",
		"password: secret,",
		"password = os.getenv(\"DB_PASSWORD\")",
		"password: `gateway.auth.password`",
		"password_file: /run/secrets/db\npasswordFile: ./pw.txt",
		"password: $2a$11$3kIDaCxw.Glsl1.u5nKa6eU",
		"password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
		"wifi_password: !secret wifi_password",
		"The password is Base64-encoded.",
		"password: v1.2.3-beta",
		"The password for the admin user is configured.",
		"If the password is wrong, the login fails.",
		"The AWS secret key is shown only once.",
		"Run npm_config_cache=/tmp/npm npm ci.",
		"Files like npm_" + fake(210, alnum, 36) + ".tgz are caches.",
		"SG.com is a domain, SG.x.y a short name.",
	} {
		if out, found := r.Redact(in); out != in {
			t.Errorf("changed %+v:\n%s\n%s", found, in, out)
		}
	}
}

// A bearer token in prose is removed however short a real one is (ten
// characters and more that look random), while the word and placeholders
// stay.
func TestBearerTokensInProse(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"call it with Bearer x7Kq2mP9vR4t and it works",
		"send Bearer tok_8fK2pQ9z to the api",
		"the header is Bearer 9f8e7d6c5b4a.",
	} {
		if got := r.String(s); !strings.Contains(got, "[REDACTED:bearer-token]") {
			t.Errorf("%q kept its token: %q", s, got)
		}
	}
	for _, s := range []string{
		"Bearer tokens are sent in the Authorization header.",
		"use a Bearer token from the settings page",
		"Authorization: Bearer <your-token>",
		"Authorization: Bearer YOUR_API_TOKEN",
		"Authorization: Bearer $KNOWHUB_TOKEN",
	} {
		if got := r.String(s); got != s {
			t.Errorf("%q changed: %q", s, got)
		}
	}
}
