// Package redacttest holds fake secrets for tests of every stage that
// must not persist one. Secrets are built at run time from a seeded
// generator, so that no file holds a literal that secret scanners would
// report.
package redacttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/knowhub/knowhub/internal/contract"
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

// Fake returns n pseudo-random bytes of alphabet, the same for the same
// seed.
func Fake(seed uint64, alphabet string, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x6b6e6f77687562))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// Secret is one planted secret in its surrounding text.
type Secret struct {
	Name          string
	Before, Value string
	After         string
	Kind          string // the finding kind redact reports
}

// Text returns the secret in its surrounding text.
func (s Secret) Text() string { return s.Before + s.Value + s.After }

// Planted returns one realistic fake secret of each default kind of
// redact.New's rules (20 kinds), in the text around it: a quote, a name,
// a URL. The same call returns the same secrets.
func Planted() []Secret {
	jwtHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u-4821","name":"Jane Roe","iat":1716239022}`))
	// The fixed start of every unencrypted OpenSSH ed25519 key, runs of A
	// included.
	openssh := "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"QyNTUxOQAAACA" + Fake(110, b64, 51) + "\n"
	var pem strings.Builder
	for i := range 12 {
		pem.WriteString(Fake(uint64(100+i), b64, 64) + "\n")
	}
	return []Secret{
		{"openai project key", "export OPENAI_API_KEY=", "sk-" + "proj-" + Fake(1, b64url, 156), "\n", "openai-api-key"},
		{"openai marked key", "key: ", "sk-" + "proj-" + Fake(2, b64url, 74) + "T3Blbk" + "FJ" + Fake(3, b64url, 74), "\n", "openai-api-key"},
		{"openai legacy key", `client = OpenAI(api_key="`, "sk-" + Fake(4, alnum, 48), `")`, "openai-api-key"},
		{"anthropic api key", "ANTHROPIC_API_KEY=", "sk-" + "ant-api03-" + Fake(5, b64url, 93) + "AA", "\n", "anthropic-api-key"},
		{"anthropic oauth token", "token ", "sk-" + "ant-oat01-" + Fake(6, b64url, 80), " expires", "anthropic-api-key"},
		{"openrouter key", "OPENROUTER_API_KEY=", "sk-" + "or-v1-" + Fake(7, hexDig, 64), "\n", "openrouter-api-key"},
		{"github classic pat", "git clone https://x:", "gh" + "p_" + Fake(8, alnum, 36), "@github.com/o/r", "github-pat"},
		{"github fine-grained pat", "GH_TOKEN=", "github" + "_pat_" + Fake(9, alnum+"_", 82), "\n", "github-pat"},
		{"github oauth", "token: ", "gh" + "o_" + Fake(10, alnum, 36), "\n", "github-oauth"},
		{"github user-to-server", "token: ", "gh" + "u_" + Fake(11, alnum, 36), "\n", "github-app-token"},
		{"github server-to-server", "token: ", "gh" + "s_" + Fake(12, alnum, 36), "\n", "github-app-token"},
		{"github refresh", "refresh ", "gh" + "r_" + Fake(13, alnum, 36), "\n", "github-refresh-token"},
		{"slack bot", "SLACK_BOT_TOKEN=", "xo" + "xb-" + Fake(14, digits, 12) + "-" + Fake(15, digits, 13) + "-" + Fake(16, alnum, 24), "\n", "slack-token"},
		{"slack user", "slack: ", "xo" + "xp-" + Fake(17, digits, 12) + "-" + Fake(18, digits, 12) + "-" + Fake(19, digits, 12) + "-" + Fake(20, hexDig, 32), "\n", "slack-token"},
		{"slack app-level", "appToken: ", "xo" + "xa-2-" + Fake(21, alnum, 40), "\n", "slack-token"},
		{"slack refresh", "refresh: ", "xo" + "xr-" + Fake(22, alnum, 40), "\n", "slack-token"},
		{"slack legacy", "legacy ", "xo" + "xs-" + Fake(23, digits, 10) + "-" + Fake(24, digits, 11) + "-" + Fake(25, digits, 12) + "-" + Fake(26, hexDig, 64), "\n", "slack-token"},
		{"slack webhook", "url: ", "https://hooks.slack.com/services/" + "T" + Fake(27, upperAN, 8) + "/B" + Fake(28, upperAN, 10) + "/" + Fake(29, alnum, 24), "\n", "slack-webhook"},
		{"aws access key id", "aws_access_key_id = ", "AK" + "IA" + Fake(30, b32, 16), "\n", "aws-access-key"},
		{"aws session key id", "AWS_ACCESS_KEY_ID=", "AS" + "IA" + Fake(31, b32, 16), "\n", "aws-access-key"},
		{"aws secret key", "aws_secret_access_key = ", Fake(32, b64, 40), "\n", "aws-secret-key"},
		{"aws secret in json", `"SecretAccessKey": "`, Fake(45, b64, 40), `",`, "aws-secret-key"},
		{"google api key", `"apiKey": "`, "AI" + "za" + Fake(33, b64url, 35), `",`, "gcp-api-key"},
		{"google api key in url", "<script src=\"https://maps.googleapis.com/maps/api/js?key=", "AI" + "za" + Fake(46, b64url, 35), "&callback=init\">", "gcp-api-key"},
		{"stripe key in list", `keys: ["`, "sk" + "_live_" + Fake(47, alnum, 24), `","other"]`, "stripe-key"},
		{"jwt in query", "https://app.example.com/cb?token=", jwtHeader + "." + jwtClaims + "." + Fake(48, b64url, 43), "&next=/", "jwt"},
		{"stripe live secret", "STRIPE_KEY=", "sk" + "_live_" + Fake(34, alnum, 24), "\n", "stripe-key"},
		{"stripe restricted", "key ", "rk" + "_live_" + Fake(35, alnum, 24), "\n", "stripe-key"},
		{"stripe test secret", "key ", "sk" + "_test_" + Fake(36, alnum, 24), "\n", "stripe-key"},
		{"jwt", "session=", jwtHeader + "." + jwtClaims + "." + Fake(37, b64url, 43), "\n", "jwt"},
		{"rsa private key", "key.pem:\n", "-----BEGIN RSA " + "PRIVATE KEY-----\n" + pem.String() + "-----END RSA " + "PRIVATE KEY-----", "\ndone\n", "private-key"},
		{"openssh private key", "", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + openssh + pem.String() + "-----END OPENSSH " + "PRIVATE KEY-----", "\n", "private-key"},
		{"authorization bearer", "Authorization: Bearer ", Fake(38, alnum+"-._~", 40), "\r\n", "bearer-token"},
		{"bearer in prose", "then send bearer ", Fake(39, alnum, 32), " with it", "bearer-token"},
		{"bearer of letters", "Authorization: Bearer ", Fake(44, alnum[:52], 32), "\n", "bearer-token"},
		{"url password", "DATABASE_URL=postgres://app:", Fake(40, alnum, 20), "@db.internal:5432/app\n", "url-password"},
		{"generic password", `password = "`, Fake(41, alnum+"!#%&*", 20), `"`, "generic-secret"},
		{"generic api_key", "api_key: ", Fake(42, alnum, 32), "\n", "generic-secret"},
		{"generic secret", "client_secret=", Fake(43, alnum, 40), "\n", "generic-secret"},
		{"npm token", "//registry.npmjs.org/:_authToken=", "np" + "m_" + Fake(49, alnum, 36), "\n", "npm-access-token"},
		{"sendgrid key", "SENDGRID_API_KEY=", "S" + "G." + Fake(50, b64url, 22) + "." + Fake(51, b64url, 43), "\n", "sendgrid-api-token"},
	}
}

// Tool returns a core tool named name with every planted secret, in the
// text that makes it one, in its description, its keywords (those that
// fit the catalog's 32 keywords of 64 bytes) and every kind of string of
// its input schema, nested: descriptions, enum values, defaults, examples
// and property names.
func Tool(name string) contract.Tool {
	var desc strings.Builder
	var kws []string
	props := map[string]any{}
	for i, s := range Planted() {
		desc.WriteString(s.Text() + "\n")
		if len(s.Text()) <= 64 && len(kws) < 32 {
			kws = append(kws, s.Text())
		}
		props[fmt.Sprintf("p%02d", i)] = map[string]any{
			"type":        "string",
			"description": "Pass " + s.Text() + " here.",
			"enum":        []any{s.Text(), "other"},
			"default":     s.Text(),
			"examples":    []any{s.Text(), map[string]any{"nested": []any{s.Text()}}},
		}
		props[s.Text()] = map[string]any{"type": "string"}
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "description": desc.String(), "properties": props})
	if err != nil {
		panic(err) // maps of strings always encode
	}
	return contract.Tool{Name: name, Type: contract.ToolCore, Description: desc.String(), Keywords: kws, InputSchema: schema}
}

// Escaped returns s as it appears inside a JSON string.
func Escaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// Punctuated returns secrets where text people write puts them: tokens
// followed by the punctuation of sentences, lists, calls and URLs, and
// passwords and AWS secret keys named in sentences ("the db password is
// x."). Name says which; Before is the whole text and Value the secret.
func Punctuated() []Secret {
	npm := "np" + "m_" + Fake(200, alnum, 36)
	sg := "S" + "G." + Fake(201, b64url, 22) + "." + Fake(202, b64url, 43)
	// An AWS secret key with the '/' and '+' that end-of-token checks
	// trip on.
	aws := Fake(203, b64, 18) + "/" + Fake(204, b64, 10) + "+" + Fake(205, b64, 10)
	pw := Fake(206, alnum, 8) + "!" + Fake(207, digits, 3)
	var out []Secret
	add := func(name, kind, secret, text string) {
		i := strings.Index(text, secret)
		out = append(out, Secret{Name: name, Before: text[:i], Value: secret, After: text[i+len(secret):], Kind: kind})
	}
	for _, tok := range []struct{ name, kind, secret string }{{"npm", "npm-access-token", npm}, {"sendgrid", "sendgrid-api-token", sg}} {
		for _, end := range []string{".", ",", ")", "&", "]", "}", "<", "|"} {
			add(tok.name+" then "+end, tok.kind, tok.secret, "the token ("+tok.secret+end+" next")
		}
		add(tok.name+" ends a sentence", tok.kind, tok.secret, "Publish with "+tok.secret+".")
		add(tok.name+" in a query", tok.kind, tok.secret, "https://example.com/hook?key="+tok.secret+"&next=1")
		add(tok.name+" in a list", tok.kind, tok.secret, "tokens: "+tok.secret+", and more; done")
	}
	add("aws assignment ends a sentence", "aws-secret-key", aws, "Set aws_secret_access_key = "+aws+".")
	add("aws sentence", "aws-secret-key", aws, "The AWS secret key is "+aws+".")
	add("aws access key sentence", "aws-secret-key", aws, "Our aws secret access key: "+aws+". Rotate it.")
	add("password colon", "generic-secret", pw, "password: "+pw)
	add("password colon ends a sentence", "generic-secret", pw, "Log in with password: "+pw+".")
	add("db password is", "generic-secret", pw, "the db password is "+pw)
	add("password for prod is", "generic-secret", pw, "The password for prod is "+pw+", keep it safe.")
	add("env password", "generic-secret", pw, "DB_PASSWORD="+pw+"\n")
	add("quoted password is", "generic-secret", pw, "the passphrase is '"+pw+"'.")
	return out
}
