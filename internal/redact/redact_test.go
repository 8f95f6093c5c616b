package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// Alphabets for fake secrets.
const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url  = alnum + "-_"
	b64     = alnum + "+/"
	b32     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexDig  = "0123456789abcdef"
	digits  = "0123456789"
	upperAN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// fake returns n pseudo-random bytes of alphabet, the same for the same
// seed. Secrets in these tests are built from it, so that no file holds a
// literal that secret scanners would report.
func fake(seed uint64, alphabet string, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x6b6e6f77687562))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// planted is one secret in its surrounding text.
type planted struct {
	name         string
	before, secr string
	after        string
	kind         string
}

func (p planted) text() string { return p.before + p.secr + p.after }

// plantedSecrets has one realistic fake secret of each default kind.
func plantedSecrets() []planted {
	jwtHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u-4821","name":"Jane Roe","iat":1716239022}`))
	// The fixed start of every unencrypted OpenSSH ed25519 key, runs of A
	// included.
	openssh := "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACA" + fake(110, b64, 51) + "\n"
	var pem strings.Builder
	for i := range 12 {
		pem.WriteString(fake(uint64(100+i), b64, 64) + "\n")
	}
	return []planted{
		{"openai project key", "export OPENAI_API_KEY=", "sk-" + "proj-" + fake(1, b64url, 156), "\n", "openai-api-key"},
		{"openai marked key", "key: ", "sk-" + "proj-" + fake(2, b64url, 74) + "T3Blbk" + "FJ" + fake(3, b64url, 74), "\n", "openai-api-key"},
		{"openai legacy key", `client = OpenAI(api_key="`, "sk-" + fake(4, alnum, 48), `")`, "openai-api-key"},
		{"anthropic api key", "ANTHROPIC_API_KEY=", "sk-" + "ant-api03-" + fake(5, b64url, 93) + "AA", "\n", "anthropic-api-key"},
		{"anthropic oauth token", "token ", "sk-" + "ant-oat01-" + fake(6, b64url, 80), " expires", "anthropic-api-key"},
		{"openrouter key", "OPENROUTER_API_KEY=", "sk-" + "or-v1-" + fake(7, hexDig, 64), "\n", "openrouter-api-key"},
		{"github classic pat", "git clone https://x:", "gh" + "p_" + fake(8, alnum, 36), "@github.com/o/r", "github-pat"},
		{"github fine-grained pat", "GH_TOKEN=", "github" + "_pat_" + fake(9, alnum+"_", 82), "\n", "github-pat"},
		{"github oauth", "token: ", "gh" + "o_" + fake(10, alnum, 36), "\n", "github-oauth"},
		{"github user-to-server", "token: ", "gh" + "u_" + fake(11, alnum, 36), "\n", "github-app-token"},
		{"github server-to-server", "token: ", "gh" + "s_" + fake(12, alnum, 36), "\n", "github-app-token"},
		{"github refresh", "refresh ", "gh" + "r_" + fake(13, alnum, 36), "\n", "github-refresh-token"},
		{"slack bot", "SLACK_BOT_TOKEN=", "xo" + "xb-" + fake(14, digits, 12) + "-" + fake(15, digits, 13) + "-" + fake(16, alnum, 24), "\n", "slack-token"},
		{"slack user", "slack: ", "xo" + "xp-" + fake(17, digits, 12) + "-" + fake(18, digits, 12) + "-" + fake(19, digits, 12) + "-" + fake(20, hexDig, 32), "\n", "slack-token"},
		{"slack app-level", "appToken: ", "xo" + "xa-2-" + fake(21, alnum, 40), "\n", "slack-token"},
		{"slack refresh", "refresh: ", "xo" + "xr-" + fake(22, alnum, 40), "\n", "slack-token"},
		{"slack legacy", "legacy ", "xo" + "xs-" + fake(23, digits, 10) + "-" + fake(24, digits, 11) + "-" + fake(25, digits, 12) + "-" + fake(26, hexDig, 64), "\n", "slack-token"},
		{"slack webhook", "url: ", "https://hooks.slack.com/services/" + "T" + fake(27, upperAN, 8) + "/B" + fake(28, upperAN, 10) + "/" + fake(29, alnum, 24), "\n", "slack-webhook"},
		{"aws access key id", "aws_access_key_id = ", "AK" + "IA" + fake(30, b32, 16), "\n", "aws-access-key"},
		{"aws session key id", "AWS_ACCESS_KEY_ID=", "AS" + "IA" + fake(31, b32, 16), "\n", "aws-access-key"},
		{"aws secret key", "aws_secret_access_key = ", fake(32, b64, 40), "\n", "aws-secret-key"},
		{"aws secret in json", `"SecretAccessKey": "`, fake(45, b64, 40), `",`, "aws-secret-key"},
		{"google api key", `"apiKey": "`, "AI" + "za" + fake(33, b64url, 35), `",`, "gcp-api-key"},
		{"google api key in url", "<script src=\"https://maps.googleapis.com/maps/api/js?key=", "AI" + "za" + fake(46, b64url, 35), "&callback=init\">", "gcp-api-key"},
		{"stripe key in list", `keys: ["`, "sk" + "_live_" + fake(47, alnum, 24), `","other"]`, "stripe-key"},
		{"jwt in query", "https://app.example.com/cb?token=", jwtHeader + "." + jwtClaims + "." + fake(48, b64url, 43), "&next=/", "jwt"},
		{"stripe live secret", "STRIPE_KEY=", "sk" + "_live_" + fake(34, alnum, 24), "\n", "stripe-key"},
		{"stripe restricted", "key ", "rk" + "_live_" + fake(35, alnum, 24), "\n", "stripe-key"},
		{"stripe test secret", "key ", "sk" + "_test_" + fake(36, alnum, 24), "\n", "stripe-key"},
		{"jwt", "session=", jwtHeader + "." + jwtClaims + "." + fake(37, b64url, 43), "\n", "jwt"},
		{"rsa private key", "key.pem:\n", "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pem.String() + "-----END RSA " + "PRIVATE KEY-----", "\ndone\n", "private-key"},
		{"openssh private key", "", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + openssh + pem.String() + "-----END OPENSSH " + "PRIVATE KEY-----", "\n", "private-key"},
		{"authorization bearer", "Authorization: Bearer ", fake(38, alnum+"-._~", 40), "\r\n", "bearer-token"},
		{"bearer in prose", "then send bearer ", fake(39, alnum, 32), " with it", "bearer-token"},
		{"bearer of letters", "Authorization: Bearer ", fake(44, alnum[:52], 32), "\n", "bearer-token"},
		{"url password", "DATABASE_URL=postgres://app:", fake(40, alnum, 20), "@db.internal:5432/app\n", "url-password"},
		{"generic password", `password = "`, fake(41, alnum+"!#%&*", 20), `"`, "generic-secret"},
		{"generic api_key", "api_key: ", fake(42, alnum, 32), "\n", "generic-secret"},
		{"generic secret", "client_secret=", fake(43, alnum, 40), "\n", "generic-secret"},
	}
}

func newRedactor(tb testing.TB, custom ...Pattern) *Redactor {
	tb.Helper()
	r, err := New(custom)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return r
}

func TestRedactPlanted(t *testing.T) {
	r := newRedactor(t)
	for _, p := range plantedSecrets() {
		t.Run(p.name, func(t *testing.T) {
			in := "Some text first.\n" + p.text() + "\nAnd text after.\n"
			out, found := r.Redact(in)
			if strings.Contains(out, p.secr) {
				t.Errorf("secret survived:\n%s", out)
			}
			want := "[REDACTED:" + p.kind + "]"
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %s:\n%s", want, out)
			}
			if !strings.Contains(out, "Some text first.") || !strings.Contains(out, "And text after.") {
				t.Errorf("text around the secret was lost:\n%s", out)
			}
			checkFindings(t, in, out, found)
		})
	}
}

// checkFindings asserts that findings are ordered, disjoint, inside the
// input, and that replacing them reproduces out.
func checkFindings(t *testing.T, in, out string, found []Finding) {
	t.Helper()
	var b strings.Builder
	last := 0
	for _, f := range found {
		if f.Start < last || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("bad finding %+v after offset %d in input of %d bytes", f, last, len(in))
		}
		b.WriteString(in[last:f.Start] + "[REDACTED:" + f.Kind + "]")
		last = f.End
	}
	b.WriteString(in[last:])
	if b.String() != out {
		t.Errorf("findings do not reproduce the output:\n%s\nwant\n%s", b.String(), out)
	}
}

func TestRedactWholePEMBlock(t *testing.T) {
	r := newRedactor(t)
	for _, p := range plantedSecrets() {
		if p.kind != "private-key" {
			continue
		}
		out := r.String(p.text())
		if want := p.before + "[REDACTED:private-key]" + p.after; out != want {
			t.Errorf("%s: got %q, want %q", p.name, out, want)
		}
	}
}

func TestURLPasswordKeepsUserAndHost(t *testing.T) {
	r := newRedactor(t)
	pass := fake(50, alnum, 18)
	tests := []struct {
		name, in, want string
	}{
		{"postgres", "postgres://app:" + pass + "@db.internal:5432/app",
			"postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{"redis without user", "redis://:" + pass + "@cache:6379/0",
			"redis://:[REDACTED:url-password]@cache:6379/0"},
		{"https in prose", "clone https://deploy:" + pass + "@git.example.org/team/repo.git today",
			"clone https://deploy:[REDACTED:url-password]@git.example.org/team/repo.git today"},
		{"amqp with symbols", "amqp://svc:" + pass + "%21x@mq:5672",
			"amqp://svc:[REDACTED:url-password]@mq:5672"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, found := r.Redact(tt.in)
			if out != tt.want {
				t.Errorf("got  %q\nwant %q", out, tt.want)
			}
			checkFindings(t, tt.in, out, found)
		})
	}
}

func TestCustomPatternsAddToDefaults(t *testing.T) {
	r := newRedactor(t,
		Pattern{Name: "acme-token", Regex: `acme_[0-9a-f]{24}`, Keywords: []string{"ACME_"}},
		Pattern{Name: "internal-password", Regex: `pw=(?P<secret>[a-z]{6,})`},
		Pattern{Name: "zz-code", Regex: `zz-[0-9]{6}`, Keywords: []string{"ZZ"}},
	)
	gh := "gh" + "p_" + fake(60, alnum, 36)
	acme := "acme_" + fake(61, hexDig, 24)
	in := "github " + gh + "\nacme " + acme + "\nlogin pw=qwertyuiop now\ncode zz-480213\n"
	out, found := r.Redact(in)
	for _, s := range []string{gh, acme, "qwertyuiop", "480213"} {
		if strings.Contains(out, s) {
			t.Errorf("%q survived:\n%s", s, out)
		}
	}
	for _, s := range []string{"[REDACTED:github-pat]", "[REDACTED:acme-token]",
		"pw=[REDACTED:internal-password] now", "code [REDACTED:zz-code]"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	checkFindings(t, in, out, found)
	kinds := r.Kinds()
	for _, k := range []string{"acme-token", "internal-password", "github-pat"} {
		if !contains(kinds, k) {
			t.Errorf("Kinds() lacks %q", k)
		}
	}
}

func TestNewRejectsInvalidCustomPattern(t *testing.T) {
	tests := []struct {
		name string
		p    Pattern
		want string
	}{
		{"bad regex", Pattern{Name: "broken-rule", Regex: `([a-z`}, "broken-rule"},
		{"empty regex", Pattern{Name: "empty-rule"}, "empty-rule"},
		{"empty name", Pattern{Regex: `x+`}, "name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New([]Pattern{tt.p})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%+v) = %v, want an error mentioning %q", tt.p, err, tt.want)
			}
		})
	}
}

func TestOverlappingMatchesMerge(t *testing.T) {
	gh := "gh" + "p_" + fake(70, alnum, 36)
	r := newRedactor(t, Pattern{Name: "ticket-ref", Regex: `REF-[0-9]{4}-ghp_[A-Za-z0-9]{6}`})
	in := "see REF-1234-" + gh + " now"
	out, found := r.Redact(in)
	if want := "see [REDACTED:github-pat] now"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	if len(found) != 1 || found[0].Start != len("see ") || found[0].End != len(in)-len(" now") {
		t.Errorf("findings %+v, want one covering both matches", found)
	}

	// A JWT sent as a bearer token is found by both rules on the same span.
	var jwt string
	for _, p := range plantedSecrets() {
		if p.kind == "jwt" {
			jwt = p.secr
		}
	}
	out = newRedactor(t).String("Authorization: Bearer " + jwt + "\n")
	if want := "Authorization: Bearer [REDACTED:jwt]\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestNoFalsePositives(t *testing.T) {
	tests := []struct{ name, in string }{
		{"env var prose", "Set `OPENAI_API_KEY` to your key before starting the gateway. " +
			"The token starts with `sk-` and is shown only once, so store it in a password manager."},
		{"bearer prose", "All endpoints use Bearer authentication: send `Authorization: Bearer <token>` " +
			"with every request. Bearer tokens are opaque strings."},
		{"yaml placeholders", "```yaml\npassword: ${PASSWORD}\napi_key: \"<your-key>\"\n" +
			"token: your-token-here\nsecret: xxxxxxxxxxxxxxxxxxxx\n```"},
		{"env placeholders", "OPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=sk-ant-...\n" +
			"GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nSTRIPE_KEY=sk_live_...\n"},
		{"curl with variables", "curl -H 'Authorization: Bearer YOUR_TOKEN' https://api.example.com/v1/models\n" +
			"curl -H \"Authorization: Bearer $OPENCLAW_GATEWAY_TOKEN\" http://127.0.0.1:18789/v1/chat\n" +
			"curl -u admin:changeme https://example.com"},
		{"connection strings", "Connect with `postgres://user:password@localhost:5432/db`, " +
			"`redis://:${REDIS_PASSWORD}@cache:6379` or `nats://foo:bar@localhost:4222`."},
		{"slack webhook template", "The webhook looks like https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX."},
		{"aws documentation keys", "AWS access keys look like AKIAIOSFODNN7EXAMPLE."},
		{"config templates", `{"apiKey": "${env:OPENAI_API_KEY}", "token": "{{ secrets.GITHUB_TOKEN }}", ` +
			`"password": "%DB_PASSWORD%"}`},
		{"code reading env", "const token = process.env.GITHUB_TOKEN;\napi_key = os.environ[\"API_KEY\"]\n" +
			"token: process.env.OPENCLAW_GATEWAY_TOKEN,\n"},
		{"example ids", `ownerAllowFrom: ["discord:123456789012345678"], allowFrom: ["telegram:123456789"]`},
		{"settings about secrets", "passwordFile: \"/path/to/vnc-password.txt\",\nminPasswordLength: 12\n" +
			"| `api_key` | string | Your provider API key |\nThe key is stored in ~/.openclaw/credentials/auth.json (mode 0600)."},
		{"rotation prose", "Rotate the secret: the new key replaces the old one, and the access token " +
			"expires after one hour. Refresh tokens last 30 days; keep them secret."},
		{"elided pem", "-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----\n" +
			"-----BEGIN PUBLIC KEY-----\n" + fake(80, b64, 64) + "\n-----END PUBLIC KEY-----"},
		{"words with sk- and ey", "Disk-backed task-runner keys; they ask-fallback a risk-free journey: sk-learn-compatible-estimator."},
		{"non-ascii prose", "Le jeton d’accès (access token) expire — 访问令牌会过期，请设置 API 密钥。"},
	}
	r := newRedactor(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, found := r.Redact(tt.in); out != tt.in || len(found) != 0 {
				t.Errorf("changed %+v:\n%s", found, out)
			}
		})
	}
}

func TestInvalidUTF8(t *testing.T) {
	r := newRedactor(t)
	gh := "gh" + "p_" + fake(90, alnum, 36)
	tests := []string{
		"\xff\xfe token=" + gh + " \xc3",
		"\xed\xa0\x80" + gh + "\xff",
		"password = \"\xff\xff\xfe\xfe" + fake(91, alnum, 16) + "\"",
		"\x80\x80\x80\x80\x80://\xff:\xfe@\xff",
		"\xe2\x82",
	}
	for _, in := range tests {
		out, found := r.Redact(in)
		checkFindings(t, in, out, found)
		if strings.Contains(in, gh) && strings.Contains(out, gh) {
			t.Errorf("secret survived in %q", out)
		}
	}
}

func TestKinds(t *testing.T) {
	kinds := newRedactor(t).Kinds()
	for _, k := range []string{
		"openai-api-key", "anthropic-api-key", "github-pat", "slack-token", "slack-webhook",
		"aws-access-key", "aws-secret-key", "gcp-api-key", "stripe-key", "jwt", "private-key",
		"bearer-token", "url-password", "generic-secret",
	} {
		if !contains(kinds, k) {
			t.Errorf("Kinds() lacks %q", k)
		}
	}
	for i := 1; i < len(kinds); i++ {
		if kinds[i-1] >= kinds[i] {
			t.Fatalf("Kinds() not sorted and distinct at %q, %q", kinds[i-1], kinds[i])
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newRedactor(t)
	cases := plantedSecrets()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				p := cases[(g+i)%len(cases)]
				if out := r.String(p.text()); strings.Contains(out, p.secr) {
					t.Errorf("%s survived under concurrency", p.name)
				}
			}
		})
	}
	wg.Wait()
}

// TestCorpus redacts a real documentation corpus: pages about tokens,
// keys and passwords, with placeholders but no real secrets.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus test in short mode")
	}
	files := corpus(t)
	r := newRedactor(t)
	total := 0
	for path, s := range files {
		out, found := r.Redact(s)
		checkFindings(t, s, out, found)
		for _, f := range found {
			total++
			t.Logf("%s: %s %q", path, f.Kind, context(s, f))
		}
	}
	t.Logf("%d findings in %d files", total, len(files))
	if total > 5 {
		t.Errorf("%d places redacted; documentation should come out nearly unchanged", total)
	}
}

// context returns the finding with a little text around it.
func context(s string, f Finding) string {
	lo, hi := max(0, f.Start-30), min(len(s), f.End+15)
	return s[lo:f.Start] + "«" + s[f.Start:f.End] + "»" + s[f.End:hi]
}

// searching returns a copy of r whose rules search the lines around their
// keywords instead of being anchored at them, with no keyword prechecks.
func searching(tb testing.TB, r *Redactor) *Redactor {
	tb.Helper()
	s := &Redactor{kw: r.kw, always: r.always, kinds: r.kinds}
	for _, ru := range r.rules {
		c := *ru
		c.anchored, c.wordStart, c.pre = false, false, nil
		c.re = regexp.MustCompile(c.src)
		s.rules = append(s.rules, &c)
	}
	n := len(s.rules)
	s.pool.New = func() any { return &scratch{wins: make([][]window, n)} }
	return s
}

// covered reports whether every span in want lies inside a span of got.
func covered(got, want []Finding) bool {
	for _, w := range want {
		ok := false
		for _, g := range got {
			if g.Start <= w.Start && w.End <= g.End {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// assignments returns "name = value" lines in the operator and quoting
// forms gitleaks' generated rules accept.
func assignments() []string {
	value := fake(120, alnum, 32)
	var out []string
	for _, name := range []string{"api_key", "discord_token", "X-Auth-Token", "my secret "} {
		for _, op := range []string{"=", ">", ":", "::=", ":::=", "||", "=>", "?=", ",", ":="} {
			for _, q := range []string{"", " ", `"`, ` '`, " `", "  ==", "\t\"", `""=`} {
				out = append(out, name+op+q+value+"\n", name+` "`+op+q+value+`"`)
			}
		}
	}
	return out
}

func TestAnchoringLosesNothing(t *testing.T) {
	r := newRedactor(t)
	s := searching(t, r)
	var ins []string
	for _, p := range plantedSecrets() {
		ins = append(ins, "x "+p.text()+"\n"+p.before+p.secr+p.secr+p.after)
	}
	ins = append(ins, assignments()...)
	for _, in := range ins {
		_, got := r.Redact(in)
		_, want := s.Redact(in)
		if !covered(got, want) {
			t.Errorf("%q: anchored %+v, searching %+v", in, got, want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, p := range plantedSecrets() {
		f.Add(p.text())
	}
	f.Add("Set OPENAI_API_KEY to your key; Bearer authentication; password: ${PASSWORD}")
	f.Add("postgres://user:pa:ss@host/db")
	f.Add("\xff\xfe://:@")
	for _, a := range assignments()[:40] {
		f.Add(a)
	}
	r := newRedactor(f)
	s := searching(f, r)
	gh := "gh" + "p_" + fake(99, alnum, 36)
	f.Fuzz(func(t *testing.T, in string) {
		out, found := r.Redact(in)
		checkFindings(t, in, out, found)
		if _, want := s.Redact(in); !covered(found, want) {
			t.Fatalf("anchoring lost a match: anchored %+v, searching %+v", found, want)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("valid input gave invalid output %q", out)
		}
		// A planted key on a line of its own must never survive, whatever
		// precedes it.
		planted := in + "\n" + gh + "\n"
		if out := r.String(planted); strings.Contains(out, gh) {
			t.Fatalf("planted key survived in %q", out)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
