package corpus

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestQueriesSpanTheCorpus(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		body := fmt.Sprintf("# Page %d\n\n## Topic number %d\n\n## Single\n\ntext\n", i, i)
		if i == 7 {
			body += "## 配置模型\n\n## กฎของ\n\n## ไทย\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%02d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Queries(dir, 6)
	if err != nil {
		t.Fatal(err)
	}
	// Twelve candidates (one-word "Single" and the three-letter "ไทย"
	// are not queries), every second one taken.
	want := []string{"Topic number 0", "Topic number 2", "Topic number 4", "Topic number 6", "配置模型", "Topic number 8"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	all, err := Queries(dir, 100)
	if err != nil || len(all) != 12 {
		t.Errorf("all headings: %d (%v), want 12", len(all), err)
	}
}

func TestCopyUnpacksAnArchive(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, files map[string]string) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		gz := gzip.NewWriter(f)
		tw := tar.NewWriter(gz)
		for _, n := range slices.Sorted(maps.Keys(files)) {
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(files[n])); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []interface{ Close() error }{tw, gz, f} {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}

	good := write("good.tar.gz", map[string]string{"docs/a.md": "# A\n", "docs/sub/b.md": "## B b\n"})
	dst := filepath.Join(dir, "out")
	n, err := Copy(good, dst)
	if err != nil || n != int64(len("# A\n")+len("## B b\n")) {
		t.Fatalf("Copy = %d, %v", n, err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "docs", "sub", "b.md")); err != nil || string(b) != "## B b\n" {
		t.Errorf("unpacked b.md = %q, %v", b, err)
	}

	evil := write("evil.tar.gz", map[string]string{"../escape.md": "x"})
	if _, err := Copy(evil, filepath.Join(dir, "out2")); err == nil {
		t.Error("an archive entry outside the destination was unpacked")
	}
	if _, err := os.Stat(filepath.Join(dir, "escape.md")); err == nil {
		t.Error("escape.md was written outside the destination")
	}
}

// Multiply writes whole copies in folders of their own and, for a
// fractional count, the same share of the files every time.
func TestMultiply(t *testing.T) {
	src := t.TempDir()
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("p%03d.md", i)), []byte(fmt.Sprintf("# Page %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := t.TempDir()
	files, _, err := Multiply(src, dst, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	if files < 470 || files > 530 {
		t.Fatalf("2.5 copies of 200 files wrote %d", files)
	}
	for _, k := range []string{"copy-1", "copy-2"} {
		if n, _ := os.ReadDir(filepath.Join(dst, k)); len(n) != 200 {
			t.Fatalf("%s holds %d files, want 200", k, len(n))
		}
	}
	b, err := os.ReadFile(filepath.Join(dst, "copy-2", "p007.md"))
	if err != nil || string(b) != "# Page 7\n" {
		t.Fatalf("a copied page reads %q, %v", b, err)
	}
	again := t.TempDir()
	if n, _, err := Multiply(src, again, 2.5); err != nil || n != files {
		t.Fatalf("a second run wrote %d files (%v), want %d", n, err, files)
	}
	if _, _, err := Multiply(src, t.TempDir(), 0); err == nil {
		t.Fatal("no copies: no error")
	}
}
