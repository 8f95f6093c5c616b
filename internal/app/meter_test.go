package app

import (
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	for _, c := range []struct {
		s       MeterSample
		elapsed time.Duration
		want    string
	}{
		{MeterSample{Done: 0, Total: 0, Reading: true}, time.Second, "indexing: 0 files, starting"},
		{MeterSample{Done: 400, Total: 900, Sections: 5000, Reading: true}, 2 * time.Second,
			"indexing: 400 files, 5000 sections, 200 files/s, still reading the repositories"},
		{MeterSample{Done: 400, Total: 1000, Sections: 5000}, 2 * time.Second,
			"indexing: 400 of 1000 files (40%), 5000 sections, 200 files/s, about 3s left"},
		{MeterSample{Done: 100, Total: 20000}, 10 * time.Second,
			"indexing: 100 of 20000 files (0%), 10 files/s, about 33m0s left"},
		// A total behind the count (files without sections) is never shown below it.
		{MeterSample{Done: 50, Total: 40}, time.Second, "indexing: 50 of 50 files (100%), 50 files/s"},
		// A stalled run names why, and promises no time left.
		{MeterSample{Done: 400, Total: 1000, Stalled: "disk full at /data/jetstream: 0.5 MiB free"}, 2 * time.Second,
			"indexing: 400 of 1000 files (40%), stalled: disk full at /data/jetstream: 0.5 MiB free"},
	} {
		if got := FormatProgress("indexing", c.s, c.elapsed); got != c.want {
			t.Errorf("FormatProgress(%+v, %s)\n got %q\nwant %q", c.s, c.elapsed, got, c.want)
		}
	}
}

func TestMeterPlainLinesArePeriodic(t *testing.T) {
	var b strings.Builder
	t0 := time.Unix(1_700_000_000, 0)
	m := NewMeter(&b, "indexing", t0)
	if m.tty {
		t.Fatal("a strings.Builder is not a terminal")
	}
	for i := range 61 { // a minute, an update every second
		m.Update(t0.Add(time.Duration(i)*time.Second), MeterSample{Done: 10 * i, Total: 600})
	}
	if !m.Finish() {
		t.Fatal("Finish: nothing shown after a minute")
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	// Quiet for the first five seconds, then a line every five.
	if len(lines) != 12 || lines[0] != "indexing: 50 of 600 files (8%), 10 files/s, about 55s left" {
		t.Fatalf("%d lines, first %q; want 12 starting at 5s:\n%s", len(lines), lines[0], b.String())
	}
	if strings.ContainsAny(b.String(), "\r\x1b") {
		t.Errorf("plain output holds terminal control characters: %q", b.String())
	}
}

func TestMeterOnATerminalRewritesOneLine(t *testing.T) {
	var b strings.Builder
	t0 := time.Unix(1_700_000_000, 0)
	m := NewMeter(&b, "reindex", t0)
	m.tty, m.Delay = true, time.Second
	m.Update(t0.Add(500*time.Millisecond), MeterSample{Done: 1, Total: 10})
	if b.Len() != 0 {
		t.Fatalf("shown before the delay: %q", b.String())
	}
	m.Update(t0.Add(2*time.Second), MeterSample{Done: 4, Total: 10})
	m.Update(t0.Add(3*time.Second), MeterSample{Done: 6, Total: 10})
	m.Finish()
	want := "\rreindex: 4 of 10 files (40%), 2 files/s, about 3s left\x1b[K" +
		"\rreindex: 6 of 10 files (60%), 2 files/s, about 2s left\x1b[K\r\x1b[K"
	if b.String() != want {
		t.Errorf("terminal output\n got %q\nwant %q", b.String(), want)
	}
}

func TestQuietMeterShowsNothing(t *testing.T) {
	var b strings.Builder
	t0 := time.Unix(1_700_000_000, 0)
	m := NewMeter(&b, "indexing", t0)
	m.Update(t0.Add(time.Second), MeterSample{Done: 3, Total: 3})
	if m.Finish() || b.Len() != 0 {
		t.Errorf("a one-second run printed %q", b.String())
	}
}
