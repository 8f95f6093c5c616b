// Package watcher publishes the Markdown files of the configured
// repositories to KH_FILES: the latest redacted content of every file, and a
// tombstone when a file goes away. It keeps no local state file: what it last
// published is read back from the stream at start-up (headers only), so any
// number of restarts publish only what changed while it was down.
//
// Run does an initial sync and then follows the file system with fsnotify,
// debouncing bursts of writes. Scan is the one-shot sync that Run starts
// with, also used by `knowhub reindex --rescan`.
package watcher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsnotify/fsnotify"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
)

// Defaults applied by New to zero fields.
const (
	DefaultGlob         = "**/*.{md,mdx}"
	DefaultDebounce     = 150 * time.Millisecond
	DefaultMaxFileBytes = 4 << 20
	// DefaultMaxPayload is NATS's own default max_payload, assumed when
	// Deps.MaxPayload is zero.
	DefaultMaxPayload = 1 << 20
)

// Repo is one directory tree of documentation.
type Repo struct {
	// Name is the repository's subject token; see contract.ValidRepoName.
	Name string
	// Root is the directory watched. A symlinked root is resolved once, in
	// New; symlinked directories below it are not followed.
	Root string
	// Meta travels with every file; a change republishes every file.
	Meta contract.RepoMeta
	// Glob selects files by their slash-separated path relative to Root,
	// in doublestar syntax (default DefaultGlob).
	Glob string
	// Exclude lists doublestar globs of files and directories to skip. A
	// directory matching one (e.g. "drafts/**" matches "drafts") is not
	// walked at all. ".git" and "node_modules" directories are always
	// skipped.
	Exclude []string
	// Languages, when set, lists the languages (package lang names) whose
	// pages are published; a page in another language, as its locale
	// folder or its text tells, is left out and counted in
	// ScanResult.OtherLanguage. A page too short to tell is published.
	Languages []string
}

// Config configures a Watcher; the configuration file's "watcher" object
// is this struct, and its repositories come from the file's top-level list.
type Config struct {
	Repos []Repo `json:"-"`
	// DebounceMS is how long, in milliseconds, the file system must stay
	// quiet before dirty paths are processed (0 means DefaultDebounce).
	// Under a constant stream of events, dirty paths are processed at the
	// latest max(1s, debounce) after the first one.
	DebounceMS int `json:"debounceMs"`
	// MaxFileBytes is the largest file published; a larger one is skipped
	// (0 means DefaultMaxFileBytes).
	MaxFileBytes int64 `json:"maxFileBytes"`
	// MissingRootPollMS is how often, in milliseconds, Run looks for a
	// repository root that is missing (0 means DefaultMissingRootPoll).
	MissingRootPollMS int `json:"missingRootPollMs,omitempty"`
}

// DefaultMissingRootPoll is the default of Config.MissingRootPollMS.
const DefaultMissingRootPoll = 2 * time.Second

// Debounce is DebounceMS as a duration.
func (c Config) Debounce() time.Duration { return time.Duration(c.DebounceMS) * time.Millisecond }

// Validate reports the first problem with c, as "key: problem" for the
// watcher's own keys. New calls it after applying defaults.
func (c *Config) Validate() error {
	if c.DebounceMS < 0 {
		return errors.New("debounceMs: must not be negative")
	}
	if c.MaxFileBytes <= 0 {
		return errors.New("maxFileBytes: must be positive")
	}
	if c.MissingRootPollMS < 0 {
		return errors.New("missingRootPollMs: must not be negative")
	}
	seen := make(map[string]bool, len(c.Repos))
	for _, r := range c.Repos {
		if !contract.ValidRepoName(r.Name) {
			return fmt.Errorf("repository name %q: use 1-64 letters, digits, '_' or '-'", r.Name)
		}
		if seen[r.Name] {
			return fmt.Errorf("repository %s is configured twice", r.Name)
		}
		seen[r.Name] = true
		if r.Root == "" {
			return fmt.Errorf("repository %s: no root directory", r.Name)
		}
		if r.Glob != "" && !doublestar.ValidatePattern(r.Glob) {
			return fmt.Errorf("repository %s: invalid glob %q", r.Name, r.Glob)
		}
		for _, ex := range r.Exclude {
			if !doublestar.ValidatePattern(ex) {
				return fmt.Errorf("repository %s: invalid exclude glob %q", r.Name, ex)
			}
		}
	}
	return nil
}

// Redactor removes secrets from text before it is published. String must
// be safe for concurrent use: the initial scan redacts files in parallel.
// It is satisfied by internal/redact.(*Redactor).
type Redactor interface {
	String(s string) string
}

// Deps are the Watcher's collaborators.
type Deps struct {
	// JS publishes to KH_FILES and reads it back. The stream must exist
	// (broker.EnsureTopology).
	JS jetstream.JetStream
	// Redactor is applied to every file's content before it is published.
	Redactor Redactor
	// Logger defaults to discarding.
	Logger *slog.Logger
	// MaxPayload is the server's max payload (nc.MaxPayload()); a file
	// whose event would not fit is skipped. Zero means DefaultMaxPayload.
	MaxPayload int64
}

// ScanResult counts what one Scan did.
type ScanResult struct {
	Published int // put events for new or changed files
	Deleted   int // tombstones for files gone or no longer publishable
	Unchanged int // files already published with the same content and meta
	Skipped   int // matching files rejected (binary, invalid UTF-8, too large, unreadable)
	// OtherLanguage counts matching pages left out because they are in a
	// language the repository does not index (Repo.Languages).
	OtherLanguage int
}

func (r *ScanResult) add(o ScanResult) {
	r.Published += o.Published
	r.Deleted += o.Deleted
	r.Unchanged += o.Unchanged
	r.Skipped += o.Skipped
	r.OtherLanguage += o.OtherLanguage
}

// fileState is what was last published for a path that exists downstream.
type fileState struct {
	sha  string // hex SHA-256 of the raw file
	meta string // RepoMeta.String()
}

// repo is a validated Repo with its root made absolute.
type repo struct {
	name    string
	root    string // absolute, cleaned, OS separators
	meta    contract.RepoMeta
	metaStr string
	langs   []string // Repo.Languages; nil: every language
	glob    string
	exclude []string
	// missing is set while the root is not there (guarded by opMu):
	// the repository is left out, and Run looks for it.
	missing bool
}

// Watcher publishes the files of its repositories to KH_FILES. Scan and the
// live follow of Run are serialised, so Scan may be called while Run runs.
type Watcher struct {
	repos        []*repo
	js           jetstream.JetStream
	redactor     Redactor
	log          *slog.Logger
	debounce     time.Duration
	maxDelay     time.Duration
	maxFileBytes int64
	maxPayload   int64
	rootPoll     time.Duration

	ready     chan struct{}
	initial   ScanResult // set before ready closes
	readyOnce sync.Once
	running   atomic.Bool

	// opMu serialises Scan and the processing of live batches; state is
	// only touched with it held.
	opMu  sync.Mutex
	state map[string]map[string]fileState // repo name → path → last published

	// watchMu guards fsw and watched. fsw is set while Run runs; walks
	// then add a watch on every directory they enter.
	watchMu sync.Mutex
	fsw     *fsnotify.Watcher
	watched map[string]struct{} // directories with a watch
}

// New validates cfg and returns a Watcher. It does not touch the network.
func New(cfg Config, deps Deps) (*Watcher, error) {
	if cfg.DebounceMS == 0 {
		cfg.DebounceMS = int(DefaultDebounce / time.Millisecond)
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.JS == nil {
		return nil, errors.New("watcher: no JetStream context")
	}
	if deps.Redactor == nil {
		return nil, errors.New("watcher: no redactor (content must be redacted before it is published)")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.MaxPayload <= 0 {
		deps.MaxPayload = DefaultMaxPayload
	}
	w := &Watcher{
		js:           deps.JS,
		redactor:     deps.Redactor,
		log:          deps.Logger.With("component", "watcher"),
		debounce:     cfg.Debounce(),
		maxDelay:     max(time.Second, cfg.Debounce()),
		maxFileBytes: cfg.MaxFileBytes,
		maxPayload:   deps.MaxPayload,
		rootPoll:     cmp.Or(time.Duration(cfg.MissingRootPollMS)*time.Millisecond, DefaultMissingRootPoll),
		ready:        make(chan struct{}),
		state:        make(map[string]map[string]fileState),
		watched:      make(map[string]struct{}),
	}
	for _, r := range cfg.Repos {
		root, err := filepath.Abs(r.Root)
		if err != nil {
			return nil, fmt.Errorf("repository %s: root %s: %w", r.Name, r.Root, err)
		}
		// Resolve a symlinked root once so the walk enters it and event
		// paths share its prefix. A missing root is reported by Scan.
		if resolved, err := filepath.EvalSymlinks(root); err == nil {
			root = resolved
		}
		glob := r.Glob
		if glob == "" {
			glob = DefaultGlob
		}
		w.repos = append(w.repos, &repo{
			name:    r.Name,
			root:    filepath.Clean(root),
			meta:    r.Meta,
			metaStr: metaString(r),
			langs:   slices.Clone(r.Languages),
			glob:    glob,
			exclude: slices.Clone(r.Exclude),
		})
	}
	return w, nil
}

// Ready is closed once Run's initial sync has been published and
// acknowledged by JetStream.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Repos names the repositories the watcher serves, in configuration order.
func (w *Watcher) Repos() []string {
	names := make([]string, len(w.repos))
	for i, r := range w.repos {
		names[i] = r.name
	}
	return names
}

// Initial returns what the initial sync did. It is set once Ready is
// closed.
func (w *Watcher) Initial() ScanResult { return w.initial }

// Run syncs every repository with KH_FILES, then follows file changes until
// ctx is done. It returns nil on a clean stop and an error when the initial
// sync or a publish fails.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watcher: Run called twice")
	}
	defer w.running.Store(false)

	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("start file notifications: %w", err)
	}
	w.setNotifier(fsw)
	defer func() {
		w.setNotifier(nil)
		_ = fsw.Close()
	}()

	// Watches are added as the scan walks, before each directory is read:
	// a change made during the scan is either seen by it or queued as an
	// event for the loop below.
	res, err := w.Scan(ctx, false)
	for err != nil && bus.IsStorageFull(err) {
		// JetStream has no room (a full disk): wait for it rather than
		// stop. Scanning again is harmless: it compares with what was
		// published.
		w.log.Warn("initial sync: JetStream has no room; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retryDelay):
		}
		res, err = w.Scan(ctx, false)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("initial sync: %w", err)
	}
	w.log.Info("initial sync done", "published", res.Published, "deleted", res.Deleted,
		"unchanged", res.Unchanged, "skipped", res.Skipped, "other_language", res.OtherLanguage)
	w.initial = res
	w.readyOnce.Do(func() { close(w.ready) })

	err = w.follow(ctx, fsw)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// follow is Run's live loop: it collects dirty paths from fsnotify and
// processes them once no event arrived for w.debounce, or w.maxDelay after
// the first one, whichever comes first.
// retryDelay is how long the watcher waits before publishing a batch of
// changes again after a failure.
const retryDelay = time.Second

func (w *Watcher) follow(ctx context.Context, fsw *fsnotify.Watcher) error {
	dirty := make(map[string]struct{})
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	roots := time.NewTicker(w.rootPoll)
	defer roots.Stop()

	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("file notifications stopped")
			}
			if !w.noteEvent(ev, dirty) {
				continue
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			timer.Reset(min(w.debounce, first.Add(w.maxDelay).Sub(now)))
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("file notifications stopped")
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file notification error", "err", err)
				continue
			}
			w.log.Warn("file notification queue overflowed: rescanning every repository")
			timer.Stop()
			clear(dirty)
			first = time.Time{}
			// Lost events may hide removed directories: forget which
			// directories are watched so the rescan re-adds every one
			// (adding an existing watch is harmless).
			w.watchMu.Lock()
			clear(w.watched)
			w.watchMu.Unlock()
			res, err := w.Scan(ctx, false)
			if err != nil {
				return fmt.Errorf("rescan after overflow: %w", err)
			}
			w.log.Info("rescan done", "published", res.Published, "deleted", res.Deleted,
				"unchanged", res.Unchanged, "skipped", res.Skipped, "other_language", res.OtherLanguage)
		case <-roots.C:
			w.scanMissing(ctx)
		case <-timer.C:
			batch := dirty
			dirty = make(map[string]struct{})
			first = time.Time{}
			if err := w.processDirty(ctx, batch); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				// NATS unreachable or restarting: keep the paths dirty
				// and try again, rather than stopping the process.
				// Processing a path again is harmless: it compares with
				// what was published.
				w.log.Warn("publishing changes failed; retrying", "paths", len(batch), "err", err)
				for p := range batch {
					dirty[p] = struct{}{}
				}
				first = time.Now()
				timer.Reset(retryDelay)
			}
		}
	}
}

// scanMissing scans each repository whose root was missing and has
// appeared; a failed scan is tried again at the next poll.
func (w *Watcher) scanMissing(ctx context.Context) {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	for _, r := range w.repos {
		if !r.missing {
			continue
		}
		if fi, err := os.Stat(r.root); err != nil || !fi.IsDir() {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(r.root); err == nil {
			r.root = filepath.Clean(resolved)
		}
		w.log.Info("repository root appeared: indexing it", "repo", r.name)
		res, err := w.scanRepo(ctx, r, false)
		if err != nil {
			r.missing = true
			if ctx.Err() == nil {
				w.log.Warn("scan of a repository that appeared failed; retrying", "repo", r.name, "err", err)
			}
			continue
		}
		w.log.Info("repository scanned", "repo", r.name, "published", res.Published, "unchanged", res.Unchanged, "skipped", res.Skipped, "other_language", res.OtherLanguage)
	}
}

// noteEvent records the path of ev as dirty and keeps the watches in step
// with directories appearing and disappearing. It reports whether the
// event concerns a repository.
func (w *Watcher) noteEvent(ev fsnotify.Event, dirty map[string]struct{}) bool {
	name := filepath.Clean(ev.Name)
	inRepo := false
	for _, r := range w.repos {
		if _, ok := r.rel(name); ok {
			inRepo = true
			break
		}
	}
	if !inRepo {
		return false
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A moved directory keeps its inotify watches under the old
		// name: drop them so the new name gets fresh ones.
		w.unwatchTree(name)
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			for _, r := range w.repos {
				if _, ok := r.rel(name); ok {
					// Watches only; the files are read when the
					// batch is processed.
					_ = w.walk(context.Background(), r, name, nil)
				}
			}
		}
	}
	dirty[name] = struct{}{}
	return true
}

// setNotifier sets or clears the fsnotify watcher used by walks.
func (w *Watcher) setNotifier(fsw *fsnotify.Watcher) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	w.fsw = fsw
	clear(w.watched)
}

// watchDir adds a watch on dir while Run runs. A failure (typically the
// inotify watch limit) is logged: the directory is still scanned, only its
// live changes are missed.
func (w *Watcher) watchDir(r *repo, dir string) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	if w.fsw == nil {
		return
	}
	if _, ok := w.watched[dir]; ok {
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			rel, _ := r.rel(dir)
			w.log.Warn("cannot watch directory", "repo", r.name, "path", rel, "err", err)
		}
		return
	}
	w.watched[dir] = struct{}{}
}

// unwatchTree removes the watches of dir and every directory below it, if
// dir is a watched directory.
func (w *Watcher) unwatchTree(dir string) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	if w.fsw == nil {
		return
	}
	if _, ok := w.watched[dir]; !ok {
		return
	}
	prefix := dir + string(filepath.Separator)
	for p := range w.watched {
		if p == dir || len(p) > len(prefix) && p[:len(prefix)] == prefix {
			// The kernel may already have dropped it (deleted directory).
			_ = w.fsw.Remove(p)
			delete(w.watched, p)
		}
	}
}

// metaString is what HeaderRepoMeta carries for r: its meta, and the
// languages it indexes when it does not index every one, so that a change
// of either re-evaluates every page.
func metaString(r Repo) string {
	s := r.Meta.String()
	if len(r.Languages) > 0 {
		s += ";l=" + strings.Join(r.Languages, ",")
	}
	return s
}
