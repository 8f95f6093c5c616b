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
