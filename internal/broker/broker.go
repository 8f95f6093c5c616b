// Package broker owns knowhub's relationship with NATS: it starts the
// embedded server used by `knowhub up` and by tests, connects clients with
// the configured credentials and TLS, and declares every stream and bucket of
// the contract idempotently.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// EmbeddedConfig configures the in-process NATS server.
type EmbeddedConfig struct {
	// Listen is host:port; port -1 picks a free port (tests).
	Listen string
	// StoreDir holds JetStream's file storage.
	StoreDir string
	// MaxPayload is the largest message the server accepts, in bytes.
	MaxPayload int32
	// BufferLimit bounds, in bytes, what the server buffers for one
	// connection's outbound messages (max_pending, nats-server's default
	// 64 MiB) and for one stream's messages waiting to be stored
	// (max_buffered_size, default 128 MiB). Zero means DefaultBufferLimit;
	// it is raised to MaxPayload if below.
	BufferLimit int64
	// ListenFlag names the option that changes Listen, for the error
	// shown when the port is taken.
	ListenFlag string
	// Logger receives the disk guard's lines (a full disk is an error);
	// nil discards them.
	Logger *slog.Logger
	// Token, when set, is the one credential the server accepts: every
	// client, in process or over TCP, must present it.
	Token string
}

// Bounds of the embedded server's memory.
const (
	// DefaultBufferLimit is EmbeddedConfig.BufferLimit's default.
	DefaultBufferLimit = 16 << 20
	// MaxBufferedMsgs bounds the messages waiting to be stored per
	// stream (max_buffered_msgs; nats-server's default is 100,000).
	MaxBufferedMsgs = 10_000
	// MaxMemoryStore bounds JetStream's memory storage: the raw
	// transcripts awaiting sanitization, the one memory stream.
	MaxMemoryStore = 256 << 20
	// StoreCacheExpiry is how long the file store keeps a message block
	// it has read or written in memory after its last use (nats-server's
	// fixed cache expiry, 10s), with a margin.
	StoreCacheExpiry = 12 * time.Second
)

// Embedded is a running in-process NATS server with JetStream.
type Embedded struct {
	srv   *server.Server
	opts  *server.Options // as started
	token string
	guard *diskGuard
	stop  context.CancelFunc
	done  chan struct{}
}

// StartEmbedded starts a NATS server with JetStream file storage and waits,
// honouring ctx, until it accepts connections.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	host, portStr, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("nats listen address %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("nats listen address %q: bad port", cfg.Listen)
	}
	if port > 0 {
		// nats-server reports a busy port by exiting the process; check first
		// so the user gets an error naming the flag instead.
		l, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			flag := cfg.ListenFlag
			if flag == "" {
				flag = "--nats-listen"
			}
			return nil, fmt.Errorf("nats cannot listen on %s (%v): choose another address with %s", cfg.Listen, err, flag)
		}
		_ = l.Close()
	}
	opts := &server.Options{
		ServerName:         "knowhub",
		Host:               host,
		Port:               port,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		NoSigs:             true,
		NoLog:              true,
		MaxPayload:         cfg.MaxPayload,
		JetStreamMaxMemory: MaxMemoryStore,
		Authorization:      cfg.Token,
		// Bound the buffers nats-server sizes for a large deployment:
		// one slow connection or one busy stream may otherwise hold
		// 64 MiB and 128 MiB of this process's memory.
		MaxPending:            cfg.BufferLimit,
		StreamMaxBufferedSize: cfg.BufferLimit,
		StreamMaxBufferedMsgs: MaxBufferedMsgs,
	}
	if opts.MaxPayload == 0 {
		opts.MaxPayload = 8 << 20
	}
	if opts.MaxPending == 0 {
		opts.MaxPending = DefaultBufferLimit
	}
	opts.MaxPending = max(opts.MaxPending, int64(opts.MaxPayload))
	opts.StreamMaxBufferedSize = opts.MaxPending
	if diskGuarded {
		// The disk guard's account limit binds instead (diskguard.go).
		opts.JetStreamMaxStore = unlimitedStore
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("create nats server: %w", err)
	}
	go srv.Start()
	deadline := time.Now().Add(30 * time.Second)
	for !srv.ReadyForConnections(100 * time.Millisecond) {
		if err := ctx.Err(); err != nil {
			srv.Shutdown()
			return nil, err
		}
		if time.Now().After(deadline) {
			srv.Shutdown()
			return nil, errors.New("nats server not ready after 30s")
		}
	}
	e := &Embedded{srv: srv, opts: opts, token: cfg.Token, done: make(chan struct{})}
	var gctx context.Context
	gctx, e.stop = context.WithCancel(context.Background())
	if !diskGuarded {
		close(e.done)
		return e, nil
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e.guard = &diskGuard{srv: srv, dir: cfg.StoreDir, log: log.With("component", "disk")}
	// The first check sets the limit before knowhub's own clients connect.
	e.guard.check()
	go func() {
		defer close(e.done)
		e.guard.run(gctx)
	}()
	return e, nil
}

// DiskProblem names what is wrong with the store's disk (it is full), or
// returns nil.
func (e *Embedded) DiskProblem() error {
	if e.guard == nil {
		return nil
	}
	return e.guard.err()
}

// ClientURL is the URL clients connect to.
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// ConnectInProcess connects to the embedded server through an in-memory
// pipe instead of TCP: the workers of `knowhub up` then exchange messages
// without a system call per publish and ack.
func (e *Embedded) ConnectInProcess(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.InProcessServer(e.srv), nats.MaxReconnects(-1)}
	if e.token != "" {
		opts = append(opts, nats.Token(e.token))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connect in process: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits for it to finish.
func (e *Embedded) Shutdown() {
	e.stop()
	<-e.done
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// ClientConfig says how to reach a NATS server.
type ClientConfig struct {
	URL       string
	Name      string
	CredsFile string
	NKeyFile  string
	User      string
	Password  string
	Token     string
	TLSCA     string
	TLSCert   string
	TLSKey    string
	// Retry keeps trying when the first connection fails instead of
	// returning an error: a long-lived client that starts before the
	// server (`knowhub mcp`).
	Retry bool
}

// Connect opens a NATS connection that reconnects forever.
func Connect(cfg ClientConfig) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
	}
	if cfg.Retry {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.NKeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read nkey seed %s: %w", cfg.NKeyFile, err)
		}
		opts = append(opts, o)
	}
	if cfg.User != "" {
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	url := cfg.URL
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats at %s: %w", url, err)
	}
	return nc, nil
}
