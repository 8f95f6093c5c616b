package bus

import (
	"log/slog"

	"github.com/ThreeDotsLabs/watermill"
)

// slogAdapter routes watermill's logs to slog. Watermill's info-level
// per-message chatter is demoted to debug.
type slogAdapter struct{ l *slog.Logger }

func attrs(f watermill.LogFields) []any {
	out := make([]any, 0, 2*len(f))
	for k, v := range f {
		out = append(out, k, v)
	}
	return out
}

func (a slogAdapter) Error(msg string, err error, f watermill.LogFields) {
	a.l.Error(msg, append(attrs(f), "err", err)...)
}
func (a slogAdapter) Info(msg string, f watermill.LogFields)  { a.l.Debug(msg, attrs(f)...) }
func (a slogAdapter) Debug(msg string, f watermill.LogFields) { a.l.Debug(msg, attrs(f)...) }
func (a slogAdapter) Trace(msg string, f watermill.LogFields) {}
func (a slogAdapter) With(f watermill.LogFields) watermill.LoggerAdapter {
	return slogAdapter{a.l.With(attrs(f)...)}
}
