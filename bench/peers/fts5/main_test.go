package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunBuildsAnIndexOfEverySection(t *testing.T) {
	dir := t.TempDir()
	topics := []string{"fallback models", "durable consumers", "retention limits", "subject mapping", "key value buckets"}
	for i, topic := range topics {
		var b strings.Builder
		fmt.Fprintf(&b, "# Guide %d\n\nIntro to %s.\n\n", i, topic)
		for j := range 3 {
			fmt.Fprintf(&b, "## Configure %s step %d\n\nSet the %s option number %d and restart.\n\n", topic, j, topic, j)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("guide-%d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not Markdown: not indexed.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("## Not a doc here"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, memory := range []bool{false, true} {
		res, err := Run(context.Background(), Config{Corpus: dir, Memory: memory, Out: io.Discard})
		if err != nil {
			t.Fatalf("memory %v: %v", memory, err)
		}
		if res.Files != len(topics) || res.Sections != 4*len(topics) {
			t.Errorf("memory %v: %d files, %d sections; want %d and %d", memory, res.Files, res.Sections, len(topics), 4*len(topics))
		}
		if res.Build <= 0 || res.BuildCPU < 0 {
			t.Errorf("memory %v: build %s, %s of CPU", memory, res.Build, res.BuildCPU)
		}
	}

	// The table holds every section and answers FTS5 queries.
	db := filepath.Join(t.TempDir(), "fts5.db")
	secs := []section{
		{title: "Guide", heading: "Guide\nRetention", body: "Set retention limits per stream."},
		{title: "Guide", heading: "Guide\nMapping", body: "Subject mapping rewrites subjects."},
	}
	if _, err := build(context.Background(), db, secs); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rowid int
	if err := conn.QueryRow("SELECT rowid FROM sections WHERE sections MATCH 'retention'").Scan(&rowid); err != nil || rowid != 1 {
		t.Errorf("match 'retention': rowid %d, %v; want 1", rowid, err)
	}
}

func TestRunWithoutSectionsIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not Markdown"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Config{Corpus: dir, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "no sections") {
		t.Errorf("a corpus without Markdown: err = %v, want one saying there are no sections", err)
	}
	if _, err := Run(context.Background(), Config{Corpus: filepath.Join(dir, "missing"), Out: io.Discard}); err == nil {
		t.Error("a missing corpus: no error")
	}
}
