// Package chat is a client of OpenAI-compatible chat-completions endpoints
// (https://api.openai.com/v1, a local Ollama at http://localhost:11434/v1,
// vLLM, LM Studio): one request in JSON mode, the reply's message content
// back. The extractor and knowledge evolution use it; what they send and
// how they check what comes back is theirs.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults and limits.
const (
	DefaultTimeout = 120 * time.Second
	// MaxReplyBytes bounds the body of a reply.
	MaxReplyBytes = 1 << 20
)

// Config is an endpoint and a model.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL/chat/completions.
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// APIKey is sent as a bearer token when set (Ollama needs none).
	APIKey string `json:"api_key,omitempty"`
	// Timeout bounds one request; zero means DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// HTTPClient, when set, sends the requests (tests, proxies).
	HTTPClient *http.Client `json:"-"`
	// Clean, when set, is applied to the server's text (an error body, a
	// refusal) before it goes into an error, which may be logged.
	Clean func(string) string `json:"-"`
}

// LogValue logs the configuration without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Duration("timeout", c.Timeout),
	)
}

// Validate reports every problem of the configuration, or nil.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base_url: %q is not an absolute http(s) URL", c.BaseURL))
	}
	if strings.TrimSpace(c.Model) == "" {
		errs = append(errs, errors.New("model: required"))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout: %s is negative", c.Timeout))
	}
	return errors.Join(errs...)
}

// Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is the body of a chat-completions request.
type Request struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	Temperature    float64   `json:"temperature"`
	ResponseFormat struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Stream bool `json:"stream"`
}

// reply is the part of a chat-completions reply the client reads.
type reply struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
	} `json:"choices"`
}

// Client sends chat-completions requests. It is safe for concurrent use.
type Client struct {
	cfg    Config
	url    string
	client *http.Client
}

// New returns a client; call cfg.Validate first.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Clean == nil {
		cfg.Clean = func(s string) string { return s }
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: cfg.Timeout}
	}
	return &Client{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", client: client}
}

// Model returns the model's name.
func (c *Client) Model() string { return c.cfg.Model }

// Complete sends msgs at temperature 0 in JSON mode and returns the first
// choice's message content, with one Markdown code fence around it
// removed. A non-2xx status, a body that is not a completion, a reply over
// MaxReplyBytes, a refusal and empty content are errors; so is a request
// that takes longer than the timeout or outlives ctx.
func (c *Client) Complete(ctx context.Context, msgs []Message) (string, error) {
	body := Request{Model: c.cfg.Model, Messages: msgs}
	body.ResponseFormat.Type = "json_object"
	data, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("encode chat request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("build chat request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("post chat completion: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxReplyBytes+1))
	if err != nil {
		return "", fmt.Errorf("read chat completion: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("chat completion: HTTP %d: %s", resp.StatusCode, clip(c.cfg.Clean(string(raw)), 200))
	}
	if len(raw) > MaxReplyBytes {
		return "", fmt.Errorf("chat completion: reply over %d bytes", MaxReplyBytes)
	}
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("decode chat completion: %w", err)
	}
	if len(r.Choices) == 0 {
		return "", errors.New("chat completion: no choices")
	}
	msg := r.Choices[0].Message
	if msg.Content == nil || strings.TrimSpace(*msg.Content) == "" {
		if msg.Refusal != "" {
			return "", fmt.Errorf("chat completion: model refused: %s", clip(c.cfg.Clean(msg.Refusal), 200))
		}
		return "", errors.New("chat completion: empty content")
	}
	return StripFence(*msg.Content), nil
}

// StripFence removes one Markdown code fence around a reply, which some
// local models add even in JSON mode.
func StripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(s[3:], "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[") {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
