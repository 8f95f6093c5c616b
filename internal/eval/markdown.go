package eval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
)

// MarkdownFile is one Markdown file as IndexMarkdown indexes it: its
// slash-separated path relative to the folder, which qrels name, and the
// sections the chunker cut from it.
type MarkdownFile struct {
	Path   string
	Chunks []contract.Chunk
}

// ReadMarkdown reads and chunks the files that IndexMarkdown indexes under
// dir, by the same rules (.md and .mdx files, directories whose name starts
// with '.' skipped, chunker.Split with default options, blank files left
// out), so that another engine can index the very sections knowhub does.
// Files come in path order; skipped lists the files the chunker rejected,
// with why. It uses up to workers goroutines (0 means GOMAXPROCS).
func ReadMarkdown(ctx context.Context, dir string, workers int) (files []MarkdownFile, skipped []string, err error) {
	return ReadMarkdownWith(ctx, dir, MarkdownOptions{Workers: workers})
}

// ReadMarkdownWith is ReadMarkdown with IndexMarkdownWith's options: the
// front-matter keys opts.StripFrontMatter names are cut before chunking,
// as IndexMarkdownWith cuts them, and a file whose front matter cannot be
// parsed is listed in skipped.
func ReadMarkdownWith(ctx context.Context, dir string, opts MarkdownOptions) (files []MarkdownFile, skipped []string, err error) {
	workers := opts.Workers
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".md" || ext == ".mdx" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	all := make([]MarkdownFile, len(paths))
	var mu sync.Mutex
	err = forEach(ctx, len(paths), workers, func(i int) error {
		data, err := os.ReadFile(paths[i])
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, paths[i])
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if data, err = StripFrontMatter(data, opts.StripFrontMatter); err != nil {
			mu.Lock()
			skipped = append(skipped, fmt.Sprintf("strip front matter of %s: %v", rel, err))
			mu.Unlock()
			return nil
		}
		cs, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			mu.Lock()
			skipped = append(skipped, err.Error())
			mu.Unlock()
			return nil
		}
		all[i] = MarkdownFile{Path: rel, Chunks: cs}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, f := range all {
		if len(f.Chunks) > 0 {
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(skipped)
	return files, skipped, nil
}
