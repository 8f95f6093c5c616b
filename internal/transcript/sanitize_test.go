package transcript

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/redact/redacttest"
)

// fake returns n pseudo-random characters of alphabet, the same for the
// same seed, so that no file holds a literal secret.
func fake(seed uint64, alphabet string, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x6b6e6f77687562))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Fake secrets of the kinds the shared redactor finds.
var (
	fakeGitHubPAT = "ghp_" + fake(1, alnum, 36)
	fakeBearer    = fake(2, alnum+"-_", 48)
)

func TestSanitizeTextStrict(t *testing.T) {
	san := newTestSanitizer(t)
	cases := []struct {
		name, in, want string
	}{
		// Home directories: the rest of the path is kept.
		{"linux home", "cd /home/alice/src/app && make", "cd ~/src/app && make"},
		{"macos home", "open /Users/bob", "open ~"},
		{"macos home in quotes", `"/Users/bob/Library/Logs/app.log"`, `"~/Library/Logs/app.log"`},
		{"windows home", `C:\Users\carol\proj\main.go`, `~\proj\main.go`},
		{"windows home escaped", `"C:\\Users\\carol\\proj"`, `"~\\proj"`},
		{"windows home slashes", `C:/Users/carol/proj`, `~/proj`},
		{"silverblue home", "/var/home/erin/.config/app.toml", "~/.config/app.toml"},
		{"path list", "PATH=/usr/bin:/home/frank/bin", "PATH=/usr/bin:~/bin"},
		{"file url", "file:///home/dan/report.html", "file://~/report.html"},
		{"two homes", "/home/a/x /home/b/y", "~/x ~/y"},
		{"shared folder kept", "/Users/Shared/cache", "/Users/Shared/cache"},
		{"url path kept", "https://example.com/home/about", "https://example.com/home/about"},
		{"relative path kept", "src/home/page.tsx", "src/home/page.tsx"},
		// E-mail addresses.
		{"email", "ping alice.smith+ci@example.co.uk now", "ping [email] now"},
		{"email in angle brackets", "From: Dana <dana@acme-corp.com>", "From: Dana <[email]>"},
		{"npm version kept", "corepack use pnpm@8.15.0", "corepack use pnpm@8.15.0"},
		{"scoped package kept", "pnpm add -D @types/node@20", "pnpm add -D @types/node@20"},
		{"git remote kept", "git@github.com:acme/app.git", "git@github.com:acme/app.git"},
		{"local host kept", "ssh deploy@localhost", "ssh deploy@localhost"},
		// Phone numbers.
		{"us phone spaced", "call +1 415 555 0134 today", "call [phone] today"},
		{"uk phone", "+44 20 7946 0958", "[phone]"},
		{"e164 phone", "+491701234567", "[phone]"},
		{"parenthesized phone", "(415) 555-0134", "[phone]"},
		{"dashed phone", "415-555-0134.", "[phone]."},
		{"tel link", "tel:+14155550134", "[phone]"},
		{"date kept", "2026-03-02", "2026-03-02"},
		{"bare digits kept", "order 1234567890", "order 1234567890"},
		{"time kept", "10:42:13", "10:42:13"},
		{"diff hunk kept", "@@ -12,7 +12,8 @@", "@@ -12,7 +12,8 @@"},
		{"big number kept", "1,000,000 rows", "1,000,000 rows"},
		// IP addresses.
		{"ipv4 with port", "psql -h 10.20.0.14 -p 5433", "psql -h [ip] -p 5433"},
		{"ipv4 host port", "connect ECONNREFUSED 10.42.3.17:6379", "connect ECONNREFUSED [ip]:6379"},
		{"ipv4 cidr", "allow 10.8.0.0/16", "allow [ip]/16"},
		{"ipv6", "gateway 2001:db8::1 up", "gateway [ip] up"},
		{"ipv6 zone", "fe80::1%en0", "[ip]"},
		{"ipv6 bracketed", "[2001:db8::2]:8080", "[[ip]]:8080"},
		{"ipv6 mapped", "::ffff:192.168.1.20", "[ip]"},
		{"ipv6 end of sentence", "use fd12:3456:789a::1:", "use [ip]:"},
		{"loopback kept", "listen 127.0.0.1:8080 and [::1]:8080", "listen 127.0.0.1:8080 and [::1]:8080"},
		{"unspecified kept", "bind 0.0.0.0", "bind 0.0.0.0"},
		{"semver kept", "vitest v1.6.0 and 1.2.3", "vitest v1.6.0 and 1.2.3"},
		{"calver kept", "client 2026.7.1", "client 2026.7.1"},
		{"five part version kept", "1.2.3.4.5", "1.2.3.4.5"},
		{"v-prefixed quad kept", "v1.2.3.4", "v1.2.3.4"},
		{"cpp path kept", "std::vector<int> and a::b", "std::vector<int> and a::b"},
		{"python slice kept", "xs[::2]", "xs[::2]"},
		{"mac address kept", "ether 00:1a:2b:3c:4d:5e", "ether 00:1a:2b:3c:4d:5e"},
		{"fingerprint kept", "43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8", "43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8"},
		// Everything at once.
		{"mixed", "alice@example.com on 192.168.1.5 from /home/alice/x, +1 415 555 0134",
			"[email] on [ip] from ~/x, [phone]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := san.Text(c.in, Strict)
			if got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if again := san.Text(got, Strict); again != got {
				t.Errorf("not idempotent: %q, then %q", got, again)
			}
		})
	}
}

func TestSanitizeSecrets(t *testing.T) {
	san := newTestSanitizer(t)
	cases := []struct {
		name, in, secret string
	}{
		{"github token", "export GITHUB_TOKEN=" + fakeGitHubPAT + "\n", fakeGitHubPAT},
		{"bearer header", `curl -H "Authorization: Bearer ` + fakeBearer + `" https://api.example.com`, fakeBearer},
	}
	// Tokens before punctuation and passwords in sentences, as the
	// redactor's own tests hold them.
	for _, p := range redacttest.Punctuated() {
		cases = append(cases, struct{ name, in, secret string }{p.Name, p.Text(), p.Value})
	}
	for _, c := range cases {
		for _, mode := range []PrivacyMode{Strict, Relaxed} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				got := san.Text(c.in, mode)
				if strings.Contains(got, c.secret) {
					t.Errorf("secret survived: %q", got)
				}
				if !strings.Contains(got, "[REDACTED:") {
					t.Errorf("no redaction marker: %q", got)
				}
			})
		}
	}
}

func TestSanitizeRelaxedKeepsPersonalData(t *testing.T) {
	san := newTestSanitizer(t)
	in := "alice@example.com at /home/alice on 10.0.0.5, +1 415 555 0134"
	if got := san.Text(in, Relaxed); got != in {
		t.Errorf("relaxed changed %q to %q", in, got)
	}
}

func TestParsePrivacyMode(t *testing.T) {
	cases := []struct {
		in      string
		want    PrivacyMode
		wantErr bool
	}{
		{"", Strict, false},
		{"strict", Strict, false},
		{" Relaxed ", Relaxed, false},
		{"off", "", true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParsePrivacyMode(c.in)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("ParsePrivacyMode(%q) = %q, %v", c.in, got, err)
			}
		})
	}
}

// personalTranscript holds personal data and a secret in every place a
// transcript can hold text.
func personalTranscript() *Transcript {
	in, _ := json.Marshal(map[string]any{
		"command": "scp /home/alice/dump.sql alice@example.com:/tmp && curl -H 'Authorization: Bearer " + fakeBearer + "' http://10.1.2.3/",
		"env":     map[string]string{"/Users/alice/key": "+1 415 555 0134"},
	})
	return &Transcript{
		AgentID:     "coder",
		SubmittedBy: "alice",
		SessionKey:  "agent:coder:main",
		Trigger:     TriggerAgentEnd,
		Messages: []Message{
			{Role: RoleSystem, Content: []Part{{Type: PartText, Text: "operator prompt with ops@example.com"}}},
			{Role: RoleDeveloper, Content: []Part{{Type: PartText, Text: "developer prompt"}}},
			{Role: RoleUser, Content: []Part{{Type: PartText, Text: "I'm alice@example.com, my token is " + fakeGitHubPAT}}},
			{Role: RoleAssistant, Content: []Part{{Type: PartToolCall, Name: "exec", ID: "c1", Input: in}}},
			{Role: RoleTool, Content: []Part{{Type: PartToolResult, ID: "c1", Output: "copied to C:\\Users\\alice\\Desktop; called 415-555-0134 from 2001:db8::7"}}},
		},
	}
}

func TestSanitizeTranscript(t *testing.T) {
	san := newTestSanitizer(t)
	orig := personalTranscript()
	before, _ := json.Marshal(orig)
	got := san.Transcript(orig, Strict)
	after, _ := json.Marshal(orig)
	if string(before) != string(after) {
		t.Error("Transcript modified its input")
	}
	if len(got.Messages) != 3 {
		t.Fatalf("%d messages, want 3 (system and developer dropped)", len(got.Messages))
	}
	for _, m := range got.Messages {
		if m.Role == RoleSystem || m.Role == RoleDeveloper {
			t.Errorf("%s message kept", m.Role)
		}
	}
	out, _ := json.Marshal(got)
	for _, leak := range []string{"alice@example.com", "ops@example.com", "/home/alice", "/Users/alice", `C:\\Users\\alice`,
		"415", "10.1.2.3", "2001:db8::7", fakeBearer, fakeGitHubPAT, "operator prompt"} {
		if strings.Contains(string(out), leak) {
			t.Errorf("sanitized transcript still holds %q:\n%s", leak, out)
		}
	}
	for _, kept := range []string{"~/dump.sql", "[email]", "[phone]", "[ip]", "[REDACTED:", `"exec"`, `"c1"`} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("sanitized transcript lacks %q:\n%s", kept, out)
		}
	}
	if got.SubmittedBy != "alice" || got.AgentID != "coder" || got.SessionKey != "agent:coder:main" {
		t.Errorf("attribution changed: %+v", got)
	}

	relaxed, _ := json.Marshal(san.Transcript(orig, Relaxed))
	if !strings.Contains(string(relaxed), "alice@example.com") || strings.Contains(string(relaxed), fakeGitHubPAT) {
		t.Errorf("relaxed must keep personal data and redact secrets:\n%s", relaxed)
	}
	if strings.Contains(string(relaxed), "operator prompt") {
		t.Error("relaxed kept a system message")
	}
}

func TestID(t *testing.T) {
	san := newTestSanitizer(t)
	base := san.Transcript(personalTranscript(), Strict)
	id := ID(base)
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("ID = %q, want 32 hex digits", id)
	}
	cases := []struct {
		name string
		edit func(t *Transcript)
		same bool
	}{
		{"other trigger", func(t *Transcript) { t.Trigger = TriggerSessionEnd }, true},
		{"other agent and submitter", func(t *Transcript) { t.AgentID, t.SubmittedBy = "x", "y" }, true},
		{"other session", func(t *Transcript) { t.SessionKey = "agent:coder:other" }, false},
		{"other content", func(t *Transcript) { t.Messages[0].Content[0].Text += "!" }, false},
		{"one message more", func(t *Transcript) {
			t.Messages = append(t.Messages, Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "thanks"}}})
		}, false},
		{"session key moved into content", func(t *Transcript) {
			t.SessionKey = ""
			t.Messages[0].Content[0].Text = "agent:coder:main" + t.Messages[0].Content[0].Text
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := san.Transcript(personalTranscript(), Strict)
			c.edit(tr)
			if got := ID(tr); (got == id) != c.same {
				t.Errorf("ID = %s, base %s, want same=%v", got, id, c.same)
			}
		})
	}
	t.Run("personal data that sanitizes alike", func(t *testing.T) {
		tr := personalTranscript()
		tr.Messages[2].Content[0].Text = strings.Replace(tr.Messages[2].Content[0].Text, "alice@example.com", "bob@example.org", 1)
		if got := ID(san.Transcript(tr, Strict)); got != id {
			t.Errorf("ID = %s, want %s: the sanitized transcripts are equal", got, id)
		}
	})
}

func FuzzSanitizeText(f *testing.F) {
	for _, s := range []string{
		"/home/alice/src", "alice@example.com", "+1 415 555 0134", "10.0.0.1:80", "2001:db8::1",
		"1.2.3.4.5", "std::vector", "C:\\Users\\bob", "export GITHUB_TOKEN=" + fakeGitHubPAT,
	} {
		f.Add(s)
	}
	san := newTestSanitizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		got := san.Text(s, Strict)
		if again := san.Text(got, Strict); again != got {
			t.Errorf("not idempotent: %q → %q → %q", s, got, again)
		}
		if strings.Contains(s, fakeGitHubPAT) && strings.Contains(got, fakeGitHubPAT) {
			t.Errorf("planted secret survived in %q", got)
		}
	})
}
