package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// miniSearch is MiniSearch (npm minisearch, pinned in package.json) with
// its default options, run by minisearch.mjs under Node: the sections go
// to it as a JSONL file, each query as a line on its standard input.
type miniSearch struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer // read only once the process has been waited for
	work   string
	waited bool
	exit   error // what Wait returned
}

// miniSearchPackage is the package.json of the installed minisearch, under
// the module's folder.
const miniSearchPackage = "node_modules/minisearch/package.json"

func openMiniSearch(ctx context.Context, c *collection, cfg Config) (engine, string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "", unavailable{"node is not on PATH"}
	}
	dir := cfg.NodeDir
	if dir == "" {
		dir = "."
	}
	pkg, err := os.ReadFile(filepath.Join(dir, miniSearchPackage))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", unavailable{fmt.Sprintf("minisearch is not installed in %s: run `npm ci` there", dir)}
	} else if err != nil {
		return nil, "", fmt.Errorf("read the minisearch package: %w", err)
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(pkg, &meta); err != nil {
		return nil, "", fmt.Errorf("read %s: %w", filepath.Join(dir, miniSearchPackage), err)
	}

	work, err := os.MkdirTemp("", "knowhub-peers-minisearch-")
	if err != nil {
		return nil, "", fmt.Errorf("make minisearch folder: %w", err)
	}
	m := &miniSearch{work: work, stderr: &bytes.Buffer{}}
	fail := func(err error) (engine, string, error) {
		m.close()
		return nil, "", err
	}
	file := filepath.Join(work, "sections.jsonl")
	if err := writeSections(file, c.Sections); err != nil {
		return fail(err)
	}
	m.cmd = exec.CommandContext(ctx, node, "minisearch.mjs", file)
	m.cmd.Dir = dir
	m.cmd.Stderr = m.stderr
	if m.stdin, err = m.cmd.StdinPipe(); err != nil {
		return fail(fmt.Errorf("start minisearch: %w", err))
	}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		return fail(fmt.Errorf("start minisearch: %w", err))
	}
	m.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := m.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start minisearch: %w", err))
	}
	var ready struct {
		Ready     bool `json:"ready"`
		Documents int  `json:"documents"`
	}
	if err := m.read(&ready); err != nil {
		return fail(fmt.Errorf("index with minisearch: %w", err))
	}
	if !ready.Ready || ready.Documents != len(c.Sections) {
		return fail(fmt.Errorf("minisearch indexed %d sections of %d", ready.Documents, len(c.Sections)))
	}
	nodeVersion, _ := exec.Command(node, "--version").Output()
	about := fmt.Sprintf("MiniSearch %s, default options, under node %s", meta.Version, strings.TrimSpace(string(nodeVersion)))
	return pages{s: m, secs: c.Sections, depth: sectionDepth(c)}, about, nil
}

// writeSections writes secs to file, one JSON object a line, each with its
// index in secs as its id.
func writeSections(file string, secs []section) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("write sections for minisearch: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range secs {
		doc := struct {
			ID int `json:"id"`
			*section
		}{i, &secs[i]}
		if err := enc.Encode(doc); err != nil {
			f.Close()
			return fmt.Errorf("write sections for minisearch: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write sections for minisearch: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write sections for minisearch: %w", err)
	}
	return nil
}

// read decodes the script's next line into v.
func (m *miniSearch) read(v any) error {
	line, err := m.stdout.ReadBytes('\n')
	if err != nil {
		// The script ended: wait for it, which also finishes copying
		// what it wrote to standard error.
		m.stdin.Close()
		m.wait()
		if msg := strings.TrimSpace(m.stderr.String()); msg != "" {
			return fmt.Errorf("node: %s", msg)
		}
		return fmt.Errorf("read from node: %w", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("read from node: %w", err)
	}
	return nil
}

func (m *miniSearch) sections(q string, n int) ([]hit, time.Duration, error) {
	req, err := json.Marshal(struct {
		Q string `json:"q"`
		K int    `json:"k"`
	}{q, n})
	if err != nil {
		return nil, 0, err
	}
	if _, err := m.stdin.Write(append(req, '\n')); err != nil {
		return nil, 0, fmt.Errorf("send a query to minisearch: %w", err)
	}
	var resp struct {
		Hits  [][2]float64 `json:"hits"`
		Micro int64        `json:"us"`
		Error string       `json:"error"`
	}
	if err := m.read(&resp); err != nil {
		return nil, 0, fmt.Errorf("search minisearch: %w", err)
	}
	if resp.Error != "" {
		return nil, 0, fmt.Errorf("search minisearch: %s", resp.Error)
	}
	hits := make([]hit, len(resp.Hits))
	for i, h := range resp.Hits {
		hits[i] = hit{idx: int(h[0]), score: h[1]}
	}
	return hits, time.Duration(resp.Micro) * time.Microsecond, nil
}

// wait waits for the script to end, once.
func (m *miniSearch) wait() error {
	if !m.waited {
		m.waited = true
		m.exit = m.cmd.Wait()
	}
	return m.exit
}

func (m *miniSearch) close() error {
	var err error
	if m.cmd != nil && m.cmd.Process != nil {
		m.stdin.Close() // the script ends when its input does
		if werr := m.wait(); werr != nil {
			err = fmt.Errorf("minisearch: %w", werr)
		}
	}
	if rerr := os.RemoveAll(m.work); err == nil {
		err = rerr
	}
	return err
}
