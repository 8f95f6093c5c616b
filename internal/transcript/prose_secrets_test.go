package transcript

import (
	"strings"
	"testing"
)

// proseSecrets are secrets written the way people paste them into a chat:
// no "name = value", a bare key, or a password named in a sentence. Each
// case has the secret and the text that holds it.
func proseSecrets() []struct{ name, secret, text string } {
	const b64 = alnum + "+/"
	aws := fake(101, b64, 40)
	aws2 := fake(102, b64, 40)
	tok := fake(103, alnum, 32)
	tok2 := fake(104, alnum+"-_", 43)
	pw1 := "Tr0ub4dor&" + fake(105, alnum, 4)
	pw2 := fake(106, alnum, 10) + "!"
	pw3 := "Sommer" + fake(107, "0123456789", 4) + "#"
	pw4 := fake(108, alnum, 14)
	pw5 := "hunter" + fake(109, "0123456789", 3)
	return []struct{ name, secret, text string }{
		{"bare aws secret key", aws, "here is the key " + aws + " for the uploader"},
		{"aws secret on its own line", aws2, "AKIA key is in the vault, secret:\n" + aws2 + "\n"},
		{"bare token in backticks", tok, "I pasted `" + tok + "` into the config"},
		{"bare url-safe token", tok2, "the webhook wants " + tok2 + ", then retry"},
		{"password for prod is", pw1, "the database password for prod is " + pw1 + " so use that"},
		{"password is quoted", pw2, `ok, the admin password is "` + pw2 + `".`},
		{"pw colon", pw3, "login: deploy / pw: " + pw3},
		{"use x as the password", pw4, "Use " + pw4 + " as the password for the staging box."},
		{"my password is", pw5, "my password is " + pw5 + " lol"},
		{"german passwort lautet", pw1, "Das Passwort für prod lautet " + pw1 + "."},
		{"french mot de passe est", pw2, "le mot de passe de prod est " + pw2},
		{"spanish contraseña es", pw3, "la contraseña de producción es " + pw3},
		{"portuguese senha é", pw4, "a senha do servidor é " + pw4},
		{"russian пароль", pw5, "пароль от базы: " + pw5},
		{"chinese 密码是", pw1, "生产环境的密码是" + pw1 + "，别外传"},
		{"japanese パスワードは", pw2, "本番のパスワードは " + pw2 + " です"},
		{"token for is", tok, "the API token for staging is " + tok},
		{"secret key was", aws, "the secret key was " + aws + " before rotation"},
	}
}

// TestSanitizeSecretsWithoutAssignment checks that secrets without a
// "name = value" context are redacted in every privacy mode.
func TestSanitizeSecretsWithoutAssignment(t *testing.T) {
	san := newTestSanitizer(t)
	for _, c := range proseSecrets() {
		for _, mode := range []PrivacyMode{Strict, Relaxed} {
			got := san.Text(c.text, mode)
			if strings.Contains(got, c.secret) {
				t.Errorf("%s (%s): secret survived: %q", c.name, mode, got)
			} else if !strings.Contains(got, "[REDACTED:") {
				t.Errorf("%s (%s): no redaction marker: %q", c.name, mode, got)
			}
		}
	}
}

// TestSanitizeKeepsTalkAboutSecrets checks that sentences about passwords
// and tokens, and technical strings that look random but are not secrets,
// are kept.
func TestSanitizeKeepsTalkAboutSecrets(t *testing.T) {
	san := newTestSanitizer(t)
	for _, in := range []string{
		"the password is required for prod, ask ops",
		"the password is stored in 1Password under prod-db",
		"the token is invalid after 3600 seconds",
		"the password is the same as last week",
		"password: ${DB_PASSWORD}",
		"the password is <your-password>",
		"the token was expired, so I ran gh auth refresh",
		"commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 fixed it",
		"id 8f14e45f-ceea-467f-a0e6-5b3f1a4d9c21",
		"integrity sha512-Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8=",
		"docker pull nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
		"see internal/extractor/sanitize.go and TestSanitizeSecretsWithoutAssignment",
		"run go test ./internal/redact/... -run TestRedactPlantedSecrets",
		"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured",
		"the mot de passe est requis",
		"密码是必填项",
		"パスワードは必須です",
	} {
		if got := san.Text(in, Relaxed); got != in {
			t.Errorf("Text(%q) = %q, want it kept", in, got)
		}
	}
}
