// Package config is knowhub's one configuration file, read by every
// component: the shape of the JSON document, its defaults, its validation,
// and the environment and flag overrides layered on top of it.
//
// The precedence is defaults < file < environment < flags. Load (or Parse)
// starts from Default, overlays the file, resolves paths and validates;
// ApplyEnv and ClientFlags.Apply then override single fields, after which a
// caller runs Validate again.
//
// A key that is absent from the file keeps its default; a key that is
// present, even with a zero value, replaces it ("listen": "" turns the
// HTTP API off, "debounceMs": 0 reads a file at once). JSON null counts as
// absent.
//
// The package reads files and the environment only when asked to and
// imports neither NATS nor HTTP: the fields are the interface, and the
// components that connect or listen build their own options from them.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/extractor"
	"github.com/knowhub/knowhub/internal/lang"
	"github.com/knowhub/knowhub/internal/query"
	"github.com/knowhub/knowhub/internal/watcher"
)

// Defaults. Sizes are in bytes.
const (
	DefaultDataDir        = ".knowhub"
	DefaultNATSListen     = "127.0.0.1:4222"
	DefaultNATSURL        = "nats://127.0.0.1:4222"
	DefaultNATSMaxPayload = 8 << 20
	// DefaultNATSBufferLimit bounds the embedded server's buffers: each
	// connection's outbound queue and each stream's ingest queue.
	DefaultNATSBufferLimit = 16 << 20
	DefaultHTTPListen      = "127.0.0.1:7700"
	DefaultMaxBodyBytes    = 1 << 20
	DefaultPriority        = 100
	DefaultType            = contract.RepoCore
	// DefaultGlob selects Markdown and MDX files at any depth. It is
	// relative to the repository root and uses doublestar syntax.
	DefaultGlob           = "**/*.{md,mdx}"
	DefaultChunkMaxTokens = 800
	DefaultDebounceMS     = 150
	DefaultMaxFileBytes   = 4 << 20
	DefaultTopK           = 10
	DefaultMaxTopK        = 100
	// DefaultEmbeddingWeight is engine.DefaultEmbeddingWeight.
	DefaultEmbeddingWeight = 0.1
)

// Limits enforced by Validate.
const (
	// MaxNATSPayload is the largest max_payload nats-server accepts.
	MaxNATSPayload = 64 << 20
)

// HTTPOff as HTTP.Listen (like the empty string) disables the HTTP API.
const HTTPOff = "off"

// Config is the whole configuration file.
type Config struct {
	// DataDir holds the embedded NATS server's JetStream store and any
	// other local state of `knowhub up`. Relative to the config file.
	DataDir      string         `json:"dataDir"`
	NATS         NATS           `json:"nats"`
	HTTP         HTTP           `json:"http"`
	Repositories []Repository   `json:"repositories"`
	Redaction    Redaction      `json:"redaction"`
	Chunker      chunker.Config `json:"chunker"`
	Watcher      watcher.Config `json:"watcher"`
	Query        query.Config   `json:"query"`
	Extractor    Extractor      `json:"extractor"`
	Knowledge    Knowledge      `json:"knowledge"`
	Semantic     Semantic       `json:"semantic"`
}

// Knowledge configures the knowledge base beyond its requests.
type Knowledge struct {
	Evolution Evolution `json:"evolution"`
}

// Evolution configures knowledge evolution. Its rules (retire by feedback,
// merge linked near duplicates) always run; LLM, when BaseURL is set, adds
// the model step: a revision of an entry with mixed feedback, and a
// verdict and merged text for two near duplicates.
type Evolution struct {
	LLM LLM `json:"llm"`
}

// Semantic configures meaning-based retrieval beyond the built-in word
// vectors.
type Semantic struct {
	// Embeddings, when URL is set, embeds every section and docs query
	// with an OpenAI-compatible embeddings endpoint.
	Embeddings Embeddings `json:"embeddings"`
}

// Embeddings is an OpenAI-compatible /v1/embeddings endpoint (OpenAI,
// Ollama, text-embeddings-inference, vLLM). Without a URL nothing changes.
type Embeddings struct {
	// URL is the API root, such as http://127.0.0.1:11434/v1: knowhub
	// posts to URL/embeddings.
	URL   string `json:"url"`
	Model string `json:"model"`
	// APIKeyEnv names the environment variable that holds the API key,
	// sent as a bearer token; the key itself is never in the file.
	APIKeyEnv string `json:"apiKeyEnv"`
	// Dimensions, when positive, asks the model for vectors this long.
	Dimensions int `json:"dimensions"`
	// BatchSize is the most sections one request carries (default 32).
	BatchSize int `json:"batchSize"`
	// TimeoutSeconds bounds one request of the embedder stage (default 30).
	TimeoutSeconds int `json:"timeoutSeconds"`
	// QueryTimeoutMs bounds the embedding of a query (default 1000); past
	// it the query is answered lexically.
	QueryTimeoutMs int `json:"queryTimeoutMs"`
	// Weight is the vectors' share of the fused docs score, 0 to 1
	// (default engine.DefaultEmbeddingWeight).
	Weight float64 `json:"weight"`
}

// Enabled reports whether an endpoint is configured.
func (e Embeddings) Enabled() bool { return e.URL != "" }

// LogValue logs the endpoint without the key's value.
func (e Embeddings) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", e.URL), slog.String("model", e.Model), slog.String("api_key_env", e.APIKeyEnv))
}

// NATS is how `knowhub up` runs its embedded server (Listen, MaxPayload)
// and how every client connects (the rest). File paths are relative to the
// config file; at most one of CredsFile, NKeyFile, Token and User may be
// set.
type NATS struct {
	// Listen is the embedded server's client listen address (host:port).
	Listen string `json:"listen"`
	// URL is the client URL, or several comma-separated for a cluster.
	URL       string `json:"url"`
	CredsFile string `json:"credsFile"`
	NKeyFile  string `json:"nkeyFile"`
	User      string `json:"user"`
	Password  string `json:"password"`
	Token     string `json:"token"`
	TLSCA     string `json:"tlsCA"`
	TLSCert   string `json:"tlsCert"`
	TLSKey    string `json:"tlsKey"`
	// MaxPayload is the embedded server's maximum message size in bytes.
	MaxPayload int `json:"maxPayload"`
	// BufferLimit bounds, in bytes, what the embedded server buffers for
	// one connection (max_pending) and for one stream's messages waiting
	// to be stored (max_buffered_size). At least MaxPayload.
	BufferLimit int `json:"bufferLimit"`
	// Replicas is how many copies a JetStream cluster keeps of every
	// stream and bucket: 1 (default; the only choice for one server), 3
	// or 5.
	Replicas int `json:"replicas"`
	// EmbeddedAuth is how `up`'s embedded server authenticates clients:
	// EmbeddedAuthToken (the default) accepts only the token it keeps in
	// the data directory; EmbeddedAuthNone accepts anyone who reaches it.
	EmbeddedAuth string `json:"embeddedAuth"`
}

// Values of NATS.EmbeddedAuth.
const (
	EmbeddedAuthToken = "token"
	EmbeddedAuthNone  = "none"
)

// HasAuth reports whether the client side names a credential.
func (n NATS) HasAuth() bool {
	return n.Token != "" || n.User != "" || n.Password != "" || n.CredsFile != "" || n.NKeyFile != ""
}

// LogValue hides the password and token, so logging a NATS never leaks a
// secret.
func (n NATS) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("listen", n.Listen),
		slog.String("url", n.URL),
		slog.String("creds_file", n.CredsFile),
		slog.String("nkey_file", n.NKeyFile),
		slog.String("user", n.User),
		slog.Bool("password_set", n.Password != ""),
		slog.Bool("token_set", n.Token != ""),
		slog.String("tls_ca", n.TLSCA),
		slog.String("tls_cert", n.TLSCert),
		slog.String("tls_key", n.TLSKey),
		slog.Int("max_payload", n.MaxPayload),
		slog.Int("buffer_limit", n.BufferLimit),
	)
}

// HTTP configures the HTTP API.
type HTTP struct {
	// Listen is host:port; "" or "off" disables the HTTP API.
	Listen string `json:"listen"`
	// TLSCert and TLSKey, both or neither, switch the listener to HTTPS.
	TLSCert string `json:"tlsCert"`
	TLSKey  string `json:"tlsKey"`
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// Tokens are the accepted bearer tokens and the scopes each grants.
	// The HTTP API defines the scope names.
	Tokens []Token `json:"tokens"`
	// AllowedHosts are the host names, besides localhost and the listen
	// address's, that the API answers to in a request's Host header. IP
	// addresses are always answered; an unknown name is refused, as a
	// DNS-rebinding page would send one.
	AllowedHosts []string `json:"allowedHosts"`
}

// Hosts are the host names the HTTP API answers to besides localhost and
// IP addresses: the listen address's host when it is a name, and
// AllowedHosts.
func (h HTTP) Hosts() []string {
	hosts := slices.Clone(h.AllowedHosts)
	if host, _, err := net.SplitHostPort(h.Listen); err == nil && host != "" {
		if _, err := netip.ParseAddr(host); err != nil {
			hosts = append(hosts, host)
		}
	}
	return hosts
}

// Enabled reports whether the HTTP API should listen at all.
func (h HTTP) Enabled() bool { return h.Listen != "" && h.Listen != HTTPOff }

// Token is one bearer token and the scopes it grants.
type Token struct {
	Token  string   `json:"token"`
	Scopes []string `json:"scopes"`
	// Name identifies the token in logs instead of its value.
	Name string `json:"name"`
}

// LogValue logs the token's name and scopes, never its value.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", t.Name), slog.Any("scopes", t.Scopes))
}

// Repository is one directory of Markdown documentation.
type Repository struct {
	// Name identifies the repository in subjects and keys; see
	// contract.ValidRepoName.
	Name string `json:"name"`
	// Path is the repository root. Parse expands a leading "~" and makes
	// a relative path absolute against the config file's directory.
	Path string `json:"path"`
	// Priority decides conflicts between repositories: lower wins; it is
	// at least 1, as in the OpenClaw doc-engine plugin.
	Priority int `json:"priority"`
	// Type is contract.RepoCore or contract.RepoExtension; at equal
	// priority core wins.
	Type string `json:"type"`
	// Glob selects files, relative to Path, in doublestar syntax.
	Glob string `json:"glob"`
	// Exclude lists doublestar globs of files and directories to skip,
	// besides .git and node_modules, which the watcher always skips.
	Exclude []string `json:"exclude"`
	// Demote lists doublestar globs of pages that docs ranking places
	// below current ones, as it places pages under a legacy, deprecated or
	// archive folder: superseded pages that their path does not name.
	Demote []string `json:"demote"`
	// Languages, when set, lists the languages whose pages are indexed
	// (BCP 47 tags such as "en", "zh-CN"; regions are folded, so "zh-CN"
	// also takes zh-TW pages): a page in another language, as its locale
	// folder or its text tells (package lang), is skipped and counted.
	// Pages too short to tell are kept. Absent means every language.
	Languages []string `json:"languages"`
}

// Langs returns Languages as package lang names them, without
// repetitions, or nil for every language. Validate has checked them.
func (r Repository) Langs() []string {
	var out []string
	for _, t := range r.Languages {
		if l, err := lang.Normalize(t); err == nil && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// applyDefaults fills the fields a repository entry may omit.
func (r *Repository) applyDefaults() {
	r.Priority = DefaultPriority
	r.Type = DefaultType
	r.Glob = DefaultGlob
}

// Meta is what the repository contributes to conflict resolution.
func (r Repository) Meta() contract.RepoMeta {
	return contract.RepoMeta{Priority: r.Priority, Type: r.Type, Demote: slices.Clone(r.Demote)}
}

// Redaction adds rules to the redactor's built-in ones.
type Redaction struct {
	Patterns []Pattern `json:"patterns"`
	// SecretPatterns are bare regular expressions, the OpenClaw doc-engine
	// plugin's "secretPatterns": each is one more rule, added to the
	// built-in ones (which already hold that plugin's four defaults).
	SecretPatterns []string `json:"secretPatterns"`
}

// SecretPatternName is the finding kind of a rule from SecretPatterns.
const SecretPatternName = "secret-pattern"

// AllPatterns returns Patterns followed by one Pattern per SecretPatterns
// entry, named SecretPatternName with its index.
func (r Redaction) AllPatterns() []Pattern {
	out := slices.Clone(r.Patterns)
	for i, p := range r.SecretPatterns {
		out = append(out, Pattern{Name: fmt.Sprintf("%s-%d", SecretPatternName, i+1), Regex: p})
	}
	return out
}

// Pattern is one extra redaction rule: a Go (RE2) regular expression,
// optionally gated by keywords that must occur in the text for the rule to
// run.
type Pattern struct {
	Name     string   `json:"name"`
	Regex    string   `json:"regex"`
	Keywords []string `json:"keywords"`
}

// Extractor configures knowledge extraction from agent transcripts.
type Extractor struct {
	// privacyMode is "strict" (default: paths, emails, phones, IPs and
	// secrets are removed before anything is stored) or "relaxed"
	// (secrets only); limits bound a transcript; maxEntries bounds the
	// entries one transcript yields (default 3).
	extractor.Config
	// LLM, when BaseURL is set, extracts with an OpenAI-compatible
	// chat-completions endpoint instead of the built-in rules.
	LLM LLM `json:"llm"`
}

// LLM is an OpenAI-compatible chat-completions endpoint (for example a
// local Ollama at http://127.0.0.1:11434/v1).
type LLM struct {
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	APIKey  string `json:"apiKey"`
	// TimeoutSeconds bounds one completion (default 60).
	TimeoutSeconds int `json:"timeoutSeconds"`
}

// LogValue hides the API key.
func (l LLM) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", l.BaseURL), slog.String("model", l.Model), slog.Bool("api_key_set", l.APIKey != ""))
}

// Default returns the configuration used when there is no file: every
// default set and no repositories.
func Default() *Config {
	return &Config{
		DataDir: DefaultDataDir,
		NATS: NATS{
			Listen:       DefaultNATSListen,
			URL:          DefaultNATSURL,
			MaxPayload:   DefaultNATSMaxPayload,
			BufferLimit:  DefaultNATSBufferLimit,
			Replicas:     1,
			EmbeddedAuth: EmbeddedAuthToken,
		},
		HTTP: HTTP{
			Listen:       DefaultHTTPListen,
			MaxBodyBytes: DefaultMaxBodyBytes,
		},
		Chunker:   chunker.Config{ChunkMaxTokens: DefaultChunkMaxTokens},
		Extractor: Extractor{Config: extractor.Config{MaxEntries: extractor.DefaultMaxEntries}, LLM: LLM{TimeoutSeconds: 60}},
		Knowledge: Knowledge{Evolution: Evolution{LLM: LLM{TimeoutSeconds: 30}}},
		Watcher: watcher.Config{
			DebounceMS:   DefaultDebounceMS,
			MaxFileBytes: DefaultMaxFileBytes,
		},
		Query:    query.Config{DefaultTopK: DefaultTopK, MaxTopK: DefaultMaxTopK, Semantic: true},
		Semantic: Semantic{Embeddings: Embeddings{BatchSize: 32, TimeoutSeconds: 30, QueryTimeoutMs: 1000, Weight: DefaultEmbeddingWeight}},
	}
}
