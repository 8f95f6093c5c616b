package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// natsSetting is one NATS client setting that the environment and the
// command line can override.
type natsSetting struct {
	env, flag, usage string
	field            func(*NATS) *string
	// path settings get "~" expanded and are made absolute.
	path bool
	// auth names the authentication method the setting belongs to; a
	// layer that sets one method replaces the others from lower layers.
	auth string
}

var natsSettings = []natsSetting{
	{env: "KNOWHUB_NATS_URL", flag: "nats-url", usage: "NATS server `URL`, or several comma-separated",
		field: func(n *NATS) *string { return &n.URL }},
	{env: "KNOWHUB_NATS_CREDS", flag: "nats-creds", usage: "NATS user credentials `file`",
		field: func(n *NATS) *string { return &n.CredsFile }, path: true, auth: "creds"},
	{env: "KNOWHUB_NATS_NKEY", flag: "nats-nkey", usage: "NATS NKey seed `file`",
		field: func(n *NATS) *string { return &n.NKeyFile }, path: true, auth: "nkey"},
	{env: "KNOWHUB_NATS_USER", flag: "nats-user", usage: "NATS user `name`",
		field: func(n *NATS) *string { return &n.User }, auth: "user"},
	{env: "KNOWHUB_NATS_PASSWORD", flag: "nats-password", usage: "NATS `password` (prefer the environment: flags show in ps)",
		field: func(n *NATS) *string { return &n.Password }, auth: "user"},
	{env: "KNOWHUB_NATS_TOKEN", flag: "nats-token", usage: "NATS auth `token` (prefer the environment: flags show in ps)",
		field: func(n *NATS) *string { return &n.Token }, auth: "token"},
	{env: "KNOWHUB_NATS_TLS_CA", flag: "nats-tls-ca", usage: "CA certificate `file` to verify the NATS server",
		field: func(n *NATS) *string { return &n.TLSCA }, path: true},
	{env: "KNOWHUB_NATS_TLS_CERT", flag: "nats-tls-cert", usage: "client certificate `file` for NATS",
		field: func(n *NATS) *string { return &n.TLSCert }, path: true},
	{env: "KNOWHUB_NATS_TLS_KEY", flag: "nats-tls-key", usage: "client key `file` for NATS",
		field: func(n *NATS) *string { return &n.TLSKey }, path: true},
}

// Environment variables read by ApplyEnv besides the NATS client ones.
const (
	EnvDataDir    = "KNOWHUB_DATA_DIR"
	EnvHTTP       = "KNOWHUB_HTTP"
	EnvNATSListen = "KNOWHUB_NATS_LISTEN"
	EnvShard      = "KNOWHUB_SHARD"
)

// ApplyEnv overrides the configuration from environment variables, read
// through lookup (os.LookupEnv when nil):
//
//	KNOWHUB_DATA_DIR       dataDir
//	KNOWHUB_HTTP           http.listen ("off" disables the HTTP API)
//	KNOWHUB_NATS_LISTEN    nats.listen
//	KNOWHUB_SHARD          query.shard and query.shards, as "<shard>/<shards>"
//	KNOWHUB_NATS_URL       nats.url
//	KNOWHUB_NATS_CREDS     nats.credsFile
//	KNOWHUB_NATS_NKEY      nats.nkeyFile
//	KNOWHUB_NATS_USER      nats.user
//	KNOWHUB_NATS_PASSWORD  nats.password
//	KNOWHUB_NATS_TOKEN     nats.token
//	KNOWHUB_NATS_TLS_CA    nats.tlsCA
//	KNOWHUB_NATS_TLS_CERT  nats.tlsCert
//	KNOWHUB_NATS_TLS_KEY   nats.tlsKey
//
// A variable that is unset or empty changes nothing. Paths get "~"
// expanded and are made absolute against the working directory. Setting
// one authentication method (creds, nkey, token, or user and password)
// clears the others that came from the file. The error reports paths that
// cannot be expanded; run Validate afterwards.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		return v, ok && v != ""
	}
	var problems []error
	resolve := func(name, v string) (string, bool) {
		p, err := resolvePath(v, "")
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			return "", false
		}
		return p, true
	}

	if v, ok := get(EnvDataDir); ok {
		if p, ok := resolve(EnvDataDir, v); ok {
			c.DataDir = p
		}
	}
	if v, ok := get(EnvHTTP); ok {
		c.HTTP.Listen = v
	}
	if v, ok := get(EnvNATSListen); ok {
		c.NATS.Listen = v
	}
	if v, ok := get(EnvShard); ok {
		if shard, shards, err := ParseShard(v); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", EnvShard, err))
		} else {
			c.Query.Shard, c.Query.Shards = shard, shards
		}
	}
	set := make(map[int]string)
	for i, s := range natsSettings {
		v, ok := get(s.env)
		if !ok {
			continue
		}
		if s.path {
			if v, ok = resolve(s.env, v); !ok {
				continue
			}
		}
		set[i] = v
	}
	applyNATS(&c.NATS, set)
	return errors.Join(problems...)
}

// applyNATS sets the settings in set (keyed by index into natsSettings)
// on n, first clearing the authentication methods that set does not touch
// if it touches any.
func applyNATS(n *NATS, set map[int]string) {
	methods := make(map[string]bool)
	for i := range set {
		if a := natsSettings[i].auth; a != "" {
			methods[a] = true
		}
	}
	if len(methods) > 0 {
		for _, s := range natsSettings {
			if s.auth != "" && !methods[s.auth] {
				*s.field(n) = ""
			}
		}
	}
	for i, v := range set {
		*natsSettings[i].field(n) = v
	}
}

// ClientFlags are the NATS connection flags every command shares.
type ClientFlags struct {
	fs     *flag.FlagSet
	values []string // parallel to natsSettings
}

// BindClientFlags registers --nats-url, --nats-creds, --nats-nkey,
// --nats-user, --nats-password, --nats-token, --nats-tls-ca,
// --nats-tls-cert and --nats-tls-key on fs. After fs.Parse, Apply copies
// the ones given on the command line onto a NATS.
func BindClientFlags(fs *flag.FlagSet) *ClientFlags {
	f := &ClientFlags{fs: fs, values: make([]string, len(natsSettings))}
	for i, s := range natsSettings {
		fs.StringVar(&f.values[i], s.flag, "", s.usage+"; overrides the config file and $"+s.env)
	}
	return f
}

// Apply overrides n with the flags that were set on the command line, and
// only those, so the precedence is file < environment < flags. A flag set
// to the empty string clears the setting. Paths get "~" expanded (when
// the home directory is known) and are made absolute. As with ApplyEnv,
// setting one authentication method clears the others.
func (f *ClientFlags) Apply(n *NATS) {
	byName := make(map[string]int, len(natsSettings))
	for i, s := range natsSettings {
		byName[s.flag] = i
	}
	set := make(map[int]string)
	f.fs.Visit(func(fl *flag.Flag) {
		i, ok := byName[fl.Name]
		if !ok {
			return
		}
		v := f.values[i]
		if natsSettings[i].path && v != "" {
			if p, err := resolvePath(v, ""); err == nil {
				v = p
			}
		}
		set[i] = v
	})
	applyNATS(n, set)
}

// ParseShard reads a query replica's shard as "<shard>/<shards>", such as
// 0/2 (KNOWHUB_SHARD, `knowhub worker query --shard`); Validate checks
// the numbers.
func ParseShard(v string) (shard, shards int, err error) {
	i, n, found := strings.Cut(v, "/")
	shard, err1 := strconv.Atoi(strings.TrimSpace(i))
	shards, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !found || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not <shard>/<shards>, such as 0/2", v)
	}
	return shard, shards, nil
}
