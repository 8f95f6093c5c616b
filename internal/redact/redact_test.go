package redact

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/knowhub/knowhub/internal/redact/redacttest"
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
func fake(seed uint64, alphabet string, n int) string { return redacttest.Fake(seed, alphabet, n) }

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
	var out []planted
	for _, s := range redacttest.Planted() {
		out = append(out, planted{s.Name, s.Before, s.Value, s.After, s.Kind})
	}
	return out
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
