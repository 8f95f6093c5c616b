// Package transcript is transcript intake: it parses the payloads agent
// runtimes send (OpenClaw, Anthropic and OpenAI message shapes), rejects
// malformed or oversize ones so that nothing is stored, sanitizes them
// (system messages dropped; secrets always, personal data in strict mode)
// and stores only the sanitized transcript in KH_TRANSCRIPTS. Package
// extractor reads them from there.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// Roles of a parsed message. Parse maps the aliases "toolResult",
// "tool_result" and "function" onto RoleTool.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleTool      = "tool"
)

// Types of a parsed part. Parse maps the shapes of OpenClaw, Anthropic and
// OpenAI onto them and drops the parts it does not keep (images, thinking,
// documents and types it does not know).
const (
	PartText       = "text"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
)

// Triggers: why the agent runtime sent the transcript.
const (
	TriggerAgentEnd         = "agent_end"
	TriggerBeforeCompaction = "before_compaction"
	TriggerBeforeReset      = "before_reset"
	TriggerSessionEnd       = "session_end"
)

// Default limits of Parse.
const (
	DefaultMaxBytes    = 4 << 20
	DefaultMaxMessages = 2000
	// MaxMetaBytes bounds agent_id, submitted_by and session_key, like the
	// short fields of a knowledge entry.
	MaxMetaBytes = 256
)

// ErrInvalid is wrapped by every error of Parse: the transcript is
// malformed or too large, retrying cannot help, and nothing was stored.
var ErrInvalid = errors.New("invalid transcript")

// ErrTooLarge is wrapped, next to ErrInvalid, by the errors of Parse about
// size: too many bytes or too many messages.
var ErrTooLarge = errors.New("too large")

// Limits bound what Parse accepts. A zero field takes its default.
type Limits struct {
	MaxBytes    int `json:"maxBytes,omitempty"`
	MaxMessages int `json:"maxMessages,omitempty"`
}

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxMessages <= 0 {
		l.MaxMessages = DefaultMaxMessages
	}
	return l
}

// Part is one piece of a message's content: text (Text), a tool call (Name,
// ID, Input as JSON) or a tool result (ID of the call it answers, Name when
// known, Output as text, IsError).
type Part struct {
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"`
	Name    string          `json:"name,omitempty"`
	ID      string          `json:"id,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Output  string          `json:"output,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Message is one turn of a transcript. Content is never a bare string after
// decoding: a string becomes one text part.
type Message struct {
	Role    string `json:"role"`
	Content []Part `json:"content"`
}

// Transcript is an agent session sent for extraction.
type Transcript struct {
	Messages    []Message `json:"messages"`
	AgentID     string    `json:"agent_id,omitempty"`
	SubmittedBy string    `json:"submitted_by,omitempty"`
	SessionKey  string    `json:"session_key,omitempty"`
	Trigger     string    `json:"trigger"`
	// Scopes is the audience the API edge gave the transcript (the scopes
	// of the token that sent it); the entries extracted from it get these
	// scopes. Parse never reads it from the sender's document.
	Scopes []string `json:"scopes,omitempty"`
}

// LogValue logs a transcript without its content.
func (t *Transcript) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("agent_id", t.AgentID),
		slog.String("trigger", t.Trigger),
		slog.Int("messages", len(t.Messages)),
	)
}

// Parse decodes and checks a transcript. Every error wraps ErrInvalid and
// names the problem: the size, invalid UTF-8, JSON syntax, no messages, too
// many messages, an unknown trigger (a missing one is agent_end) or role, an overlong agent_id,
// submitted_by or session_key, or the message and part that are malformed.
// Unknown fields are ignored, so the full OpenClaw message objects (usage,
// timestamps, model) are accepted as they are.
func Parse(data []byte, limits Limits) (*Transcript, error) {
	l := limits.withDefaults()
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if len(data) > l.MaxBytes {
		return nil, fmt.Errorf("%w: %w: %d bytes, the limit is %d", ErrInvalid, ErrTooLarge, len(data), l.MaxBytes)
	}
	if !utf8.Valid(data) {
		return nil, invalid("not valid UTF-8 at byte %d", invalidUTF8At(data))
	}
	var w struct {
		Messages    json.RawMessage `json:"messages"`
		AgentID     string          `json:"agent_id"`
		SubmittedBy string          `json:"submitted_by"`
		SessionKey  string          `json:"session_key"`
		Trigger     string          `json:"trigger"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", ErrInvalid, err)
	}
	switch w.Trigger {
	case TriggerAgentEnd, TriggerBeforeCompaction, TriggerBeforeReset, TriggerSessionEnd:
	case "":
		// The KnowHub plugin sends none: it uploads when a run ends.
		w.Trigger = TriggerAgentEnd
	default:
		return nil, invalid("unknown trigger %q (%s)", w.Trigger, strings.Join(triggers(), ", "))
	}
	for _, f := range []struct{ name, v string }{
		{"agent_id", w.AgentID}, {"submitted_by", w.SubmittedBy}, {"session_key", w.SessionKey},
	} {
		if len(f.v) > MaxMetaBytes {
			return nil, invalid("%s: %d bytes, the limit is %d", f.name, len(f.v), MaxMetaBytes)
		}
	}
	raw := bytes.TrimSpace(w.Messages)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, invalid("no messages")
	}
	if raw[0] != '[' {
		return nil, invalid("messages must be an array")
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("%w: decode messages: %w", ErrInvalid, err)
	}
	if len(msgs) == 0 {
		return nil, invalid("no messages")
	}
	if len(msgs) > l.MaxMessages {
		return nil, fmt.Errorf("%w: %w: %d messages, the limit is %d", ErrInvalid, ErrTooLarge, len(msgs), l.MaxMessages)
	}
	t := &Transcript{
		Messages:    make([]Message, len(msgs)),
		AgentID:     w.AgentID,
		SubmittedBy: w.SubmittedBy,
		SessionKey:  w.SessionKey,
		Trigger:     w.Trigger,
	}
	for i, m := range msgs {
		if err := json.Unmarshal(m, &t.Messages[i]); err != nil {
			return nil, fmt.Errorf("%w: messages[%d]: %w", ErrInvalid, i, err)
		}
	}
	return t, nil
}

// triggers lists the known triggers for error messages.
func triggers() []string {
	return []string{TriggerAgentEnd, TriggerBeforeCompaction, TriggerBeforeReset, TriggerSessionEnd}
}

// invalidUTF8At returns the offset of the first invalid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// wireMessage is a message as OpenClaw, Anthropic and OpenAI send it.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []Part          `json:"tool_calls"` // OpenAI
	ToolCallID string          `json:"tool_call_id"`
	CallID     string          `json:"toolCallId"` // OpenClaw toolResult
	ToolName   string          `json:"toolName"`
	Name       string          `json:"name"`
	IsError    *bool           `json:"isError"`
	IsError2   *bool           `json:"is_error"`
}

// UnmarshalJSON decodes a message in any of the accepted shapes: content as
// a string, an array of parts or null; the roles user, assistant, system,
// developer and tool with its aliases toolResult, tool_result and function;
// OpenAI's tool_calls next to the content; and a tool message's call id,
// tool name and error flag, which become one tool_result part.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	role, err := canonicalRole(w.Role)
	if err != nil {
		return err
	}
	parts, err := decodeContent(w.Content)
	if err != nil {
		return err
	}
	for _, c := range w.ToolCalls {
		if c.Type != "" {
			parts = append(parts, c)
		}
	}
	if role == RoleTool && !hasResult(parts) {
		out := Part{
			Type:    PartToolResult,
			ID:      first(w.CallID, w.ToolCallID),
			Name:    first(w.ToolName, w.Name),
			Output:  joinText(parts),
			IsError: anyTrue(w.IsError, w.IsError2),
		}
		parts = []Part{out}
	}
	*m = Message{Role: role, Content: parts}
	return nil
}

// canonicalRole maps a role and its aliases onto the Role constants.
func canonicalRole(role string) (string, error) {
	switch strings.ToLower(role) {
	case "user":
		return RoleUser, nil
	case "assistant":
		return RoleAssistant, nil
	case "system":
		return RoleSystem, nil
	case "developer":
		return RoleDeveloper, nil
	case "tool", "toolresult", "tool_result", "function":
		return RoleTool, nil
	case "":
		return "", errors.New("role is missing")
	}
	return "", fmt.Errorf("unknown role %q (user, assistant, system, developer, tool, toolResult)", role)
}

// decodeContent decodes a content field: null, a string or an array of
// parts. Dropped parts are left out.
func decodeContent(raw json.RawMessage) ([]Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("content: %w", err)
		}
		if s == "" {
			return nil, nil
		}
		return []Part{{Type: PartText, Text: s}}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("content: %w", err)
		}
		var parts []Part
		for i, it := range items {
			var p Part
			if err := json.Unmarshal(it, &p); err != nil {
				return nil, fmt.Errorf("content[%d]: %w", i, err)
			}
			if p.Type != "" {
				parts = append(parts, p)
			}
		}
		return parts, nil
	}
	return nil, errors.New("content must be a string, an array of parts or null")
}

// wirePart is a content part in any of the accepted shapes.
type wirePart struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	ToolUseID string          `json:"tool_use_id"`
	CallID2   string          `json:"toolCallId"`
	CallID3   string          `json:"tool_call_id"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Content   json.RawMessage `json:"content"`
	Output    json.RawMessage `json:"output"`
	IsError   *bool           `json:"is_error"`
	IsError2  *bool           `json:"isError"`
	Function  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// UnmarshalJSON decodes a part in any of the accepted shapes:
//
//   - text: {"type":"text"|"input_text"|"output_text","text":...}
//   - tool call: {"type":"toolCall"|"tool_call"|"tool_use"|"function_call",
//     "id","name","arguments"|"input"}, or OpenAI's {"type":"function",
//     "id","function":{"name","arguments"}}; arguments given as a JSON string
//     are decoded
//   - tool result: {"type":"toolResult"|"tool_result"|"function_call_output",
//     "tool_use_id"|"toolCallId"|"call_id"|"id","content"|"output",
//     "is_error"|"isError"}, the content a string or an array of text parts
//
// A part of any other type (image, thinking, document, ...) decodes to a
// Part with an empty Type, which Message leaves out.
func (p *Part) UnmarshalJSON(data []byte) error {
	var w wirePart
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	typ := w.Type
	if typ == "" && w.Text != nil {
		typ = PartText
	}
	switch typ {
	case PartText, "input_text", "output_text":
		text := ""
		if w.Text != nil {
			text = *w.Text
		}
		*p = Part{Type: PartText, Text: text}
	case "toolCall", PartToolCall, "tool_use", "function_call", "function":
		name, args := w.Name, first(string(w.Arguments), string(w.Input))
		if w.Function != nil {
			name, args = first(w.Function.Name, name), first(string(w.Function.Arguments), args)
		}
		if name == "" {
			return errors.New("tool call has no name")
		}
		input, err := normalizeInput([]byte(args))
		if err != nil {
			return fmt.Errorf("tool call %q: %w", name, err)
		}
		*p = Part{Type: PartToolCall, Name: name, ID: first(w.ID, w.CallID), Input: input}
	case "toolResult", PartToolResult, "function_call_output":
		out := w.Content
		if len(bytes.TrimSpace(out)) == 0 || bytes.Equal(bytes.TrimSpace(out), []byte("null")) {
			out = w.Output
		}
		text, err := resultText(out)
		if err != nil {
			return err
		}
		*p = Part{
			Type:    PartToolResult,
			Name:    w.Name,
			ID:      first(w.ToolUseID, w.CallID2, w.CallID3, w.CallID, w.ID),
			Output:  text,
			IsError: anyTrue(w.IsError, w.IsError2),
		}
	case "":
		return errors.New("part has no type")
	default:
		*p = Part{}
	}
	return nil
}

// normalizeInput returns tool-call arguments as compact JSON. Arguments
// sent as a JSON string holding JSON (OpenAI) are decoded; a string that
// holds no JSON stays a string.
func normalizeInput(raw []byte) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		inner := bytes.TrimSpace([]byte(s))
		if len(inner) > 0 && (inner[0] == '{' || inner[0] == '[') && json.Valid(inner) {
			raw = inner
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return b.Bytes(), nil
}

// resultText turns a tool result's content into text: a string as it is,
// the text parts of an array joined by newlines, anything else as JSON.
func resultText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("tool result: %w", err)
		}
		return s, nil
	case '[':
		parts, err := decodeContent(raw)
		if err != nil {
			return "", fmt.Errorf("tool result %w", err)
		}
		return joinText(parts), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", fmt.Errorf("tool result: %w", err)
	}
	return b.String(), nil
}

// joinText joins the text of the text and tool-result parts with newlines.
func joinText(parts []Part) string {
	var ss []string
	for _, p := range parts {
		switch p.Type {
		case PartText:
			ss = append(ss, p.Text)
		case PartToolResult:
			ss = append(ss, p.Output)
		}
	}
	return strings.Join(ss, "\n")
}

// hasResult reports whether parts hold a tool result.
func hasResult(parts []Part) bool {
	for _, p := range parts {
		if p.Type == PartToolResult {
			return true
		}
	}
	return false
}

// first returns the first non-empty string.
func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// anyTrue returns the first of the booleans that is set, or false.
func anyTrue(bs ...*bool) bool {
	for _, b := range bs {
		if b != nil {
			return *b
		}
	}
	return false
}
