package app

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// MeterSample is how far a long indexing run has come.
type MeterSample struct {
	Done     int  // files through the pipeline
	Total    int  // files known so far: Done and those in flight
	Sections int  // sections searchable (0: not known)
	Reading  bool // the repositories are still being read: Total may grow
	// Stalled names what keeps the run from making progress (a full
	// disk): the line says so instead of promising a time left.
	Stalled string
}

// A Meter shows the progress of a long run: on a terminal one line
// rewritten in place, otherwise a plain line every Every. A run shorter
// than Delay prints nothing, so that a small corpus stays quiet: a
// second on a terminal, one plain-line interval elsewhere.
type Meter struct {
	Label string
	Delay time.Duration
	Every time.Duration // between plain lines; a terminal line is redrawn every 200ms at most

	out     io.Writer
	tty     bool
	start   time.Time
	last    time.Time
	drawn   bool // a terminal line is on screen
	printed bool
}

// redraw is how often a terminal line is redrawn at most.
const redraw = 200 * time.Millisecond

// NewMeter returns a Meter writing to out, which it treats as a terminal
// when it is one.
func NewMeter(out io.Writer, label string, start time.Time) *Meter {
	tty := false
	if f, ok := out.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	m := &Meter{Label: label, Delay: 5 * time.Second, Every: 5 * time.Second, out: out, tty: tty, start: start}
	if tty {
		m.Delay = time.Second
	}
	return m
}

// Update shows s as of now, or nothing when too little time has passed.
func (m *Meter) Update(now time.Time, s MeterSample) {
	elapsed := now.Sub(m.start)
	if elapsed < m.Delay {
		return
	}
	line := FormatProgress(m.Label, s, elapsed)
	if m.tty {
		if m.drawn && now.Sub(m.last) < redraw {
			return
		}
		fmt.Fprintf(m.out, "\r%s\x1b[K", line)
		m.last, m.drawn, m.printed = now, true, true
		return
	}
	if m.printed && now.Sub(m.last) < m.Every {
		return
	}
	fmt.Fprintln(m.out, line)
	m.last, m.printed = now, true
}

// Finish clears a terminal line so that what follows starts on a clean
// line; it reports whether any progress was shown.
func (m *Meter) Finish() bool {
	if m.drawn {
		fmt.Fprint(m.out, "\r\x1b[K")
		m.drawn = false
	}
	return m.printed
}

// FormatProgress renders one progress line: files and sections done, the
// rate, and the time left once the total is known.
func FormatProgress(label string, s MeterSample, elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(label)
	b.WriteString(": ")
	done := max(s.Done, 0)
	total := max(s.Total, done)
	if s.Reading {
		fmt.Fprintf(&b, "%d files", done)
	} else {
		fmt.Fprintf(&b, "%d of %d files", done, total)
		if total > 0 {
			fmt.Fprintf(&b, " (%d%%)", done*100/total)
		}
	}
	if s.Sections > 0 {
		fmt.Fprintf(&b, ", %d sections", s.Sections)
	}
	if s.Stalled != "" {
		b.WriteString(", stalled: " + s.Stalled)
		return b.String()
	}
	secs := elapsed.Seconds()
	if secs <= 0 || done == 0 {
		b.WriteString(", starting")
		return b.String()
	}
	rate := float64(done) / secs
	fmt.Fprintf(&b, ", %.0f files/s", rate)
	if s.Reading {
		b.WriteString(", still reading the repositories")
	} else if left := total - done; left > 0 {
		fmt.Fprintf(&b, ", about %s left", roundLeft(time.Duration(float64(left)/rate*float64(time.Second))))
	}
	return b.String()
}

// roundLeft rounds an estimate to what is worth reading: seconds under a
// minute, then minutes.
func roundLeft(d time.Duration) time.Duration {
	if d < time.Minute {
		return max(d.Round(time.Second), time.Second)
	}
	return d.Round(time.Minute)
}
