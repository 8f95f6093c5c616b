package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunIndexesEveryDocumentAndFindsEveryHeading(t *testing.T) {
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
	// Not Markdown, and not valid UTF-8: neither is indexed.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("## Not a doc here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.md"), []byte("# Broken\n\nnot \xff\xfe UTF-8"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, whole := range []bool{false, true} {
		res, err := Run(context.Background(), Config{Corpus: dir, Queries: 40, Batch: 4, Files: whole, Out: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if res.Files != len(topics) {
			t.Errorf("files %v: files = %d, want %d", whole, res.Files, len(topics))
		}
		want := len(topics) * 4 // the intro and three steps
		if whole {
			want = len(topics)
		}
		if res.Sections != want {
			t.Errorf("files %v: documents = %d, want %d", whole, res.Sections, want)
		}
		if res.Hits != 40 {
			t.Errorf("files %v: %d of 40 heading queries found a document", whole, res.Hits)
		}
		if res.Index <= 0 || res.P50 <= 0 || res.P50 > res.P99 || res.P99 > res.Max {
			t.Errorf("files %v: timings out of order: index %s, p50 %s, p99 %s, max %s", whole, res.Index, res.P50, res.P99, res.Max)
		}
	}
}
