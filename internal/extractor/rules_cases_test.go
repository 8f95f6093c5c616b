package extractor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/transcript"
)

// script builds a transcript turn by turn.
type script struct {
	t *transcript.Transcript
	n int
}

func newScript() *script {
	return &script{t: &transcript.Transcript{Trigger: transcript.TriggerAgentEnd, SessionKey: "s"}}
}

func (s *script) add(role string, parts ...transcript.Part) *script {
	s.t.Messages = append(s.t.Messages, transcript.Message{Role: role, Content: parts})
	return s
}

func (s *script) user(text string) *script {
	return s.add(transcript.RoleUser, transcript.Part{Type: transcript.PartText, Text: text})
}
func (s *script) say(text string) *script {
	return s.add(transcript.RoleAssistant, transcript.Part{Type: transcript.PartText, Text: text})
}

// tool adds a call of a tool with input and its result.
func (s *script) tool(name string, input any, output string, isError bool) *script {
	s.n++
	id := fmt.Sprintf("c%d", s.n)
	in, _ := json.Marshal(input)
	s.add(transcript.RoleAssistant, transcript.Part{Type: transcript.PartToolCall, Name: name, ID: id, Input: in})
	return s.add(transcript.RoleTool, transcript.Part{Type: transcript.PartToolResult, ID: id, Name: name, Output: output, IsError: isError})
}

// ok and fail add a shell command that succeeded or failed with output.
func (s *script) ok(cmd, output string) *script {
	return s.tool("exec", map[string]string{"command": cmd}, output, false)
}
func (s *script) fail(cmd, output string) *script {
	return s.tool("exec", map[string]string{"command": cmd}, output+"\n\n(Command exited with code 1)", true)
}
func (s *script) edit(path string) *script {
	return s.tool("edit", map[string]string{"file_path": path, "oldText": "a", "newText": "b"}, "Successfully replaced text.", false)
}

func TestRulesCases(t *testing.T) {
	cases := []struct {
		name string
		s    *script
		// want lists the types of each candidate; contains, when set, must
		// be in the first candidate's content.
		want     [][]string
		contains string
	}{
		// Remarks that look like preferences or reminders.
		{name: "one-off don't", s: newScript().user("Write the migration, but don't run it yet.")},
		{name: "don't worry", s: newScript().user("Don't worry about the lint warnings.")},
		{name: "question with always", s: newScript().user("Do you always run the tests first?")},
		{name: "always as a remark", s: newScript().user("Always happy to see green builds!")},
		{name: "never mind", s: newScript().user("Never mind, I found it.")},
		{name: "remember when", s: newScript().user("Remember when we fixed the flaky build last week?")},
		{name: "cannot remember", s: newScript().user("I can't remember that command, what was it?")},
		{name: "use without instead", s: newScript().user("Use the file I sent earlier.")},
		{name: "stop doing that", s: newScript().user("Stop doing that.")},
		{name: "stop the server", s: newScript().user("Stop the dev server.")},
		{name: "preference in a code block", s: newScript().user("Here is the file:\n```js\n// always use strict mode\n'use strict';\n```\nwhat does it do?")},
		{name: "reminder inserted by the runtime", s: newScript().user("<system-reminder>Remember that you must keep the todo list updated.</system-reminder>\nfix the lint errors")},
		{name: "preference quoted", s: newScript().user("> always use tabs\nthat's what the old README said, is it still true?")},
		// Stated preferences, corrections and reminders.
		{name: "remember with colon", s: newScript().user("please remember: deploys only happen on Tuesdays"), want: [][]string{{"definition"}}, contains: "Deploys only happen on Tuesdays."},
		{name: "keep in mind", s: newScript().user("Keep in mind that the API rate-limits at 100 requests per second."), want: [][]string{{"definition"}}},
		{name: "for future reference", s: newScript().user("for future reference, the VPN must be on to reach grafana"), want: [][]string{{"definition"}}},
		{name: "remember a preference", s: newScript().user("Remember that I prefer small commits."), want: [][]string{{"user_profile"}}},
		{name: "remember when to do what", s: newScript().user("Remember: when the cache is stale, run `make cache-bust` first."), want: [][]string{{"usecase"}}, contains: "Run `make cache-bust` first."},
		{name: "channel envelope", s: newScript().user("[Telegram Maria id:4471 +2m 2026-03-02 10:42] remember that the NAS is reachable as nas.local"), want: [][]string{{"definition"}}},
		{name: "use instead of", s: newScript().user("use bun instead of npm for scripts"), want: [][]string{{"user_profile"}}},
		{name: "stop doing something", s: newScript().user("Stop committing directly to main."), want: [][]string{{"user_profile"}}},
		{name: "i prefer", s: newScript().user("I prefer tabs over spaces in Go files."), want: [][]string{{"user_profile"}}},
		{name: "we use", s: newScript().user("We use conventional commits here."), want: [][]string{{"user_profile"}}},
		{name: "from now on", s: newScript().user("ok. From now on, answer in German."), want: [][]string{{"user_profile"}}},
		{name: "condition kept", s: newScript().user("If the e2e suite fails on CI, always rerun it once before digging in."), want: [][]string{{"user_profile"}},
			contains: "If the e2e suite fails on CI, always rerun it once before digging in."},
		{
			name: "correction names the command",
			s:    newScript().user("install deps").fail("yarn install", "error This project's package.json defines \"packageManager\": \"pnpm@9.1.0\"").user("no, never use yarn here"),
			want: [][]string{{"user_profile"}}, contains: "after the agent ran `yarn install`",
		},
		// Failures and fixes.
		{name: "grep finds nothing, then something", s: newScript().fail("grep -r TODO src", "").ok("grep -ri todo src", "src/a.go: // todo")},
		{name: "missing directory, then ls -la", s: newScript().fail("ls build", "ls: build: No such file or directory").ok("ls -la", "total 8")},
		{name: "flaky retry", s: newScript().fail("npm ci", "npm ERR! network ECONNRESET").ok("npm ci", "added 3 packages")},
		{
			name: "same command after too many others",
			s: newScript().fail("make deploy", "error: missing token").ok("make clean", "").ok("make deps", "").
				ok("make gen", "").ok("make deploy", "deployed"),
		},
		{
			name: "test failure, then a narrower run",
			s: newScript().fail("npm test", "FAIL src/a.test.ts\nAssertionError: expected 1 to be 2\nTests  1 failed | 9 passed").
				ok("npx vitest --run src/b.test.ts --bail=1", "Tests 3 passed"),
		},
		{name: "unrelated success", s: newScript().fail("make deploy", "error: missing token").ok("docker compose up -d", "Started")},
		{name: "fixed by an edit", s: newScript().fail("go build ./...", "main.go:3:2: undefined: foo").edit("main.go").ok("go build ./...", "")},
		{
			name: "fixed by a flag after a test-runner wrapper",
			s:    newScript().fail("npm test", "vitest watch mode\nCommand timed out after 60 seconds").ok("npm test -- --run", "Tests 9 passed"),
			want: [][]string{{"strategy", "tool"}}, contains: "Add `-- --run`",
		},
		{
			name: "fixed by a flag, explained",
			s: newScript().fail("curl https://internal.example.com/health", "curl: (60) SSL certificate problem: unable to get local issuer certificate").
				say("The internal CA is not in the system store, so curl needs the CA bundle.").
				ok("curl --cacert ~/ca/internal.pem https://internal.example.com/health", `{"ok":true}`),
			want: [][]string{{"strategy", "tool"}}, contains: "The internal CA is not in the system store, so curl needs the CA bundle.",
		},
		{
			name: "docker-compose to docker compose",
			s:    newScript().fail("docker-compose up -d", "zsh:1: command not found: docker-compose").ok("docker compose up -d", "Container api Started"),
			want: [][]string{{"strategy"}}, contains: "Use `docker compose up -d` instead of `docker-compose up -d`.",
		},
		{
			name: "git push after pull --rebase",
			s: newScript().fail("git push", " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs").
				ok("git pull --rebase", "Successfully rebased and updated refs/heads/main.").ok("git push", "main -> main"),
			want: [][]string{{"strategy"}}, contains: "Run `git pull --rebase` first; then `git push` succeeds.",
		},
		// Tool retries.
		{
			name: "retry with another target",
			s: newScript().tool("notion_fetch", map[string]string{"page": "Q3 plan", "url": "https://notion.so/a"}, "not found", true).
				tool("notion_fetch", map[string]string{"page": "Q3 plan", "url": "https://notion.so/b"}, "ok", false),
		},
		{
			name: "retry with another setting",
			s: newScript().tool("http_request", map[string]any{"url": "https://api.example.com/export", "timeout_ms": 10000}, "timeout after 10000ms", true).
				tool("http_request", map[string]any{"url": "https://api.example.com/export", "timeout_ms": 60000}, `{"rows": 120000}`, false),
			want: [][]string{{"tool", "strategy"}}, contains: `{"timeout_ms":60000}`,
		},
		// Confirmations.
		{name: "thanks is not a confirmation", s: newScript().user("find big files").ok("find . -size +50M", "./a.bin").user("thanks!")},
		{name: "confirmed command without flags", s: newScript().user("rebuild the docs please").ok("make docs", "done").user("perfect")},
		{name: "confirmed after an edit", s: newScript().user("fix the typo in the README").edit("README.md").ok("git diff --stat", "1 file changed").user("perfect")},
		{
			name: "confirmed command",
			s:    newScript().user("Could you show which process holds port 8080?").ok("lsof -nP -iTCP:8080 -sTCP:LISTEN", "node 4242 maria 23u IPv6 TCP *:8080 (LISTEN)").user("that did it, thanks"),
			want: [][]string{{"tool"}}, contains: "`lsof -nP -iTCP:8080 -sTCP:LISTEN`",
		},
		// Plans.
		{
			name: "plan not carried out",
			s: newScript().user("Release v2:\n1. Bump the version\n2. Build the packages\n3. Publish to npm\n4. Tag the release").
				ok("npm version minor", "v2.1.0").ok("npm run build", "built"),
		},
		{
			name: "agent's plan carried out",
			s: newScript().user("Rotate the staging TLS certificate.").
				say("Plan:\n1. Issue a new certificate with certbot\n2. Upload it to the load balancer\n3. Reload nginx\n4. Verify the expiry date").
				ok("certbot certonly --dns-cloudflare -d staging.example.com", "Successfully received certificate.").
				ok("aws elbv2 modify-listener --listener-arn arn:aws:elasticloadbalancing:eu-west-1:1:listener/x --certificates CertificateArn=arn:aws:acm:eu-west-1:1:certificate/y", "{}").
				ok("sudo systemctl reload nginx", "").
				ok("openssl s_client -connect staging.example.com:443 </dev/null | openssl x509 -noout -enddate", "notAfter=Jun  1 10:00:00 2026 GMT").
				say("Done, the new certificate is live until June 1."),
			want: [][]string{{"plan"}}, contains: "3. Reload nginx: `sudo systemctl reload nginx`",
		},
		{
			name: "numbered questions are not a plan",
			s: newScript().user("A few questions:\n1. What does the worker do?\n2. Where is it configured?\n3. Who owns it?").
				ok("cat worker/README.md", "The worker sends emails."),
		},
	}
	rules := NewRules()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rules.Extract(context.Background(), c.s.t, 5)
			if err != nil {
				t.Fatal(err)
			}
			var types [][]string
			for _, g := range got {
				types = append(types, g.Types)
			}
			if !slices.EqualFunc(types, c.want, slices.Equal) {
				t.Fatalf("types = %v, want %v; candidates:\n%s", types, c.want, dump(got))
			}
			if c.contains != "" && !strings.Contains(got[0].Content, c.contains) {
				t.Errorf("content %q lacks %q", got[0].Content, c.contains)
			}
		})
	}
}

// dump renders candidates for a failure message.
func dump(cs []Candidate) string {
	b, _ := json.MarshalIndent(cs, "", "  ")
	return string(b)
}

func TestRulesNeverQuoteSecrets(t *testing.T) {
	san := newTestSanitizer(t)
	s := newScript().
		user("remember that the deploy token is "+fakeGitHubPAT+" and ops mail is ops@example.com").
		fail("curl -H 'Authorization: Bearer "+fakeBearer+"' https://api.example.com/v1/deploy", "curl: (6) Could not resolve host: api.example.com").
		ok("curl --resolve api.example.com:443:10.0.0.7 -H 'Authorization: Bearer "+fakeBearer+"' https://api.example.com/v1/deploy", `{"ok":true}`)
	got, err := NewRules().Extract(context.Background(), san.Transcript(s.t, transcript.Strict), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("want a definition and a strategy:\n%s", dump(got))
	}
	out := dump(got)
	for _, leak := range []string{fakeGitHubPAT, fakeBearer, "ops@example.com", "10.0.0.7"} {
		if strings.Contains(out, leak) {
			t.Errorf("candidates quote %q:\n%s", leak, out)
		}
	}
}
