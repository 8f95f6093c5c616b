package redact

import (
	"strings"
	"testing"
)

// TestSecretsBeforePunctuation plants tokens followed by the punctuation
// of prose, lists, calls and URLs, and passwords named in sentences:
// each must be redacted, in docs, knowledge and transcripts alike (they
// share New's rules).
func TestSecretsBeforePunctuation(t *testing.T) {
	npm := "npm_" + fake(200, alnum, 36)
	sg := "SG." + fake(201, b64url, 22) + "." + fake(202, b64url, 43)
	// An AWS secret key with the '/' and '+' that end-of-token checks
	// trip on.
	aws := fake(203, b64, 18) + "/" + fake(204, b64, 10) + "+" + fake(205, b64, 10)
	pw := fake(206, alnum, 8) + "!" + fake(207, digits, 3)
	type tc struct{ name, secret, text string }
	var tests []tc
	for _, tok := range []struct{ name, secret string }{{"npm", npm}, {"sendgrid", sg}} {
		for _, end := range []string{".", ",", ")", "&", "]", "}", "<", "|"} {
			tests = append(tests, tc{tok.name + " then " + end, tok.secret, "the token (" + tok.secret + end + " next"})
		}
		tests = append(tests,
			tc{tok.name + " ends a sentence", tok.secret, "Publish with " + tok.secret + "."},
			tc{tok.name + " in a query", tok.secret, "https://example.com/hook?key=" + tok.secret + "&next=1"},
			tc{tok.name + " in a list", tok.secret, "tokens: " + tok.secret + ", " + tok.secret + "; done"},
		)
	}
	tests = append(tests,
		tc{"aws assignment ends a sentence", aws, "Set aws_secret_access_key = " + aws + "."},
		tc{"aws sentence", aws, "The AWS secret key is " + aws + "."},
		tc{"aws access key sentence", aws, "Our aws secret access key: " + aws + ". Rotate it."},
		tc{"password colon", pw, "password: " + pw},
		tc{"password colon ends a sentence", pw, "Log in with password: " + pw + "."},
		tc{"db password is", pw, "the db password is " + pw},
		tc{"password for prod is", pw, "The password for prod is " + pw + ", keep it safe."},
		tc{"env password", pw, "DB_PASSWORD=" + pw + "\n"},
		tc{"quoted password is", pw, "the passphrase is '" + pw + "'."},
	)
	r := newRedactor(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, found := r.Redact(tt.text)
			if strings.Contains(out, tt.secret) || !strings.Contains(out, "[REDACTED:") {
				t.Errorf("secret survived: %q", out)
			}
			checkFindings(t, tt.text, out, found)
			if again := r.String(out); again != out {
				t.Errorf("not idempotent: %q -> %q", out, again)
			}
		})
	}
}

// TestPasswordWordsStay holds sentences about passwords, tokens and keys
// that name no secret: none may change.
func TestPasswordWordsStay(t *testing.T) {
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
		"The password for the admin user is configured.",
		"If the password is wrong, the login fails.",
		"The AWS secret key is shown only once.",
		"Run npm_config_cache=/tmp/npm npm ci.",
		"Files like npm_" + fake(210, alnum, 36) + ".tgz are caches.",
		"SG.com is a domain, SG.x.y a short name.",
	} {
		r := newRedactor(t)
		if out, found := r.Redact(in); out != in {
			t.Errorf("changed %+v:\n%s\n%s", found, in, out)
		}
	}
}
