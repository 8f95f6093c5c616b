package bus

import (
	"log/slog"

	"github.com/ThreeDotsLabs/watermill"
)

// watermillLogger routes watermill's logs to l with watermill's own slog
// adapter. Its info-level per-message chatter is demoted to debug; trace
// stays below every level a node logs at.
func watermillLogger(l *slog.Logger) watermill.LoggerAdapter {
	return watermill.NewSlogLoggerWithLevelMapping(l, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
}
