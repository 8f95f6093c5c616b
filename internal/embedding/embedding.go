// Package embedding is a client of an OpenAI-compatible embeddings
// endpoint (POST <baseURL>/embeddings, as served by OpenAI, Ollama,
// text-embeddings-inference and vLLM), and the int8 form in which knowhub
// stores the vectors it returns. It imports no NATS: the embedder stage
// and the query side both use it.
package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults and limits.
const (
	DefaultBatchSize     = 32
	DefaultTimeout       = 30 * time.Second
	DefaultQueryTimeout  = 2 * time.Second
	DefaultMaxInputBytes = 8 << 10
	// MaxBatchSize bounds the inputs of one request.
	MaxBatchSize = 2048
	// MaxReplyBytes bounds the body of a reply.
	MaxReplyBytes = 64 << 20
)

// Config names an endpoint.
type Config struct {
	// BaseURL is the API root, such as http://127.0.0.1:11434/v1; the
	// client posts to BaseURL/embeddings.
	BaseURL string
	Model   string
	// APIKey is sent as a bearer token when set. It is never logged.
	APIKey string
	// Dimensions, when positive, is sent to the endpoint (models that
	// can shorten their vectors honour it) and every vector must have it.
	Dimensions int
	// BatchSize is the most inputs one request carries.
	BatchSize int
	// Timeout bounds one request.
	Timeout time.Duration
	// MaxInputBytes cuts each input to this many bytes, at a rune
	// boundary: a section longer than the model reads is embedded by its
	// start.
	MaxInputBytes int
	// HTTPClient, when set, sends the requests.
	HTTPClient *http.Client
}

// LogValue logs the configuration without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", c.BaseURL), slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""), slog.Int("dimensions", c.Dimensions), slog.Duration("timeout", c.Timeout))
}

// Validate reports every problem of the configuration, or nil. Each is
// phrased "key: problem".
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("url: %q is not an absolute http(s) URL", c.BaseURL))
	}
	if strings.TrimSpace(c.Model) == "" {
		errs = append(errs, errors.New("model: required"))
	} else if len(c.Model) > 200 {
		errs = append(errs, errors.New("model: over 200 bytes"))
	}
	if c.Dimensions < 0 || c.Dimensions > 8192 {
		errs = append(errs, fmt.Errorf("dimensions: %d is not between 0 (the model's own) and 8192", c.Dimensions))
	}
	if c.BatchSize < 0 || c.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("batchSize: %d is not between 1 and %d", c.BatchSize, MaxBatchSize))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout: %s is negative", c.Timeout))
	}
	if c.MaxInputBytes < 0 {
		errs = append(errs, fmt.Errorf("maxInputBytes: %d is negative", c.MaxInputBytes))
	}
	return errors.Join(errs...)
}

// Client calls one endpoint. It is safe for concurrent use.
type Client struct {
	cfg    Config
	url    string
	client *http.Client
}

// New returns a client; it validates cfg and fills its defaults.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxInputBytes == 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Client{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings", client: client}, nil
}

// Model returns the configured model, which names the vectors' space.
func (c *Client) Model() string { return c.cfg.Model }

// BatchSize returns the most inputs one request carries.
func (c *Client) BatchSize() int { return c.cfg.BatchSize }

// Request is the body of an embeddings request.
type Request struct {
	Model string `json:"model"`
	// Input is a string or a list of strings.
	Input          any    `json:"input"`
	Dimensions     int    `json:"dimensions,omitempty"`
	EncodingFormat string `json:"encoding_format,omitempty"`
}

// Reply is the body of an embeddings reply.
type Reply struct {
	Object string `json:"object,omitempty"`
	Data   []struct {
		Object    string    `json:"object,omitempty"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// StatusError is an endpoint's answer other than 2xx.
type StatusError struct {
	Code int
	Body string // the start of the reply, for the log
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("embeddings: HTTP %d: %s", e.Code, e.Body)
}

// Rejected reports whether err is the endpoint refusing the input itself
// (a 4xx other than 401, 403, 408 and 429, or a reply that does not fit
// the input): sending it again cannot help, unlike a server that is down,
// overloaded or misconfigured.
func Rejected(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		switch se.Code {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
			return false
		}
		return se.Code/100 == 4
	}
	return false
}

// Embed returns the vector of each input, in order, in batches of
// BatchSize. Each input is cut to MaxInputBytes first.
func (c *Client) Embed(ctx context.Context, inputs []string) ([][]float32, error) {
	out := make([][]float32, 0, len(inputs))
	for start := 0; start < len(inputs); start += c.cfg.BatchSize {
		batch := inputs[start:min(start+c.cfg.BatchSize, len(inputs))]
		vecs, err := c.embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery returns the unit vector of one query.
func (c *Client) EmbedQuery(ctx context.Context, q string) ([]float32, error) {
	vecs, err := c.embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	return Unit(vecs[0]), nil
}

func (c *Client) embed(ctx context.Context, batch []string) ([][]float32, error) {
	cut := make([]string, len(batch))
	for i, s := range batch {
		cut[i] = Cut(s, c.cfg.MaxInputBytes)
		if cut[i] == "" {
			cut[i] = " " // endpoints refuse an empty input
		}
	}
	data, err := json.Marshal(Request{Model: c.cfg.Model, Input: cut, Dimensions: c.cfg.Dimensions, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("encode embeddings request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("build embeddings request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post embeddings: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxReplyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read embeddings reply: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Code: resp.StatusCode, Body: Cut(strings.ToValidUTF8(string(body), "?"), 200)}
	}
	if len(body) > MaxReplyBytes {
		return nil, fmt.Errorf("embeddings reply over %d bytes", MaxReplyBytes)
	}
	var r Reply
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode embeddings reply: %w", err)
	}
	if len(r.Data) != len(batch) {
		return nil, fmt.Errorf("embeddings reply holds %d vectors for %d inputs", len(r.Data), len(batch))
	}
	out := make([][]float32, len(batch))
	dims := c.cfg.Dimensions
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(batch) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings reply has a bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) > 8192 || (dims > 0 && len(d.Embedding) != dims) {
			return nil, fmt.Errorf("embeddings reply has a vector of %d dimensions, want %d", len(d.Embedding), dims)
		}
		dims = len(d.Embedding)
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, errors.New("embeddings reply has a component that is not a finite number")
			}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// Cut returns s cut to at most n bytes at a rune boundary.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Unit returns v scaled to length 1, or nil when it is zero.
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	s := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

// Encode returns v in its stored form: int8 components at the scale of the
// largest, as semantic.Cosine reads them; nil when v is zero.
func Encode(v []float32) []byte {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(float64(x)))
	}
	if m == 0 {
		return nil
	}
	out := make([]byte, len(v))
	for i, x := range v {
		out[i] = byte(int8(math.Round(float64(x) / m * 127)))
	}
	return out
}
