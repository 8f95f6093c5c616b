package config

import (
	"flag"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// env returns a lookup function over a map.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestApplyEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	wd := t.TempDir()
	t.Chdir(wd)
	tests := []struct {
		env   string
		value string
		get   func(c *Config) string
		want  string
	}{
		{"KNOWHUB_DATA_DIR", "/var/lib/knowhub", func(c *Config) string { return c.DataDir }, "/var/lib/knowhub"},
		{"KNOWHUB_DATA_DIR", "state", func(c *Config) string { return c.DataDir }, filepath.Join(wd, "state")},
		{"KNOWHUB_HTTP", "0.0.0.0:8080", func(c *Config) string { return c.HTTP.Listen }, "0.0.0.0:8080"},
		{"KNOWHUB_HTTP", "off", func(c *Config) string { return c.HTTP.Listen }, "off"},
		{"KNOWHUB_NATS_LISTEN", "0.0.0.0:4333", func(c *Config) string { return c.NATS.Listen }, "0.0.0.0:4333"},
		{"KNOWHUB_NATS_URL", "nats://nats:4222", func(c *Config) string { return c.NATS.URL }, "nats://nats:4222"},
		{"KNOWHUB_NATS_CREDS", "~/.nats/user.creds", func(c *Config) string { return c.NATS.CredsFile }, filepath.Join(home, ".nats/user.creds")},
		{"KNOWHUB_NATS_NKEY", "/etc/seed.nk", func(c *Config) string { return c.NATS.NKeyFile }, "/etc/seed.nk"},
		{"KNOWHUB_NATS_USER", "alice", func(c *Config) string { return c.NATS.User }, "alice"},
		{"KNOWHUB_NATS_PASSWORD", "pw", func(c *Config) string { return c.NATS.Password }, "pw"},
		{"KNOWHUB_NATS_TOKEN", "tok", func(c *Config) string { return c.NATS.Token }, "tok"},
		{"KNOWHUB_NATS_TLS_CA", "ca.pem", func(c *Config) string { return c.NATS.TLSCA }, filepath.Join(wd, "ca.pem")},
		{"KNOWHUB_NATS_TLS_CERT", "/c.pem", func(c *Config) string { return c.NATS.TLSCert }, "/c.pem"},
		{"KNOWHUB_NATS_TLS_KEY", "/k.pem", func(c *Config) string { return c.NATS.TLSKey }, "/k.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.value, func(t *testing.T) {
			c := Default()
			if err := c.ApplyEnv(env(map[string]string{tt.env: tt.value})); err != nil {
				t.Fatal(err)
			}
			if got := tt.get(c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApplyEnvEmptyAndUnsetChangeNothing(t *testing.T) {
	c := Default()
	c.NATS.Token = "from-file"
	if err := c.ApplyEnv(env(map[string]string{"KNOWHUB_NATS_URL": "", "KNOWHUB_HTTP": "", "KNOWHUB_NATS_USER": ""})); err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.NATS.Token = "from-file"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config changed: %+v", c)
	}
}

func TestApplyEnvBadPath(t *testing.T) {
	c := Default()
	err := c.ApplyEnv(env(map[string]string{"KNOWHUB_NATS_CREDS": "~bob/x.creds", "KNOWHUB_DATA_DIR": "~eve"}))
	wantErr(t, err, "KNOWHUB_NATS_CREDS:", "KNOWHUB_DATA_DIR:")
	if c.NATS.CredsFile != "" || c.DataDir != DefaultDataDir {
		t.Errorf("bad values applied: %+v", c)
	}
}

// Setting a password from the environment keeps the file's user; setting
// a token replaces the file's user and password.
func TestApplyEnvAuthMethods(t *testing.T) {
	c := Default()
	c.NATS.User, c.NATS.Password = "alice", "old"
	if err := c.ApplyEnv(env(map[string]string{"KNOWHUB_NATS_PASSWORD": "new"})); err != nil {
		t.Fatal(err)
	}
	if c.NATS.User != "alice" || c.NATS.Password != "new" {
		t.Errorf("user/password = %q/%q, want alice/new", c.NATS.User, c.NATS.Password)
	}
	if err := c.ApplyEnv(env(map[string]string{"KNOWHUB_NATS_TOKEN": "tok"})); err != nil {
		t.Fatal(err)
	}
	if c.NATS.User != "" || c.NATS.Password != "" || c.NATS.Token != "tok" {
		t.Errorf("after token: %+v", c.NATS)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate after override: %v", err)
	}
}

func TestPrecedenceFileEnvFlags(t *testing.T) {
	doc := `{"nats":{"url":"nats://file:4222","token":"file-token","tlsCA":"/file/ca.pem"}}`
	c, err := Parse([]byte(doc), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = c.ApplyEnv(env(map[string]string{
		"KNOWHUB_NATS_URL":      "nats://env:4222",
		"KNOWHUB_NATS_USER":     "env-user",
		"KNOWHUB_NATS_PASSWORD": "env-pass",
		"KNOWHUB_NATS_TLS_CA":   "/env/ca.pem",
	}))
	if err != nil {
		t.Fatal(err)
	}

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	flags := BindClientFlags(fs)
	if err := fs.Parse([]string{"--nats-url=nats://flag:4222", "--nats-password", "flag-pass", "--nats-tls-ca="}); err != nil {
		t.Fatal(err)
	}
	flags.Apply(&c.NATS)

	want := c.NATS
	want.URL = "nats://flag:4222" // flag beats env beats file
	want.Token = ""               // env switched to user/password
	want.User = "env-user"        // env, no flag
	want.Password = "flag-pass"   // flag beats env
	want.TLSCA = ""               // explicitly cleared by a flag
	if c.NATS != want {
		t.Errorf("NATS = %+v\nwant %+v", c.NATS, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestClientFlagsUnsetChangeNothing(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	flags := BindClientFlags(fs)
	fs.String("other", "", "")
	if err := fs.Parse([]string{"--other=x"}); err != nil {
		t.Fatal(err)
	}
	n := Default().NATS
	n.Token = "keep"
	before := n
	flags.Apply(&n)
	if n != before {
		t.Errorf("NATS changed: %+v", n)
	}
}

func TestClientFlagsRegistered(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	BindClientFlags(fs)
	for _, name := range []string{"nats-url", "nats-creds", "nats-nkey", "nats-user", "nats-password", "nats-token", "nats-tls-ca", "nats-tls-cert", "nats-tls-key"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s not registered", name)
		}
	}
}

func TestClientFlagsResolvePaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	wd := t.TempDir()
	t.Chdir(wd)
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	flags := BindClientFlags(fs)
	if err := fs.Parse([]string{"--nats-creds=~/u.creds", "--nats-tls-cert=c.pem", "--nats-tls-key=/k.pem"}); err != nil {
		t.Fatal(err)
	}
	var n NATS
	flags.Apply(&n)
	if n.CredsFile != filepath.Join(home, "u.creds") || n.TLSCert != filepath.Join(wd, "c.pem") || n.TLSKey != "/k.pem" {
		t.Errorf("paths not resolved: %+v", n)
	}
}

func TestLogValueHidesSecrets(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewJSONHandler(&b, nil))
	n := Default().NATS
	n.User, n.Password, n.Token = "alice", "pa55word", "t0ken-value"
	log.Info("connect", "nats", n, "token", Token{Name: "agent", Token: "bearer-secret", Scopes: []string{"search"}})
	out := b.String()
	for _, secret := range []string{"pa55word", "t0ken-value", "bearer-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("log leaks %q: %s", secret, out)
		}
	}
	if !strings.Contains(out, "alice") || !strings.Contains(out, "agent") {
		t.Errorf("log lost non-secret fields: %s", out)
	}
}

// KNOWHUB_SHARD sets a query replica's shard and shard count; a value
// that is not <shard>/<shards>, or a shard outside the count, is an error
// that names the setting.
func TestShardFromEnv(t *testing.T) {
	shardEnv := func(v string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name == EnvShard {
				return v, true
			}
			return "", false
		}
	}
	c := Default()
	if err := c.ApplyEnv(shardEnv("1/3")); err != nil || c.Query.Shard != 1 || c.Query.Shards != 3 {
		t.Fatalf("1/3: shard %d of %d, %v", c.Query.Shard, c.Query.Shards, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("1/3: %v", err)
	}
	for _, bad := range []string{"1", "a/2", "1/b", "1-2"} {
		c := Default()
		if err := c.ApplyEnv(shardEnv(bad)); err == nil || !strings.Contains(err.Error(), EnvShard) {
			t.Errorf("%q: %v, want an error naming %s", bad, err, EnvShard)
		}
	}
	for _, bad := range []string{"2/2", "-1/2", "0/65"} {
		c := Default()
		if err := c.ApplyEnv(shardEnv(bad)); err != nil {
			t.Fatalf("%q: %v", bad, err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "shard") {
			t.Errorf("%q: %v, want a shard error", bad, err)
		}
	}
}
