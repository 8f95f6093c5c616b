package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// wantErr fails unless err mentions every one of wants.
func wantErr(t testing.TB, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

// parse parses doc with t.TempDir() as the base directory.
func parse(t testing.TB, doc string) (*Config, error) {
	t.Helper()
	return Parse([]byte(doc), t.TempDir())
}

func TestDefaults(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default() does not validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"dataDir", c.DataDir, ".knowhub"},
		{"nats.listen", c.NATS.Listen, "127.0.0.1:4222"},
		{"nats.url", c.NATS.URL, "nats://127.0.0.1:4222"},
		{"nats.maxPayload", c.NATS.MaxPayload, 8 << 20},
		{"nats.bufferLimit", c.NATS.BufferLimit, 16 << 20},
		{"http.listen", c.HTTP.Listen, "127.0.0.1:7700"},
		{"http.maxBodyBytes", c.HTTP.MaxBodyBytes, int64(1 << 20)},
		{"chunker.chunkMaxTokens", c.Chunker.ChunkMaxTokens, 800},
		{"watcher.debounceMs", c.Watcher.DebounceMS, 150},
		{"watcher.maxFileBytes", c.Watcher.MaxFileBytes, int64(4 << 20)},
		{"query.defaultTopK", c.Query.DefaultTopK, 10},
		{"query.maxTopK", c.Query.MaxTopK, 100},
		{"query.semantic", c.Query.Semantic, true},
		{"repositories", len(c.Repositories), 0},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestParseEmptyObjectIsDefault(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse([]byte(`{}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.DataDir = filepath.Join(dir, ".knowhub")
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse({}) = %+v\nwant %+v", c, want)
	}
}

func TestRepositoryDefaults(t *testing.T) {
	c, err := parse(t, `{"repositories":[{"name":"docs","path":"/srv/docs"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Repositories[0]
	if r.Priority != 100 || r.Type != contract.RepoCore || r.Glob != "**/*.{md,mdx}" || r.Exclude != nil {
		t.Errorf("defaults not applied: %+v", r)
	}
	if got := r.Meta(); !reflect.DeepEqual(got, contract.RepoMeta{Priority: 100, Type: "core"}) {
		t.Errorf("Meta() = %+v", got)
	}
}

// A present key replaces its default even when it is the zero value; null
// keeps the default.
func TestPresentZeroValues(t *testing.T) {
	c, err := parse(t, `{
		"http": {"listen": ""},
		"watcher": {"debounceMs": 0, "maxFileBytes": null},
		"repositories": [{"name": "docs", "path": "/d", "exclude": []}]
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Enabled() {
		t.Errorf("http.listen \"\" should disable HTTP, got %q", c.HTTP.Listen)
	}
	if c.Watcher.DebounceMS != 0 || c.Watcher.MaxFileBytes != DefaultMaxFileBytes {
		t.Errorf("watcher = %+v", c.Watcher)
	}
	if c.Repositories[0].Exclude == nil || len(c.Repositories[0].Exclude) != 0 {
		t.Errorf("exclude = %#v, want an empty list", c.Repositories[0].Exclude)
	}
	off, err := parse(t, `{"http": {"listen": "off"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if off.HTTP.Enabled() {
		t.Error(`http.listen "off" should disable HTTP`)
	}
}

func TestOpenClawShape(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c, err := parse(t, `{"repositories":[{"name":"openclaw","path":"~/openclaw/docs","priority":1,"type":"core","glob":"**/*.md"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Repository{Name: "openclaw", Path: filepath.Join(home, "openclaw", "docs"), Priority: 1, Type: "core", Glob: "**/*.md"}
	if !reflect.DeepEqual(c.Repositories, []Repository{want}) {
		t.Errorf("repositories = %+v, want %+v", c.Repositories, want)
	}
}

// The example file is complete but for its tokens: loading it as it is
// fails on each placeholder token, naming it and never echoing it, and
// with random tokens in their place it loads.
func TestExampleFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	path := filepath.Join("..", "..", "knowhub.example.json")
	_, loadErr := Load(path)
	wantErr(t, loadErr, `http.tokens[0].token: the token of "local-agent" is a placeholder`,
		`http.tokens[1].token: the token of "operator" is a placeholder`, "openssl rand -hex 24")
	if n := strings.Count(loadErr.Error(), "\n"); n != 2 {
		t.Errorf("want the two placeholder tokens as the only problems, got:\n%v", loadErr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HTTP struct{ Tokens []Token } `json:"http"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for i, tok := range doc.HTTP.Tokens {
		if strings.Contains(loadErr.Error(), tok.Token) {
			t.Errorf("the error echoes token %d", i)
		}
		data = bytes.Replace(data, []byte(tok.Token), fmt.Appendf(nil, "%024x", i+1), 1)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Repositories) != 2 {
		t.Fatalf("repositories = %+v", c.Repositories)
	}
	if got, want := c.Repositories[0].Path, filepath.Join(root, "docs"); got != want {
		t.Errorf("repositories[0].path = %q, want %q", got, want)
	}
	if got, want := c.Repositories[1].Path, filepath.Join(home, "openclaw", "docs"); got != want {
		t.Errorf("repositories[1].path = %q, want %q", got, want)
	}
	if got, want := c.DataDir, filepath.Join(root, ".knowhub"); got != want {
		t.Errorf("dataDir = %q, want %q", got, want)
	}
}

// The API answers to the allowed hosts and to the listen address's host
// when it is a name; IP addresses need no entry.
func TestHTTPHosts(t *testing.T) {
	for _, tt := range []struct {
		listen  string
		allowed []string
		want    []string
	}{
		{"127.0.0.1:7700", nil, nil},
		{"0.0.0.0:7700", []string{"knowhub"}, []string{"knowhub"}},
		{":7700", nil, nil},
		{"[::1]:7700", nil, nil},
		{"kb.lan:7700", []string{"kb.example.com"}, []string{"kb.example.com", "kb.lan"}},
	} {
		h := HTTP{Listen: tt.listen, AllowedHosts: tt.allowed}
		if got := h.Hosts(); !slices.Equal(got, tt.want) {
			t.Errorf("Hosts() listening on %s with %v = %v, want %v", tt.listen, tt.allowed, got, tt.want)
		}
	}
	c := valid()
	c.HTTP.AllowedHosts = []string{"knowhub", "kb.example.com", "kb.example.com.", "10.0.0.7", "my_host"}
	if err := c.Validate(); err != nil {
		t.Errorf("valid allowedHosts refused: %v", err)
	}
}

func TestPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	base := t.TempDir()
	tests := []struct {
		path, want string
	}{
		{"~", home},
		{"~/docs", filepath.Join(home, "docs")},
		{"docs", filepath.Join(base, "docs")},
		{"./a/../docs", filepath.Join(base, "docs")},
		{"../up", filepath.Join(filepath.Dir(base), "up")},
		{"/abs/docs", "/abs/docs"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc := `{"repositories":[{"name":"r","path":` + quote(tt.path) + `}],
				"nats":{"credsFile":` + quote(tt.path) + `}}`
			c, err := Parse([]byte(doc), base)
			if err != nil {
				t.Fatal(err)
			}
			if c.Repositories[0].Path != tt.want {
				t.Errorf("repository path = %q, want %q", c.Repositories[0].Path, tt.want)
			}
			if c.NATS.CredsFile != tt.want {
				t.Errorf("credsFile = %q, want %q", c.NATS.CredsFile, tt.want)
			}
		})
	}
	_, err := Parse([]byte(`{"repositories":[{"name":"r","path":"~bob/docs"}]}`), base)
	wantErr(t, err, `repositories[0].path: "~bob/docs"`, "~user")
}

func TestLoadResolvesAgainstConfigDir(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "etc")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "knowhub.json")
	doc := `{"dataDir":"state","repositories":[{"name":"docs","path":"../docs"}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // the working directory must not matter
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Repositories[0].Path, filepath.Join(dir, "docs"); got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := c.DataDir, filepath.Join(sub, "state"); got != want {
		t.Errorf("dataDir = %q, want %q", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want ErrNotExist", err)
	}

	file := filepath.Join(t.TempDir(), "bad.json")
	doc := `{"repositories":[{"name":"a b","path":""}]}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(file)
	wantErr(t, err, "config "+file+":\n", "  repositories[0].name:", "  repositories[0].path: required")
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "repositories[0].name" {
		t.Errorf("errors.As(*FieldError) = %+v", fe)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"unknown top-level key", `{"dataDri": "x"}`, []string{`unknown field "dataDri"`}},
		{"removed key", `{"query":{"allProcessors":true}}`, []string{`query.allProcessors: no longer exists`, `GOMAXPROCS`}},
		{"unknown repository key", `{"repositories":[{"name":"a","path":"/a"},{"name":"b","path":"/b","prio":1}]}`,
			[]string{`repositories[1]: unknown field "prio"`}},
		{"unknown nested key", `{"nats":{"urls":"x"}}`, []string{`nats: unknown field "urls"`}},
		{"unknown key in token", `{"http":{"tokens":[{"token":"t","scopes":["s"],"scope":"x"}]}}`,
			[]string{`http.tokens[0]: unknown field "scope"`}},
		{"wrong case suggests", `{"repositories":[{"Name":"a","path":"/a"}]}`,
			[]string{`repositories[0]: unknown field "Name" (did you mean "name"?)`}},
		{"priority as string", `{"repositories":[{"name":"a","path":"/a","priority":"high"}]}`,
			[]string{`repositories[0].priority: must be an integer`}},
		{"priority as fraction", `{"repositories":[{"name":"a","path":"/a","priority":1.5}]}`,
			[]string{`repositories[0].priority: must be an integer`}},
		{"priority out of range", `{"repositories":[{"name":"a","path":"/a","priority":1e400}]}`,
			[]string{`repositories[0].priority: must be an integer`}},
		{"huge integer", `{"chunker":{"chunkMaxTokens":99999999999999999999}}`,
			[]string{`chunker.chunkMaxTokens: is out of range`}},
		{"name as number", `{"repositories":[{"name":5,"path":"/a"}]}`, []string{`repositories[0].name: must be a string`}},
		{"size as string", `{"watcher":{"maxFileBytes":"4MB"}}`, []string{`watcher.maxFileBytes: must be an integer`}},
		{"repositories not array", `{"repositories":{"name":"a"}}`, []string{`repositories: must be an array`}},
		{"repository not object", `{"repositories":["docs"]}`, []string{`repositories[0]: must be an object`}},
		{"exclude element", `{"repositories":[{"name":"a","path":"/x","exclude":["a/**",3]}]}`, []string{`repositories[0].exclude[1]: must be a string`}},
		{"demote element", `{"repositories":[{"name":"a","path":"/x","demote":["v1/**",3]}]}`, []string{`repositories[0].demote[1]: must be a string`}},
		{"nats not object", `{"nats":"nats://x"}`, []string{`nats: must be an object`}},
		{"duplicate key", `{"dataDir":"a","dataDir":"b"}`, []string{`dataDir: appears more than once`}},
		{"not an object", `[1,2]`, []string{`must be a JSON object`}},
		{"syntax error", "{\n  \"dataDir\": \"x\",\n}", []string{"line 3, column 1:", "invalid character '}'"}},
		{"empty", ``, []string{"unexpected end of JSON input"}},
		{"trailing garbage", `{} x`, []string{"invalid character 'x' after top-level value"}},
		{"all problems at once", `{"nats":{"port":1},"repositories":[{"name":"a","path":"/a","priority":"x","weight":2}]}`,
			[]string{`nats: unknown field "port"`, `repositories[0].priority: must be an integer`, `repositories[0]: unknown field "weight"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.doc)
			wantErr(t, err, tt.want...)
			if strings.Contains(err.Error(), "json: ") {
				t.Errorf("raw encoding/json message leaked: %v", err)
			}
		})
	}
}

// valid returns a configuration that validates, for tests to break.
func valid() *Config {
	c := Default()
	c.Repositories = []Repository{
		{Name: "docs", Path: "/srv/docs", Priority: 10, Type: "core", Glob: DefaultGlob},
		{Name: "ext", Path: "/srv/ext", Priority: 100, Type: "extension", Glob: "**/*.md", Exclude: []string{"node_modules/**"}},
	}
	c.HTTP.Tokens = []Token{{Name: "agent", Token: "0123456789abcdef", Scopes: []string{"search"}}}
	c.Redaction.Patterns = []Pattern{{Name: "ikey", Regex: `ikey_[a-z0-9]{8,}`, Keywords: []string{"ikey_"}}}
	return c
}

func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid() does not validate: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"dataDir", func(c *Config) { c.DataDir = "" }, "dataDir: required"},

		{"repo name invalid", func(c *Config) { c.Repositories[0].Name = "bad name!" },
			`repositories[0].name: "bad name!" is not a valid repository name (letters, digits, _ and - only)`},
		{"repo name dot", func(c *Config) { c.Repositories[0].Name = "a.b" }, `repositories[0].name: "a.b" is not a valid`},
		{"repo name long", func(c *Config) { c.Repositories[1].Name = strings.Repeat("a", 65) }, "is longer than 64 characters"},
		{"repo name missing", func(c *Config) { c.Repositories[1].Name = "" }, "repositories[1].name: required"},
		{"repo name duplicate", func(c *Config) { c.Repositories[1].Name = "docs" },
			`repositories[1].name: "docs" is also the name of repositories[0]`},
		{"repo path", func(c *Config) { c.Repositories[1].Path = "" }, "repositories[1].path: required"},
		{"repo priority zero", func(c *Config) { c.Repositories[0].Priority = 0 }, "repositories[0].priority: must be a number of at least 1"},
		{"repo priority negative", func(c *Config) { c.Repositories[1].Priority = -3 }, "repositories[1].priority: must be a number of at least 1 (1 is the most authoritative), not -3"},
		{"repo type", func(c *Config) { c.Repositories[0].Type = "primary" }, `repositories[0].type: must be "core" or "extension"`},
		{"repo type empty", func(c *Config) { c.Repositories[0].Type = "" }, `repositories[0].type: must be "core" or "extension"`},
		{"repo glob invalid", func(c *Config) { c.Repositories[0].Glob = "**/*.{md" }, `repositories[0].glob: "**/*.{md" is not a valid glob`},
		{"repo glob empty", func(c *Config) { c.Repositories[0].Glob = "" }, "repositories[0].glob: must not be empty"},
		{"repo glob absolute", func(c *Config) { c.Repositories[0].Glob = "/docs/**" }, "repositories[0].glob: \"/docs/**\" must be relative"},
		{"repo exclude invalid", func(c *Config) { c.Repositories[1].Exclude = []string{"ok/**", "[bad"} },
			`repositories[1].exclude[1]: "[bad" is not a valid glob`},
		{"repo languages empty", func(c *Config) { c.Repositories[0].Languages = []string{} },
			"repositories[0].languages: must list at least one language; leave it out to index every language"},
		{"repo languages invalid", func(c *Config) { c.Repositories[1].Languages = []string{"en", "english"} },
			`repositories[1].languages[1]: "english" is not a language tag (use one like "en", "zh-CN" or "pt-BR")`},
		{"repo languages unknown", func(c *Config) { c.Repositories[0].Languages = []string{"xx"} },
			`repositories[0].languages[0]: "xx" is not a language tag`},
		{"repo demote invalid", func(c *Config) { c.Repositories[0].Demote = []string{"v1/**", "[bad"} },
			`repositories[0].demote[1]: "[bad" is not a valid glob`},
		{"repo demote absolute", func(c *Config) { c.Repositories[0].Demote = []string{"/v1/**"} },
			`repositories[0].demote[0]: "/v1/**" must be relative`},

		{"nats listen empty", func(c *Config) { c.NATS.Listen = "" }, "nats.listen: required"},
		{"nats listen bad", func(c *Config) { c.NATS.Listen = "localhost" }, `nats.listen: "localhost" is not host:port`},
		{"nats listen port", func(c *Config) { c.NATS.Listen = "127.0.0.1:99999" }, "nats.listen:"},
		{"nats url empty", func(c *Config) { c.NATS.URL = "" }, "nats.url: required"},
		{"nats url scheme", func(c *Config) { c.NATS.URL = "http://x:4222" }, "nats.url: \"http://x:4222\": scheme must be nats, tls, ws or wss"},
		{"nats url list", func(c *Config) { c.NATS.URL = "nats://a:4222,,nats://b:4222" }, "nats.url: empty server in list"},
		{"nats auth twice", func(c *Config) { c.NATS.Token = "t"; c.NATS.CredsFile = "/c" },
			"nats: set only one of credsFile, nkeyFile, token and user (found credsFile, token)"},
		{"nats password alone", func(c *Config) { c.NATS.Password = "p" }, "nats.password: requires nats.user"},
		{"nats tls cert without key", func(c *Config) { c.NATS.TLSCert = "/c.pem" }, "nats.tlsCert: requires nats.tlsKey"},
		{"nats tls key without cert", func(c *Config) { c.NATS.TLSKey = "/k.pem" }, "nats.tlsKey: requires nats.tlsCert"},
		{"nats maxPayload negative", func(c *Config) { c.NATS.MaxPayload = -1 }, "nats.maxPayload: must be positive"},
		{"nats maxPayload huge", func(c *Config) { c.NATS.MaxPayload = 100 << 20 }, "nats.maxPayload: must be at most"},
		{"nats bufferLimit below maxPayload", func(c *Config) { c.NATS.MaxPayload = 32 << 20 }, "nats.bufferLimit: must be at least nats.maxPayload (33554432)"},

		{"http listen bad", func(c *Config) { c.HTTP.Listen = "7700" }, `http.listen: "7700" is not host:port`},
		{"http tls cert without key", func(c *Config) { c.HTTP.TLSCert = "/c.pem" }, "http.tlsCert: requires http.tlsKey"},
		{"http maxBodyBytes negative", func(c *Config) { c.HTTP.MaxBodyBytes = -5 }, "http.maxBodyBytes: must be positive"},
		{"http token empty", func(c *Config) { c.HTTP.Tokens[0].Token = "" }, "http.tokens[0].token: required"},
		{"http token space", func(c *Config) { c.HTTP.Tokens[0].Token = "a b" }, "http.tokens[0].token: must not contain spaces"},
		{"http token duplicate", func(c *Config) { c.HTTP.Tokens = append(c.HTTP.Tokens, c.HTTP.Tokens[0]) },
			"http.tokens[1].token: same token as http.tokens[0]"},
		{"http allowedHosts port", func(c *Config) { c.HTTP.AllowedHosts = []string{"knowhub.internal", "kb.example.com:7700"} },
			`http.allowedHosts[1]: "kb.example.com:7700" is not a host name`},
		{"http allowedHosts scheme", func(c *Config) { c.HTTP.AllowedHosts = []string{"http://kb"} }, `http.allowedHosts[0]: "http://kb" is not a host name`},
		{"http allowedHosts wildcard", func(c *Config) { c.HTTP.AllowedHosts = []string{"*.example.com"} }, `http.allowedHosts[0]:`},
		{"http allowedHosts empty", func(c *Config) { c.HTTP.AllowedHosts = []string{""} }, `http.allowedHosts[0]: "" is not a host name`},
		{"http token short", func(c *Config) { c.HTTP.Tokens[0].Token = "s3cr3t-t0k3n" },
			`http.tokens[0].token: the token of "agent" is shorter than 16 characters: set a random one, such as the output of ` + "`openssl rand -hex 24`"},
		{"http token placeholder", func(c *Config) { c.HTTP.Tokens[0].Token = "REPLACE-ME-with-a-real-token" },
			`http.tokens[0].token: the token of "agent" is a placeholder, not a secret: set a random one`},
		{"http token template", func(c *Config) { c.HTTP.Tokens[0].Token, c.HTTP.Tokens[0].Name = "<operator-token-goes-here>", "" },
			`http.tokens[0].token: the token is a placeholder`},
		{"http token no scopes", func(c *Config) { c.HTTP.Tokens[0].Scopes = nil }, "http.tokens[0].scopes: must list at least one scope"},
		{"http token empty scope", func(c *Config) { c.HTTP.Tokens[0].Scopes = []string{"search", ""} }, "http.tokens[0].scopes[1]: must not be empty"},

		{"pattern name", func(c *Config) { c.Redaction.Patterns[0].Name = "" }, "redaction.patterns[0].name: required"},
		{"pattern name duplicate", func(c *Config) { c.Redaction.Patterns = append(c.Redaction.Patterns, c.Redaction.Patterns[0]) },
			`redaction.patterns[1].name: "ikey" is also the name of redaction.patterns[0]`},
		{"pattern regex missing", func(c *Config) { c.Redaction.Patterns[0].Regex = "" }, "redaction.patterns[0].regex: required"},
		{"pattern regex invalid", func(c *Config) { c.Redaction.Patterns[0].Regex = "(" }, "redaction.patterns[0].regex: error parsing regexp"},
		{"pattern regex empty match", func(c *Config) { c.Redaction.Patterns[0].Regex = "a*" }, "redaction.patterns[0].regex: matches the empty string"},
		{"secret pattern invalid", func(c *Config) { c.Redaction.SecretPatterns = []string{"sk-[a-z]{20,}", "(?=x)key"} },
			"redaction.secretPatterns[1]: error parsing regexp"},
		{"secret pattern empty", func(c *Config) { c.Redaction.SecretPatterns = []string{""} }, "redaction.secretPatterns[0]: must not be empty"},
		{"secret pattern empty match", func(c *Config) { c.Redaction.SecretPatterns = []string{"x?"} },
			"redaction.secretPatterns[0]: matches the empty string"},
		{"pattern keyword empty", func(c *Config) { c.Redaction.Patterns[0].Keywords = []string{""} }, "redaction.patterns[0].keywords[0]: must not be empty"},

		{"chunk tokens low", func(c *Config) { c.Chunker.ChunkMaxTokens = 49 }, "chunker.chunkMaxTokens: must be between 50 and 8000, not 49"},
		{"chunk tokens high", func(c *Config) { c.Chunker.ChunkMaxTokens = 8001 }, "chunker.chunkMaxTokens: must be between 50 and 8000"},
		{"privacy mode", func(c *Config) { c.Extractor.Privacy = "lax" }, `extractor.privacyMode: unknown privacy mode "lax" (strict, relaxed)`},
		{"max entries", func(c *Config) { c.Extractor.MaxEntries = 21 }, "extractor.maxEntries: 21 is outside 0–20"},
		{"transcript limit", func(c *Config) { c.Extractor.Limits.MaxBytes = -1 }, "extractor.limits.maxBytes: -1 is negative"},
		{"llm url", func(c *Config) { c.Extractor.LLM.BaseURL = "ftp://x"; c.Extractor.LLM.Model = "m" }, "extractor.llm.baseURL"},
		{"llm model", func(c *Config) { c.Extractor.LLM.BaseURL = "http://127.0.0.1:11434/v1" }, "extractor.llm.model: required"},
		{"evolution llm url", func(c *Config) {
			c.Knowledge.Evolution.LLM.BaseURL = "127.0.0.1:11434"
			c.Knowledge.Evolution.LLM.Model = "m"
		},
			"knowledge.evolution.llm.baseURL"},
		{"evolution llm timeout", func(c *Config) {
			c.Knowledge.Evolution.LLM = LLM{BaseURL: "http://127.0.0.1:11434/v1", Model: "m"}
		}, "knowledge.evolution.llm.timeoutSeconds: must be at least 1"},
		{"embeddings url", func(c *Config) { c.Semantic.Embeddings.URL = "ftp://x"; c.Semantic.Embeddings.Model = "m" }, "semantic.embeddings.url"},
		{"embeddings model", func(c *Config) { c.Semantic.Embeddings.URL = "http://127.0.0.1:11434/v1" }, "semantic.embeddings.model: required"},
		{"embeddings key", func(c *Config) {
			c.Semantic.Embeddings.URL, c.Semantic.Embeddings.Model, c.Semantic.Embeddings.APIKeyEnv = "http://h/v1", "m", "sk-abc def"
		}, "semantic.embeddings.apiKeyEnv: \"sk-abc def\" is not an environment variable's name"},
		{"embeddings weight", func(c *Config) {
			c.Semantic.Embeddings.URL, c.Semantic.Embeddings.Model, c.Semantic.Embeddings.Weight = "http://h/v1", "m", 1.5
		}, "semantic.embeddings.weight: must be between 0 and 1"},
		{"embeddings batch", func(c *Config) {
			c.Semantic.Embeddings.URL, c.Semantic.Embeddings.Model, c.Semantic.Embeddings.BatchSize = "http://h/v1", "m", 0
		}, "semantic.embeddings.batchSize: must be between 1 and 2048"},
		{"debounce negative", func(c *Config) { c.Watcher.DebounceMS = -1 }, "watcher.debounceMs: must not be negative"},
		{"max file bytes zero", func(c *Config) { c.Watcher.MaxFileBytes = 0 }, "watcher.maxFileBytes: must be positive"},
		{"default topK zero", func(c *Config) { c.Query.DefaultTopK = 0 }, "query.defaultTopK: must be at least 1"},
		{"max topK zero", func(c *Config) { c.Query.MaxTopK = 0 }, "query.maxTopK: must be at least 1"},
		{"default above max", func(c *Config) { c.Query.DefaultTopK = 200 }, "query.defaultTopK: must not exceed query.maxTopK (100)"},
		{"concurrency negative", func(c *Config) { c.Query.Concurrency = -1 }, "query.concurrency: must be at least 0"},
		{"queue negative", func(c *Config) { c.Query.Queue = -1 }, "query.queue: must be at least 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(c)
			err := c.Validate()
			wantErr(t, err, tt.want)
			if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 1 {
				t.Errorf("got %d problems, want 1:\n%v", n, err)
			}
		})
	}
}

func TestValidateReportsEverything(t *testing.T) {
	c := valid()
	c.DataDir = ""
	c.Repositories[0].Name = "bad name!"
	c.Repositories[1].Path = ""
	c.Repositories[1].Type = "x"
	c.Query.MaxTopK = 0
	err := c.Validate()
	wantErr(t, err, "dataDir:", "repositories[0].name:", "repositories[1].path:", "repositories[1].type:", "query.maxTopK:")
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FieldError", e)
		}
		fields = append(fields, fe.Field)
	}
	want := []string{"dataDir", "repositories[0].name", "repositories[1].path", "repositories[1].type", "query.maxTopK"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields = %q, want %q", fields, want)
	}
}

// A URL's password never appears in an error.
func TestValidateRedactsURLCredentials(t *testing.T) {
	c := Default()
	c.NATS.URL = "http://alice:s3cret@host:4222"
	err := c.Validate()
	wantErr(t, err, "nats.url:", "alice")
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestValidateAcceptsNATSURLForms(t *testing.T) {
	for _, u := range []string{
		"nats://127.0.0.1:4222",
		"tls://nats.example.com:4222",
		"nats://a:4222, nats://b:4222,nats://c:4222",
		"ws://localhost:8080",
		"localhost:4222",
		"nats://user:pass@localhost",
	} {
		c := Default()
		c.NATS.URL = u
		if err := c.Validate(); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
}

func TestCheckPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.md")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Repositories = []Repository{
		{Name: "ok", Path: dir},
		{Name: "missing", Path: filepath.Join(dir, "nope")},
		{Name: "file", Path: file},
	}
	err := c.CheckPaths()
	wantErr(t, err, "repositories[1].path:", "no such file", "repositories[2].path:", "is not a directory")
	if strings.Contains(err.Error(), "repositories[0]") {
		t.Errorf("existing directory reported: %v", err)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// The doc-engine plugin's secretPatterns key holds bare regular
// expressions; each becomes one more named rule after the patterns.
func TestSecretPatterns(t *testing.T) {
	c, err := parse(t, `{"redaction":{"patterns":[{"name":"ikey","regex":"ikey_[a-z]{8}"}],"secretPatterns":["CUSTOM-[A-Z]{10}","tok_[0-9]{6}"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Redaction.AllPatterns()
	want := []Pattern{{Name: "ikey", Regex: "ikey_[a-z]{8}"}, {Name: "secret-pattern-1", Regex: "CUSTOM-[A-Z]{10}"}, {Name: "secret-pattern-2", Regex: "tok_[0-9]{6}"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AllPatterns() = %+v, want %+v", got, want)
	}
	if _, err := parse(t, `{"redaction":{"secretPatterns":"sk-.*"}}`); err == nil || !strings.Contains(err.Error(), "redaction.secretPatterns: must be an array") {
		t.Errorf("a string for secretPatterns: %v", err)
	}
}

// A repository's demote globs are read and travel in its meta.
func TestRepositoryDemote(t *testing.T) {
	c, err := Parse([]byte(`{"repositories": [{"name": "docs", "path": "/d", "demote": ["v1/**", "**/old-*.md"]}]}`), "/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v1/**", "**/old-*.md"}
	if got := c.Repositories[0].Demote; !slices.Equal(got, want) {
		t.Errorf("demote = %q, want %q", got, want)
	}
	if got := c.Repositories[0].Meta().Demote; !slices.Equal(got, want) {
		t.Errorf("meta demote = %q, want %q", got, want)
	}
}

func TestExtractorVocabulary(t *testing.T) {
	c, err := parse(t, `{"extractor":{"vocabulary":false}}`)
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Extractor.Vocabulary; v == nil || *v {
		t.Errorf("extractor.vocabulary false parsed as %v", v)
	}
	if c, _ := parse(t, `{}`); c.Extractor.Vocabulary != nil {
		t.Error("extractor.vocabulary is set by default; unset means on")
	}
}

// A repository's languages are read as tags and folded to languages;
// absent means every language.
func TestRepositoryLanguages(t *testing.T) {
	c, err := Parse([]byte(`{"repositories": [{"name": "docs", "path": "/d", "languages": ["en", "zh-CN", "zh-TW", "pt_BR"]},
		{"name": "all", "path": "/a"}]}`), "/")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Repositories[0].Langs(), []string{"en", "zh", "pt"}; !slices.Equal(got, want) {
		t.Errorf("Langs() = %q, want %q", got, want)
	}
	if got := c.Repositories[1].Langs(); got != nil {
		t.Errorf("Langs() without languages = %q, want nil (every language)", got)
	}
	if _, err := Parse([]byte(`{"repositories": [{"name": "docs", "path": "/d", "languages": "en"}]}`), "/"); err == nil ||
		!strings.Contains(err.Error(), "repositories[0].languages: must be an array") {
		t.Errorf("languages as a string: %v", err)
	}
}
