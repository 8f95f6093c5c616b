package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/corpus"
)

// QPSConfig configures a throughput run (RunQPS).
type QPSConfig struct {
	// Corpus is a directory of Markdown, or a .tar.gz of one.
	Corpus string
	// Exe is the knowhub binary that runs `up` and the second replica;
	// empty means this one. Naming an older build measures it with the
	// same client.
	Exe string
	// Clients are the numbers of concurrent clients, each with a
	// connection of its own (default 1, 4, 16, 64).
	Clients []int
	// Duration is how long each measurement sends requests (default 2s).
	Duration time.Duration
	Out      io.Writer
}

// QPSResult holds docs searches answered per second by number of clients.
type QPSResult struct {
	Files   int
	Clients []int
	// NATS and HTTP are against one `knowhub up`; NATSTwoReplicas is over
	// NATS once a `knowhub worker query` process has joined the queue
	// group beside up's own query stage.
	NATS, HTTP, NATSTwoReplicas []float64
}

// RunQPS starts `knowhub up` on the corpus as a process of its own and
// measures how many docs searches it answers per second, over NATS and
// over HTTP, at each number of concurrent clients; then again over NATS
// with a second query replica process. Each client sends its next request
// when the last is answered, cycling through queries drawn from the
// corpus. Errors (an overloaded reply included) stop the run.
func RunQPS(ctx context.Context, cfg QPSConfig) (*QPSResult, error) {
	if len(cfg.Clients) == 0 {
		cfg.Clients = []int{1, 4, 16, 64}
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 2 * time.Second
	}
	exe, err := knowhubExe(cfg.Exe)
	if err != nil {
		return nil, err
	}
	work, docs, size, err := corpus.Stage(cfg.Corpus, "knowhub-qps-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(cfg.Out, "corpus %s: %.1f MB; knowhub up: %s\n", cfg.Corpus, float64(size)/1e6, exe)
	natsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := map[string]any{
		"dataDir":      filepath.Join(work, "data"),
		"nats":         map[string]any{"listen": natsAddr, "embeddedAuth": "none"},
		"http":         map[string]any{"listen": httpAddr},
		"repositories": []map[string]any{{"name": "bench", "path": docs}},
	}
	confPath := filepath.Join(work, "knowhub.json")
	data, _ := json.Marshal(conf)
	if err := os.WriteFile(confPath, data, 0o600); err != nil {
		return nil, err
	}
	up := exec.CommandContext(ctx, exe, "up", "--config", confPath, "--log-level", "warn")
	up.Stderr = os.Stderr
	if err := up.Start(); err != nil {
		return nil, fmt.Errorf("start knowhub up %s: %w", exe, err)
	}
	defer func() {
		_ = up.Process.Signal(os.Interrupt)
		_ = up.Wait()
	}()
	natsURL := "nats://" + natsAddr
	probe, err := connectRetry(ctx, natsURL, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	files, err := waitIndexed(ctx, probe, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	res := &QPSResult{Files: files, Clients: cfg.Clients}
	fmt.Fprintf(cfg.Out, "indexed %d files; each figure is docs searches answered per second over %s\n", files, cfg.Duration)
	queries, err := corpus.Queries(docs, 500)
	if err != nil {
		return nil, err
	}
	most := 0
	for _, c := range cfg.Clients {
		most = max(most, c)
	}
	conns := make([]*nats.Conn, most)
	for i := range conns {
		if conns[i], err = broker.Connect(broker.ClientConfig{URL: natsURL, Name: "knowhub-qps"}); err != nil {
			return nil, err
		}
		defer conns[i].Close()
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: most, MaxConnsPerHost: most}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	natsSearch := func(client, i int) error {
		data, _ := json.Marshal(contract.SearchRequest{Query: queries[i%len(queries)]})
		msg, err := conns[client].Request(contract.SubjectSearchDocs, data, 10*time.Second)
		if err != nil {
			return err
		}
		if e := msg.Header.Get(micro.ErrorHeader); e != "" {
			return fmt.Errorf("search over NATS: %s (code %s)", e, msg.Header.Get(micro.ErrorCodeHeader))
		}
		return nil
	}
	httpSearch := func(_, i int) error {
		resp, err := hc.Get("http://" + httpAddr + "/api/docs/search?q=" + url.QueryEscape(queries[i%len(queries)]))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("search over HTTP: %s", resp.Status)
		}
		return nil
	}
	// Warm both paths up once.
	for _, f := range []func(int, int) error{natsSearch, httpSearch} {
		if _, err := throughput(ctx, most, cfg.Duration/4, f); err != nil {
			return nil, err
		}
	}
	for _, c := range cfg.Clients {
		n, err := throughput(ctx, c, cfg.Duration, natsSearch)
		if err != nil {
			return nil, err
		}
		h, err := throughput(ctx, c, cfg.Duration, httpSearch)
		if err != nil {
			return nil, err
		}
		res.NATS, res.HTTP = append(res.NATS, n), append(res.HTTP, h)
		fmt.Fprintf(cfg.Out, "%3d clients: NATS %6.0f/s  HTTP %6.0f/s\n", c, n, h)
	}

	replica := exec.CommandContext(ctx, exe, "worker", "query", "--nats-url", natsURL, "--http", "off", "--log-level", "warn")
	replica.Stderr = os.Stderr
	if err := replica.Start(); err != nil {
		return nil, fmt.Errorf("start query replica %s: %w", exe, err)
	}
	defer func() {
		_ = replica.Process.Signal(os.Interrupt)
		_ = replica.Wait()
	}()
	if err := waitResponders(ctx, probe, 2, time.Minute); err != nil {
		return nil, err
	}
	if _, err := throughput(ctx, most, cfg.Duration/4, natsSearch); err != nil {
		return nil, err
	}
	for _, c := range cfg.Clients {
		n, err := throughput(ctx, c, cfg.Duration, natsSearch)
		if err != nil {
			return nil, err
		}
		res.NATSTwoReplicas = append(res.NATSTwoReplicas, n)
		fmt.Fprintf(cfg.Out, "%3d clients, two query replicas: NATS %6.0f/s\n", c, n)
	}
	return res, nil
}

// throughput runs clients loops of search for d and returns the requests
// answered per second; the first error stops it.
func throughput(ctx context.Context, clients int, d time.Duration, search func(client, i int) error) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for i := c * 7919; ctx.Err() == nil; i++ {
				if err := search(c, i); err != nil {
					if ctx.Err() == nil {
						errs <- err
						cancel()
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(done.Load()) / elapsed.Seconds(), nil
}

// freeAddr is a loopback address with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func connectRetry(ctx context.Context, url string, timeout time.Duration) (*nats.Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		nc, err := nats.Connect(url)
		if err == nil {
			return nc, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to knowhub up at %s: %w", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitIndexed waits until kh.stats says the index is loaded and the
// initial sync indexed, and returns the number of docs files.
func waitIndexed(ctx context.Context, nc *nats.Conn, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		msg, err := nc.Request(contract.SubjectStats, []byte("{}"), time.Second)
		if err == nil {
			var st contract.StatsResponse
			if json.Unmarshal(msg.Data, &st) == nil && st.Ready && !st.Indexing {
				return st.Collections[contract.CollectionDocs].Sources, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, errors.New("knowhub up did not finish indexing in time")
}

// waitResponders waits until n instances of the knowhub micro service
// answer a discovery ping.
func waitResponders(ctx context.Context, nc *nats.Conn, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		inbox := nats.NewInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			return err
		}
		if err := nc.PublishRequest("$SRV.PING."+contract.ServiceName, inbox, nil); err != nil {
			return err
		}
		got := 0
		for {
			if _, err := sub.NextMsg(200 * time.Millisecond); err != nil {
				break
			}
			got++
		}
		_ = sub.Unsubscribe()
		if got >= n {
			return nil
		}
	}
	return fmt.Errorf("fewer than %d query replicas answer after %s", n, timeout)
}
