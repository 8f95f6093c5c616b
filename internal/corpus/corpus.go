// Package corpus reads Markdown corpora for benchmarks: it copies or
// unpacks one, and picks realistic queries from it.
package corpus

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/knowhub/knowhub/internal/analysis"
)

// Queries returns n section headings of the corpus as realistic
// queries: second-level headings of two words or more (or of four
// characters of a script written without spaces, such as Chinese or Thai),
// taken at even intervals over the files in name order, so that every part
// of the corpus, and every language of a translated one, is asked about.
func Queries(dir string, n int) ([]string, error) {
	var all []string
	buf := make([]byte, 1<<20) // one line buffer for every file
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".md" && ext != ".mdx" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(buf, len(buf))
		for sc.Scan() {
			if h, ok := strings.CutPrefix(sc.Text(), "## "); ok && isQuery(h) {
				all = append(all, strings.Trim(h, "`* "))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, errors.New("no headings in the corpus to use as queries")
	}
	if len(all) <= n {
		return all, nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = all[i*len(all)/n]
	}
	return out, nil
}

// isQuery reports whether a heading makes a query: two words or more, or
// four characters of a script indexed as bigrams.
func isQuery(h string) bool {
	if len(strings.Fields(h)) >= 2 {
		return true
	}
	chars := 0
	for _, r := range h {
		if analysis.IsBigramRune(r) {
			chars++
		}
	}
	return chars >= 4
}

// Stage copies or unpacks src (see Copy) into the docs folder of a new
// temporary directory, and returns the directory, which the caller
// removes when done, the docs folder and the bytes copied.
func Stage(src, prefix string) (work, docs string, size int64, err error) {
	work, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", 0, err
	}
	docs = filepath.Join(work, "docs")
	if size, err = Copy(src, docs); err != nil {
		os.RemoveAll(work)
		return "", "", 0, fmt.Errorf("copy corpus: %w", err)
	}
	return work, docs, size, nil
}

// Copy copies a directory, or unpacks a .tar.gz, into dst.
func Copy(src, dst string) (int64, error) {
	if strings.HasSuffix(src, ".tar.gz") || strings.HasSuffix(src, ".tgz") {
		return untar(src, dst)
	}
	var total int64
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		total += int64(len(data))
		return os.WriteFile(target, data, 0o644)
	})
	return total, err
}

func untar(src, dst string) (int64, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(gz)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return total, fmt.Errorf("unsafe path %q in archive", h.Name)
		}
		target := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return total, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return total, err
			}
			out, err := os.Create(target)
			if err != nil {
				return total, err
			}
			n, err := io.Copy(out, tr)
			out.Close()
			if err != nil {
				return total, err
			}
			total += n
		}
	}
}

// Multiply writes copies of the corpus src (a directory or a .tar.gz)
// into dst, for measuring past its size: whole copies in folders copy-1,
// copy-2, ..., and for a fractional count a last copy of that share of
// the files, chosen by a hash of their paths (so 2.5 copies hold two and
// a half times the files, and the same ones every time). It returns the
// files and bytes written.
func Multiply(src, dst string, copies float64) (files int, size int64, err error) {
	if copies <= 0 {
		return 0, 0, fmt.Errorf("copies must be positive, got %v", copies)
	}
	tmp, err := os.MkdirTemp("", "knowhub-multiply-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(tmp)
	if _, err := Copy(src, tmp); err != nil {
		return 0, 0, err
	}
	n := int(math.Ceil(copies))
	for k := 1; k <= n; k++ {
		share := min(copies-float64(k-1), 1)
		err := filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(tmp, path)
			if share < 1 {
				h := fnv.New32a()
				_, _ = h.Write([]byte(filepath.ToSlash(rel)))
				if float64(h.Sum32()%10000) >= share*10000 {
					return nil
				}
			}
			target := filepath.Join(dst, fmt.Sprintf("copy-%d", k), rel)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			size += int64(len(data))
			return os.WriteFile(target, data, 0o644)
		})
		if err != nil {
			return files, size, err
		}
	}
	return files, size, nil
}
