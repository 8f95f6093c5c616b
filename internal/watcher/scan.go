package watcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/lang"
)

// binarySniffBytes is how much of a file is searched for a NUL byte.
const binarySniffBytes = 8 << 10

// alwaysSkippedDirs are never walked, at any depth.
var alwaysSkippedDirs = []string{".git", "node_modules"}

// rel returns the slash-separated path of abs relative to the root, "" for
// the root itself, and whether abs is inside the repository at all.
func (r *repo) rel(abs string) (string, bool) {
	if abs == r.root {
		return "", true
	}
	prefix := r.root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}

// escapes returns why the file at p may not be published when its real
// path, once every symlink on the way (the file's or a directory's) is
// resolved, lies outside the repository's real root, and "" when it lies
// inside.
func (r *repo) escapes(p string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "unreadable: " + errReason(err)
	}
	root, err := filepath.EvalSymlinks(r.root)
	if err != nil {
		return "repository root unreadable: " + errReason(err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "outside the repository: a symlink leads out of its root"
	}
	return ""
}

// abs is the OS path of a repository-relative path.
func (r *repo) abs(rel string) string {
	return filepath.Join(r.root, filepath.FromSlash(rel))
}

// dirSkipped reports whether the directory rel (not the root) is never
// walked: .git, node_modules, or matched by an exclude glob.
func (r *repo) dirSkipped(rel string) bool {
	if rel == "" {
		return false
	}
	if slices.Contains(alwaysSkippedDirs, pathBase(rel)) {
		return true
	}
	return r.excluded(rel)
}

// fileIncluded reports whether the file rel is published: it matches the
// glob, is not excluded and lies in no skipped directory.
func (r *repo) fileIncluded(rel string) bool {
	if rel == "" || !doublestar.MatchUnvalidated(r.glob, rel) || r.excluded(rel) {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && r.dirSkipped(rel[:i]) {
			return false
		}
	}
	return true
}

// indexes reports whether the repository indexes pages in language l:
// every language when it lists none, and always a page whose language is
// undetermined ("").
func (r *repo) indexes(l string) bool {
	return len(r.langs) == 0 || l == "" || slices.Contains(r.langs, l)
}

func (r *repo) excluded(rel string) bool {
	for _, ex := range r.exclude {
		if doublestar.MatchUnvalidated(ex, rel) {
			return true
		}
	}
	return false
}

// credentialName reports whether a file name is one that holds
// credentials rather than documentation: .env and its variants (.env.local,
// .env.production), credentials.json and auth-profiles.json (OpenClaw's
// stored provider logins). Such a file is never read, whatever glob
// matches it.
func credentialName(base string) bool {
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env."):
		return true
	case base == "credentials.json" || base == "auth-profiles.json":
		return true
	}
	return false
}

func pathBase(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[i+1:]
	}
	return rel
}

// walk visits every included file under start (the root or a directory
// below it) with its repository-relative path. It does not follow
// symlinked directories, skips .git, node_modules and excluded directories,
// and adds a watch on each directory it enters while Run runs. A nil visit
// only adds watches. An unreadable directory is logged and skipped; only a
// missing or unreadable root is an error.
func (w *Watcher) walk(ctx context.Context, r *repo, start string, visit func(rel string) bool) error {
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, ok := r.rel(p)
		if !ok {
			return filepath.SkipDir
		}
		if err != nil {
			if p == r.root {
				return fmt.Errorf("repository %s: root %s: %w", r.name, r.root, err)
			}
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return nil // gone before we got to it
			}
			w.log.Warn("skip directory", "repo", r.name, "path", rel, "reason", errReason(err))
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if r.dirSkipped(rel) {
				return filepath.SkipDir
			}
			w.watchDir(r, p)
			return nil
		}
		if visit == nil || !r.fileIncluded(rel) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// Follow a symlinked file, never a symlinked directory.
			st, err := os.Stat(p)
			if err == nil && st.IsDir() {
				return nil
			}
			// A dangling link is visited: evaluate reports it absent.
		}
		// A device, FIFO or socket is visited too: evaluate skips it
		// with a log line, without opening it.
		if !visit(rel) {
			return ctx.Err()
		}
		return nil
	})
}

// errReason renders err for a log line without repeating the path.
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// verdict is what evaluate decided for one path.
type verdict int

const (
	verdictUnchanged     verdict = iota // present, same sha and meta as published
	verdictPut                          // present and new or changed: publish msg
	verdictAbsent                       // not there: tombstone if published
	verdictSkip                         // there but not publishable: tombstone if published
	verdictOtherLanguage                // a page in a language not indexed: tombstone if published
)

// change is the outcome of evaluating one path.
type change struct {
	rel     string
	verdict verdict
	reason  string    // verdictSkip: why, for the log
	msg     *nats.Msg // verdictPut
	state   fileState // verdictPut: the state once msg is acknowledged
}

// evaluate reads the file rel and decides what to publish, given what was
// last published for it (prev, when known). It reads no shared state, so
// scan workers call it concurrently.
func (w *Watcher) evaluate(r *repo, rel string, prev fileState, known, force bool) change {
	c := change{rel: rel}
	skip := func(reason string) change {
		c.verdict = verdictSkip
		c.reason = reason
		return c
	}
	if !utf8.ValidString(rel) {
		// Events, subjects' headers and the index hold names as UTF-8; a
		// name in another encoding is not rewritten behind the user's back.
		return skip("file name is not valid UTF-8: rename it")
	}
	if credentialName(pathBase(rel)) {
		return skip("named like a credentials file (.env*, credentials.json, auth-profiles.json): never indexed")
	}
	// A locale folder tells the language before the file is read.
	if l := lang.Folder(rel); l != "" && !r.indexes(l) {
		c.verdict = verdictOtherLanguage
		return c
	}
	p := r.abs(rel)
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.verdict = verdictAbsent
		return c
	case err != nil:
		return skip("unreadable: " + errReason(err))
	case fi.IsDir():
		c.verdict = verdictAbsent // a directory named like a file
		return c
	case !fi.Mode().IsRegular():
		return skip("not a regular file")
	case fi.Size() > w.maxFileBytes:
		return skip(fmt.Sprintf("larger than %d bytes", w.maxFileBytes))
	}
	if reason := r.escapes(p); reason != "" {
		return skip(reason)
	}
	data, err := readLimited(p, w.maxFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.verdict = verdictAbsent
		return c
	case err != nil:
		return skip("unreadable: " + errReason(err))
	case int64(len(data)) > w.maxFileBytes:
		return skip(fmt.Sprintf("larger than %d bytes", w.maxFileBytes))
	}
	text, reason, ok := decodeText(data)
	switch {
	case !ok:
		return skip(reason)
	case int64(len(text)) > w.maxFileBytes:
		return skip(fmt.Sprintf("larger than %d bytes once decoded to UTF-8", w.maxFileBytes))
	case !utf8.Valid(text):
		return skip("invalid UTF-8")
	}
	if len(r.langs) > 0 && lang.Folder(rel) == "" && !r.indexes(lang.Text(string(text))) {
		c.verdict = verdictOtherLanguage
		return c
	}
	sum := sha256.Sum256(data)
	st := fileState{sha: hex.EncodeToString(sum[:]), meta: r.metaStr}
	if known && !force && prev == st {
		c.verdict = verdictUnchanged
		return c
	}
	msg, err := w.putMsg(r, rel, st.sha, text)
	if err != nil {
		return skip(err.Error())
	}
	c.verdict = verdictPut
	c.msg = msg
	c.state = st
	return c
}

// readLimited reads at most limit+1 bytes of the file, so a file that grew
// past the limit after its stat is still caught. The buffer is sized from
// the open file's size, so a file that did not change is read into one
// allocation.
func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(512)
	if fi, err := f.Stat(); err == nil && fi.Size() < limit {
		size = fi.Size() + 1 // one more byte, so that EOF is seen without growing
	}
	data := make([]byte, 0, size)
	for {
		end := min(int64(cap(data)), limit+1)
		n, err := f.Read(data[len(data):end])
		data = data[:len(data)+n]
		switch {
		case err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		case int64(len(data)) > limit:
			return data, nil
		case len(data) == cap(data):
			data = slices.Grow(data, len(data))
		}
	}
}

// Scan syncs every repository with KH_FILES once: it reads back what was
// last published, walks the roots, and publishes every file that is new or
// changed (every file when force is set) and a tombstone for every
// published file that is gone or no longer publishable. It returns when
// all of it has been acknowledged by JetStream.
func (w *Watcher) Scan(ctx context.Context, force bool) (ScanResult, error) {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	var total ScanResult
	for _, r := range w.repos {
		res, err := w.scanRepo(ctx, r, force)
		total.add(res)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// scanRepo is Scan for one repository. Files are read, hashed and
// redacted by a small pool of workers; this goroutine publishes.
func (w *Watcher) scanRepo(ctx context.Context, r *repo, force bool) (ScanResult, error) {
	var res ScanResult
	// A missing root must not read as "every file deleted", nor keep the
	// other repositories from being served: it is left out, and Run
	// picks it up when it appears.
	reason := ""
	if fi, err := os.Stat(r.root); err != nil {
		reason = errReason(err)
	} else if !fi.IsDir() {
		reason = "not a directory"
	}
	if reason != "" {
		if !r.missing {
			w.log.Warn("repository root missing: serving the other repositories, and this one once it appears",
				"repo", r.name, "root", r.root, "reason", reason)
		}
		r.missing = true
		return res, nil
	}
	r.missing = false
	prev, err := w.loadState(ctx, r)
	if err != nil {
		return res, err
	}
	// prev is read by the workers and never written; next follows the
	// acknowledgements and becomes the repository's state.
	next := maps.Clone(prev)
	defer func() { w.state[r.name] = next }()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	paths := make(chan string, 64)
	changes := make(chan change, 8)
	walkDone := make(chan error, 1)
	go func() {
		defer close(paths)
		walkDone <- w.walk(ctx, r, r.root, func(rel string) bool {
			select {
			case paths <- rel:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), 4)) {
		wg.Go(func() {
			for rel := range paths {
				st, known := prev[rel]
				c := w.evaluate(r, rel, st, known, force)
				select {
				case changes <- c:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(changes)
	}()

	pub := newPublisher(w.js)
	seen := make(map[string]struct{}, len(prev))
	var pubErr error
	for c := range changes {
		if pubErr != nil {
			continue // drain so the workers can stop
		}
		seen[c.rel] = struct{}{}
		if pubErr = w.apply(ctx, pub, r, next, c, &res); pubErr != nil {
			cancel()
		}
	}
	walkErr := <-walkDone
	if pubErr != nil {
		return res, pubErr
	}
	if walkErr != nil {
		// A half walk must not tombstone the files it did not reach.
		if err := pub.flush(ctx); err != nil {
			return res, err
		}
		return res, walkErr
	}
	for _, rel := range slices.Sorted(maps.Keys(prev)) {
		if _, ok := seen[rel]; ok {
			continue
		}
		if err := w.apply(ctx, pub, r, next, change{rel: rel, verdict: verdictAbsent}, &res); err != nil {
			return res, err
		}
	}
	if err := pub.flush(ctx); err != nil {
		return res, err
	}
	w.log.Debug("repository scanned", "repo", r.name, "published", res.Published,
		"deleted", res.Deleted, "unchanged", res.Unchanged, "skipped", res.Skipped)
	return res, nil
}

// apply publishes what c calls for and updates state (path → last
// published) as the acknowledgements arrive. state is only touched by the
// calling goroutine: pub runs the callbacks inside publish and flush.
func (w *Watcher) apply(ctx context.Context, pub *publisher, r *repo, state map[string]fileState, c change, res *ScanResult) error {
	switch c.verdict {
	case verdictUnchanged:
		res.Unchanged++
		return nil
	case verdictPut:
		st := c.state
		if err := pub.publish(ctx, c.msg, func() { state[c.rel] = st }); err != nil {
			return err
		}
		res.Published++
		w.log.Debug("file published", "repo", r.name, "path", c.rel)
		return nil
	case verdictSkip:
		res.Skipped++
		w.log.Warn("skip file", "repo", r.name, "path", c.rel, "reason", c.reason)
	case verdictOtherLanguage:
		// Expected by the thousand in a translated site: counted, not warned.
		res.OtherLanguage++
		w.log.Debug("skip file in a language not indexed", "repo", r.name, "path", c.rel)
	}
	// Absent or skipped: a published version must go.
	if _, ok := state[c.rel]; !ok {
		return nil
	}
	msg, err := w.tombstoneMsg(r, c.rel)
	if err != nil {
		return err
	}
	if err := pub.publish(ctx, msg, func() { delete(state, c.rel) }); err != nil {
		return err
	}
	res.Deleted++
	w.log.Debug("file tombstoned", "repo", r.name, "path", c.rel)
	return nil
}

// processDirty handles one debounced batch of paths from fsnotify. Each
// path may be a file (re-checked), a new directory (watched and walked) or
// a vanished directory (the files published under it are re-checked).
func (w *Watcher) processDirty(ctx context.Context, batch map[string]struct{}) error {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	pub := newPublisher(w.js)
	var res ScanResult
	for _, r := range w.repos {
		state := w.state[r.name]
		if state == nil {
			state = make(map[string]fileState)
			w.state[r.name] = state
		}
		check := make(map[string]struct{})
		for abs := range batch {
			rel, ok := r.rel(abs)
			if !ok {
				continue
			}
			fi, err := os.Lstat(abs)
			switch {
			case err == nil && fi.IsDir():
				if err := w.walk(ctx, r, abs, func(f string) bool {
					check[f] = struct{}{}
					return true
				}); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					w.log.Warn("skip directory", "repo", r.name, "path", rel, "reason", err.Error())
				}
			case err == nil || errors.Is(err, fs.ErrPermission):
				if r.fileIncluded(rel) {
					check[rel] = struct{}{}
				}
			}
			// Whatever rel is now, what was published at or under it
			// is re-checked: this turns a removed or renamed directory
			// into tombstones.
			if _, ok := state[rel]; ok {
				check[rel] = struct{}{}
			}
			if fi == nil || fi.IsDir() {
				prefix := rel + "/"
				for known := range state {
					if rel == "" || strings.HasPrefix(known, prefix) {
						check[known] = struct{}{}
					}
				}
			}
		}
		for _, rel := range slices.Sorted(maps.Keys(check)) {
			st, known := state[rel]
			c := w.evaluate(r, rel, st, known, false)
			if err := w.apply(ctx, pub, r, state, c, &res); err != nil {
				return err
			}
		}
		if _, ok := batch[r.root]; ok {
			if _, err := os.Stat(r.root); err != nil {
				w.log.Warn("repository root removed: watching for it to come back", "repo", r.name)
				r.missing = true
			}
		}
	}
	if err := pub.flush(ctx); err != nil {
		return err
	}
	if res.Published+res.Deleted+res.Skipped > 0 {
		w.log.Debug("changes published", "published", res.Published, "deleted", res.Deleted,
			"skipped", res.Skipped)
	}
	return nil
}
