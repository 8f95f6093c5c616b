package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/datadir"
)

// Up runs an embedded NATS server with JetStream storage in cfg.DataDir and
// every stage on it, printing where it listens to out, until ctx ends.
// prog is how the user runs knowhub ("knowhub", "go run ./cmd/knowhub"),
// for the hints it prints.
func Up(ctx context.Context, cfg *config.Config, log *slog.Logger, out io.Writer, prog string) error {
	start := time.Now()
	lock, err := datadir.Lock(cfg.DataDir)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	// The embedded server is the node's trust boundary: every scope, the
	// quarantine and every stream are one subscription away. It accepts
	// only the token kept in the data directory, which knowhub's own
	// workers use and the CLI on this host reads.
	var token string
	if cfg.NATS.EmbeddedAuth != config.EmbeddedAuthNone {
		if token, err = datadir.NATSToken(cfg.DataDir); err != nil {
			return err
		}
	} else if !loopbackListen(cfg.NATS.Listen) {
		log.Warn("the embedded NATS server listens beyond this host without authentication (nats.embeddedAuth is none): anyone who reaches it reads every document, knowledge scope and quarantined entry, and writes into every stream",
			"listen", cfg.NATS.Listen)
	}
	srv, err := broker.StartEmbedded(ctx, broker.EmbeddedConfig{
		Listen:      cfg.NATS.Listen,
		StoreDir:    filepath.Join(cfg.DataDir, "jetstream"),
		MaxPayload:  int32(cfg.NATS.MaxPayload),
		BufferLimit: int64(cfg.NATS.BufferLimit),
		ListenFlag:  "--nats-listen",
		Logger:      log,
		Token:       token,
	})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	cfg.NATS = config.NATS{URL: srv.ClientURL(), Listen: cfg.NATS.Listen, MaxPayload: cfg.NATS.MaxPayload, BufferLimit: cfg.NATS.BufferLimit, Token: token, EmbeddedAuth: cfg.NATS.EmbeddedAuth}
	nc, js, err := ConnectEmbedded(ctx, srv, "knowhub-up")
	if err != nil {
		return err
	}
	defer func() { _ = nc.Drain() }()
	// The configuration names every repository `up` serves: one that
	// KH_FILES holds but it does not name was removed.
	keep := make([]string, 0, len(cfg.Repositories))
	for _, r := range cfg.Repositories {
		keep = append(keep, r.Name)
	}
	if err := Reconcile(ctx, js, keep, log); err != nil {
		return err
	}
	// A data directory that holds files already read is a restart: the
	// watcher then checks the files for changes rather than indexing them.
	restart := false
	if p, err := ReadProgress(ctx, js); err == nil {
		restart = p.FilesLastSeq > 0
	}
	if cfg.Query.SegmentDir == "" {
		// The replica's segment: derived data, rebuilt from the streams
		// when missing or damaged.
		cfg.Query.SegmentDir = filepath.Join(cfg.DataDir, "segments")
	}
	node, err := NewNode(ctx, cfg, nc, js, All, log)
	if err != nil {
		return err
	}
	node.SetProblem(srv.DiskProblem)
	fmt.Fprintf(out, "knowhub is up\n  NATS   %s", srv.ClientURL())
	if token != "" {
		fmt.Fprintf(out, " (token in %s)", filepath.Join(cfg.DataDir, datadir.NATSTokenFile))
	} else {
		fmt.Fprint(out, " (no authentication)")
	}
	fmt.Fprintln(out)
	if addr := node.HTTPAddr(); addr != "" {
		fmt.Fprintf(out, "  HTTP   http://%s\n", addr)
	}
	fmt.Fprintf(out, "  data   %s\n", cfg.DataDir)
	for _, r := range cfg.Repositories {
		fmt.Fprintf(out, "  repo   %s (%s, priority %d) %s\n", r.Name, r.Type, r.Priority, r.Path)
	}
	if len(cfg.Repositories) == 0 {
		fmt.Fprintf(out, "  repo   none: no documentation is indexed. Name folders (%s up DIR ...) or list them under \"repositories\" in a --config file; tools and knowledge are served meanwhile\n", prog)
	}
	hint := prog + " search"
	if u := srv.ClientURL(); u != config.DefaultNATSURL {
		hint += " --nats-url " + u
	}
	if token != "" && filepath.Clean(cfg.DataDir) != config.DefaultDataDir {
		hint += " --data " + cfg.DataDir // where the command finds the token
	}
	go func() {
		label := "indexing"
		if restart {
			label = "checking for changes"
		}
		meter := NewMeter(out, label, start)
		var shown time.Time
		show := func(p Progress, reading bool) {
			if now := time.Now(); now.Sub(shown) >= 250*time.Millisecond {
				shown = now
				st := node.Query.Engine().Stats(true).Collections[contract.CollectionDocs]
				s := MeterSample{Done: st.Sources, Total: st.Sources + p.InFlight(), Sections: st.Chunks, Reading: reading}
				if err := node.Problem(); err != nil {
					s.Stalled = err.Error()
				}
				if !reading { // every file has been read: count files, not files with sections
					sc := node.Watcher.Initial()
					s.Total = sc.Published + sc.Unchanged
					s.Done = s.Total - p.InFlight()
				}
				meter.Update(now, s)
			}
		}
		// While the watcher reads the repositories, the total is not known.
		tick := time.NewTicker(250 * time.Millisecond)
		for reading := true; reading; {
			select {
			case <-node.Watcher.Ready():
				reading = false
			case <-ctx.Done():
				tick.Stop()
				return
			case <-tick.C:
				// On a restart the index holds every file already: a
				// count of indexed files would say nothing of the check.
				if p, err := ReadProgress(ctx, js); err == nil && !restart {
					show(p, true)
				}
			}
		}
		tick.Stop()
		node.ObserveSync(func(p Progress) { show(p, false) })
		select {
		case <-node.Complete():
			meter.Finish()
		case <-ctx.Done():
			meter.Finish()
			return
		}
		st := node.Query.Engine().Stats(true).Collections[contract.CollectionDocs]
		sc := node.Watcher.Initial()
		took := time.Since(start).Round(time.Millisecond)
		switch read := sc.Published + sc.Unchanged; {
		case restart && sc.Published == 0 && sc.Deleted == 0:
			fmt.Fprintf(out, "checked %s in %s: none changed; %s, %s searchable", count(read, "file", "files"), took,
				count(st.Sources, "file", "files"), count(st.Chunks, "section", "sections"))
		case restart:
			fmt.Fprintf(out, "checked %s in %s: %s changed, %s gone, indexed; %s, %s searchable", count(read, "file", "files"), took,
				count(sc.Published, "file", "files"), count(sc.Deleted, "file", "files"),
				count(st.Sources, "file", "files"), count(st.Chunks, "section", "sections"))
		default:
			fmt.Fprintf(out, "indexed %s, %s in %s", count(st.Sources, "file", "files"), count(st.Chunks, "section", "sections"), took)
			// The watcher read every matching file; one without any
			// section (empty, or front matter only) is stored but not
			// searchable.
			if read > st.Sources {
				fmt.Fprintf(out, " (%s of the %s read hold no section)", thousands(read-st.Sources), count(read, "file", "files"))
			}
		}
		fmt.Fprintf(out, "; search with: %s \"your question\"\n", hint)
		node.Settle()
		// The embedded server keeps the message blocks the sync wrote
		// and read cached until they have been idle for its cache
		// expiry; give those buffers back too once it has passed.
		select {
		case <-time.After(broker.StoreCacheExpiry):
			node.Settle()
		case <-ctx.Done():
		}
	}()
	return node.Run(ctx)
}

// count is n, in thousands, with the noun that fits it: "1 file",
// "14,917 files".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// loopbackListen reports whether a listen address (host:port) accepts
// connections from this host only.
func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
