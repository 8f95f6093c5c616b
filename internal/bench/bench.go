// Package bench measures knowhub end to end on a real corpus: cold
// indexing through the whole pipeline, a query replica's start-up time and
// memory, request-reply query latency over TCP, and edit-to-searchable
// latency. It runs an embedded NATS server in a temporary directory and a
// separate query replica process, as in production.
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/corpus"
)

// Config configures a run.
type Config struct {
	// Corpus is a directory of Markdown, or a .tar.gz of one.
	Corpus string
	// Queries is the number of timed queries.
	Queries int
	// Edits is the number of timed edits.
	Edits int
	// ReplicaArgs are extra flags for the query replica's command line.
	ReplicaArgs []string
	// Exe is the knowhub binary that runs the query replica.
	Exe string
	// HeapProfile, when set, is where the heap profile of the all-in-one
	// node is written once it has indexed and settled (go tool pprof
	// -sample_index=inuse_space), and to HeapProfile.idle once the
	// embedded server's store cache has expired.
	HeapProfile string
	Out         io.Writer
	Log         *slog.Logger
}

// Result holds the measured figures.
type Result struct {
	Files, Sections int
	CorpusBytes     int64
	ColdIndex       time.Duration
	ColdIndexCPU    time.Duration // user+system CPU of the whole process meanwhile
	ColdIndexSys    time.Duration // the system part of ColdIndexCPU
	// NodeRSS and NodePeakRSS are this process's memory once indexed and
	// settled: the all-in-one node (embedded NATS, every stage, the loaded
	// index) and the bench's small client.
	NodeRSS, NodePeakRSS int64
	// NodeSegmentRSS is the node's memory once its query stage reads the
	// index from the segment it wrote, NodeSegmentFileRSS the part of it
	// that is mapped files (0 when it did not within a minute).
	NodeSegmentRSS, NodeSegmentFileRSS int64
	// ReplicaReady is a replica process's start to ready replaying
	// KH_INDEX; ReplicaRestart its restart from the segment it wrote,
	// of SegmentBytes.
	ReplicaReady, ReplicaRestart time.Duration
	SegmentBytes                 int64
	ReplicaRSS                   int64 // bytes, after the queries
	ReplicaRSSFile               int64 // the part of ReplicaRSS that maps files
	ReplicaPeakRSS               int64
	// Queries go over TCP to the all-in-one node as `knowhub up` runs it,
	// from a client in the bench's process (Up) and from a client in a
	// process of its own (UpFromProcess), as an agent's would be; then to a
	// query replica in a process of its own (Replica).
	Up, UpFromProcess, Replica Latency
	// EchoP50 is a 5 KB echo on the path of Up, EchoAfterWorkP50 the
	// same once the responder has worked as long as Up's median search,
	// less that work: the cost of waking what went idle meanwhile.
	EchoP50, EchoAfterWorkP50 time.Duration
	EditP50, EditMax          time.Duration
	Debounce                  time.Duration
}

// Run performs the benchmark.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Queries == 0 {
		cfg.Queries = 2000
	}
	if cfg.Edits == 0 {
		cfg.Edits = 5
	}
	work, docs, size, err := corpus.Stage(cfg.Corpus, "knowhub-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	res := &Result{CorpusBytes: size}
	fmt.Fprintf(cfg.Out, "corpus %s: %.1f MB copied to %s\n", cfg.Corpus, float64(size)/1e6, docs)

	srv, err := broker.StartEmbedded(ctx, broker.EmbeddedConfig{Listen: "127.0.0.1:-1", StoreDir: filepath.Join(work, "js")})
	if err != nil {
		return nil, err
	}
	defer srv.Shutdown()
	kcfg := config.Default()
	kcfg.NATS.URL = srv.ClientURL()
	kcfg.HTTP.Listen = config.HTTPOff
	repos, err := config.RepositoriesFromArgs([]string{docs})
	if err != nil {
		return nil, err
	}
	repos[0].Name = "bench"
	kcfg.Repositories = repos
	res.Debounce = kcfg.Watcher.Debounce()

	// 1. Cold index: empty store to every section searchable.
	// The pipeline connects in process, as under `knowhub up`; queries
	// below go over TCP from a client connection, as an agent's would.
	nc, js, err := app.ConnectEmbedded(ctx, srv, "knowhub-bench")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	client, err := broker.Connect(broker.ClientConfig{URL: srv.ClientURL(), Name: "knowhub-bench-client"})
	if err != nil {
		return nil, err
	}
	defer client.Close()
	start := time.Now()
	cpuStart, sysStart := CPUTime()
	node, err := app.NewNode(ctx, kcfg, nc, js, app.All, cfg.Log)
	if err != nil {
		return nil, err
	}
	nodeCtx, stopNode := context.WithCancel(ctx)
	nodeDone := make(chan error, 1)
	go func() { nodeDone <- node.Run(nodeCtx) }()
	for _, ch := range []<-chan struct{}{node.Watcher.Ready(), node.API.Ready()} {
		select {
		case <-ch:
		case err := <-nodeDone:
			stopNode()
			return nil, fmt.Errorf("node stopped: %v", err)
		}
	}
	if err := app.WaitCaughtUp(ctx, js, node.Query.Engine().Revision); err != nil {
		stopNode()
		return nil, err
	}
	res.ColdIndex = time.Since(start)
	cpuEnd, sysEnd := CPUTime()
	res.ColdIndexCPU, res.ColdIndexSys = cpuEnd-cpuStart, sysEnd-sysStart
	st := node.Query.Engine().Stats(true).Collections[contract.CollectionDocs]
	res.Files, res.Sections = st.Sources, st.Chunks
	fmt.Fprintf(cfg.Out, "cold index: %d files, %d sections in %s (%s of CPU in this process, %s of it in the kernel, embedded NATS included)\n",
		res.Files, res.Sections, res.ColdIndex.Round(time.Millisecond), res.ColdIndexCPU.Round(time.Millisecond), res.ColdIndexSys.Round(time.Millisecond))
	settle := time.Now()
	node.Settle() // as `knowhub up` does once caught up
	res.NodeRSS, res.NodePeakRSS = RSS(os.Getpid())
	fmt.Fprintf(cfg.Out, "  memory of the all-in-one node, as `knowhub up` runs it: RSS %d MB once settled (in %s), peak %d MB\n",
		res.NodeRSS>>20, time.Since(settle).Round(time.Millisecond), res.NodePeakRSS>>20)
	// knowhub up writes its index to a segment once quiet and then reads
	// it from there: its memory from then on.
	deadline := time.Now().Add(time.Minute)
	for !node.Query.FromSegment() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	if node.Query.FromSegment() {
		node.Settle()
		res.NodeSegmentRSS, _ = RSS(os.Getpid())
		res.NodeSegmentFileRSS = RSSFile(os.Getpid())
		fmt.Fprintf(cfg.Out, "  once its index is read from the segment it wrote: RSS %d MB (%d MB of it mapped files), %d MB anonymous\n",
			res.NodeSegmentRSS>>20, res.NodeSegmentFileRSS>>20, (res.NodeSegmentRSS-res.NodeSegmentFileRSS)>>20)
	}
	if cfg.HeapProfile != "" {
		if err := writeHeap(cfg.HeapProfile); err != nil {
			stopNode()
			return nil, err
		}
		// As `knowhub up` does once the store's cache has expired.
		time.Sleep(broker.StoreCacheExpiry)
		node.Settle()
		rss, _ := RSS(os.Getpid())
		fmt.Fprintf(cfg.Out, "  after the store's cache expiry (%s): RSS %d MB\n", broker.StoreCacheExpiry, rss>>20)
		if err := writeHeap(cfg.HeapProfile + ".idle"); err != nil {
			stopNode()
			return nil, err
		}
	}
	queries, err := corpus.Queries(docs, 500)
	if err != nil {
		stopNode()
		return nil, err
	}
	// Query latency over TCP to the node as `knowhub up` serves it: the
	// request crosses TCP to the embedded server, whose process runs the
	// query stage too.
	lat, err := measureQueries(client, queries, cfg.Queries)
	if err != nil {
		stopNode()
		return nil, err
	}
	res.Up = lat
	lat.print(cfg.Out, "knowhub up (the query stage in the server's process)")
	// What a reply costs beyond the work: an echo of a reply of the
	// usual size on the same path, at once and after as long a spin as
	// the median search.
	if res.EchoP50, res.EchoAfterWorkP50, err = measureEcho(nc, client, lat.EngineP50); err != nil {
		stopNode()
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "  a 5 KB echo on the same path: p50 %s at once; after %s of work, p50 %s beyond the work\n",
		res.EchoP50, lat.EngineP50, res.EchoAfterWorkP50)
	// The same queries from a client process: the bench's own client
	// shares the server's scheduler, which wakes it for free.
	if res.UpFromProcess, err = measureFromProcess(ctx, cfg.Exe, srv.ClientURL(), docs, cfg.Queries); err != nil {
		stopNode()
		return nil, err
	}
	res.UpFromProcess.print(cfg.Out, "knowhub up from a client in a process of its own")
	stopNode()
	if err := <-nodeDone; err != nil {
		return nil, err
	}

	// 2. The pipeline without a query stage keeps following the files.
	pipe, err := app.NewNode(ctx, kcfg, nc, js, app.Stages{Watcher: true, Chunker: true, Indexer: true}, cfg.Log)
	if err != nil {
		return nil, err
	}
	pipeCtx, stopPipe := context.WithCancel(ctx)
	defer stopPipe()
	go func() { _ = pipe.Run(pipeCtx) }()

	// 3. A query replica process started on the full index replays
	// KH_INDEX, writes its segment and stops; started again, it opens
	// its segment.
	replicaCfg := filepath.Join(work, "replica.json")
	segDir := filepath.Join(work, "segments")
	if err := os.WriteFile(replicaCfg, fmt.Appendf(nil, `{"query": {"segmentDir": %q}}`, segDir), 0o644); err != nil {
		return nil, err
	}
	replicaArgs := append([]string{"--config", replicaCfg}, cfg.ReplicaArgs...)
	replica, ready, err := startReplica(ctx, cfg.Exe, srv.ClientURL(), client, replicaArgs)
	if err != nil {
		return nil, err
	}
	res.ReplicaReady = ready
	fmt.Fprintf(cfg.Out, "query replica ready in %s, replaying KH_INDEX (process start included)\n", ready.Round(time.Millisecond))
	// A clean stop leaves the segment of everything the replica applied.
	_ = replica.Process.Signal(os.Interrupt)
	if err := replica.Wait(); err != nil {
		return nil, fmt.Errorf("query replica stopped: %w", err)
	}
	if fi, err := os.Stat(filepath.Join(segDir, "index.seg")); err == nil {
		res.SegmentBytes = fi.Size()
	}
	replica, ready, err = startReplica(ctx, cfg.Exe, srv.ClientURL(), client, replicaArgs)
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = replica.Process.Signal(os.Interrupt)
		_ = replica.Wait()
	}()
	res.ReplicaRestart = ready
	fmt.Fprintf(cfg.Out, "query replica restarted in %s from its segment (%.0f MB; process start included)\n",
		ready.Round(time.Millisecond), float64(res.SegmentBytes)/1e6)

	// 4. Query latency over TCP, request-reply, to the replica process.
	lat, err = measureQueries(client, queries, cfg.Queries)
	if err != nil {
		return nil, err
	}
	res.Replica = lat
	lat.print(cfg.Out, "the query replica process")
	res.ReplicaRSS, res.ReplicaPeakRSS = RSS(replica.Process.Pid)
	res.ReplicaRSSFile = RSSFile(replica.Process.Pid)
	fmt.Fprintf(cfg.Out, "query replica memory: RSS %.0f MB (%.0f MB of it mapped files: the binary and the segment; %.0f MB anonymous), peak %.0f MB\n",
		float64(res.ReplicaRSS)/1e6, float64(res.ReplicaRSSFile)/1e6, float64(res.ReplicaRSS-res.ReplicaRSSFile)/1e6, float64(res.ReplicaPeakRSS)/1e6)

	// 5. Edit to searchable.
	target, err := firstFile(docs)
	if err != nil {
		return nil, err
	}
	var edits []time.Duration
	for i := range cfg.Edits {
		marker := fmt.Sprintf("benchmarkmarker%dx%d", time.Now().UnixNano()%1e6, i)
		f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		_, err = fmt.Fprintf(f, "\n\nEdited paragraph %s.\n", marker)
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := waitHit(ctx, client, marker, 30*time.Second); err != nil {
			return nil, err
		}
		edits = append(edits, time.Since(t0))
	}
	slices.Sort(edits)
	res.EditP50, res.EditMax = Percentile(edits, 50), edits[len(edits)-1]
	fmt.Fprintf(cfg.Out, "edit to searchable over %d edits: median %s, max %s (debounce %s included)\n",
		len(edits), res.EditP50.Round(time.Millisecond), res.EditMax.Round(time.Millisecond), res.Debounce)
	return res, nil
}

// MeasureClient sends the queries the bench picks from the Markdown in dir
// to the NATS server at url, n of them timed, and returns their latency:
// the client side of measureFromProcess.
func MeasureClient(url, dir string, n int) (Latency, error) {
	queries, err := corpus.Queries(dir, 500)
	if err != nil {
		return Latency{}, err
	}
	client, err := broker.Connect(broker.ClientConfig{URL: url, Name: "knowhub-bench-client-process"})
	if err != nil {
		return Latency{}, err
	}
	defer client.Close()
	return measureQueries(client, queries, n)
}

// measureFromProcess runs `knowhub bench --client-of url` on the corpus in
// dir and reads the latency it prints.
func measureFromProcess(ctx context.Context, exe, url, dir string, n int) (Latency, error) {
	exe, err := knowhubExe(exe)
	if err != nil {
		return Latency{}, err
	}
	cmd := exec.CommandContext(ctx, exe, "bench", "--client-of", url, "--corpus", dir, "--queries", strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Latency{}, fmt.Errorf("client process %s: %w", exe, err)
	}
	var lat Latency
	if err := json.Unmarshal(out, &lat); err != nil {
		return Latency{}, fmt.Errorf("client process: reading its figures: %w", err)
	}
	return lat, nil
}

// Latency is the distribution of docs queries over NATS request-reply.
type Latency struct {
	N                  int // timed queries
	P50, P90, P99, Max time.Duration
	// EngineP50 is the search itself, as the query service reports it.
	EngineP50 time.Duration
	// FloorP50 is a no-op request on the same path: the service's micro
	// PING.
	FloorP50 time.Duration
}

func (l Latency) print(w io.Writer, to string) {
	fmt.Fprintf(w, "query latency to %s over %d requests: p50 %s  p90 %s  p99 %s  max %s\n", to, l.N, l.P50, l.P90, l.P99, l.Max)
	fmt.Fprintf(w, "  the search itself: p50 %s; request-reply floor (micro PING, same path): p50 %s\n", l.EngineP50, l.FloorP50)
}

// measureQueries sends docs queries over client, cycling through queries:
// a hundred to warm up, then n timed; then a thousand no-op requests for
// the floor.
func measureQueries(client *nats.Conn, queries []string, n int) (Latency, error) {
	lat := make([]time.Duration, 0, n)
	engine := make([]time.Duration, 0, n)
	for i := 0; i < n+100; i++ {
		q := queries[i%len(queries)]
		data, _ := json.Marshal(contract.SearchRequest{Query: q})
		t0 := time.Now()
		msg, err := client.Request(contract.SubjectSearchDocs, data, 5*time.Second)
		d := time.Since(t0)
		if err != nil {
			return Latency{}, fmt.Errorf("query %q: %w", q, err)
		}
		if e := msg.Header.Get("Nats-Service-Error"); e != "" {
			return Latency{}, fmt.Errorf("query %q: %s", q, e)
		}
		var resp contract.SearchResponse
		if err := json.Unmarshal(msg.Data, &resp); err != nil {
			return Latency{}, fmt.Errorf("query %q: reply: %w", q, err)
		}
		if i >= 100 {
			lat = append(lat, d)
			engine = append(engine, time.Duration(resp.TookMicros)*time.Microsecond)
		}
	}
	floor := make([]time.Duration, 0, 1000)
	for range 1000 {
		t0 := time.Now()
		if _, err := client.Request("$SRV.PING."+contract.ServiceName, nil, 5*time.Second); err != nil {
			return Latency{}, err
		}
		floor = append(floor, time.Since(t0))
	}
	for _, s := range [][]time.Duration{lat, engine, floor} {
		slices.Sort(s)
	}
	return Latency{
		N:   len(lat),
		P50: Percentile(lat, 50), P90: Percentile(lat, 90), P99: Percentile(lat, 99), Max: lat[len(lat)-1],
		EngineP50: Percentile(engine, 50), FloorP50: Percentile(floor, 50),
	}, nil
}

// measureEcho times a thousand requests answered with a 5 KB reply by a
// responder on nc, the node's connection, at once and then after spinning
// for work, which is subtracted.
func measureEcho(nc, client *nats.Conn, work time.Duration) (now, afterWork time.Duration, err error) {
	reply := make([]byte, 5000)
	for _, spin := range []time.Duration{0, work} {
		sub, err := nc.Subscribe("knowhub.bench.echo", func(m *nats.Msg) {
			for t0 := time.Now(); time.Since(t0) < spin; {
			}
			_ = m.Respond(reply)
		})
		if err != nil {
			return 0, 0, err
		}
		if err := nc.Flush(); err != nil {
			return 0, 0, err
		}
		ds := make([]time.Duration, 0, 1000)
		for range 1000 {
			t0 := time.Now()
			if _, err := client.Request("knowhub.bench.echo", nil, 5*time.Second); err != nil {
				_ = sub.Unsubscribe()
				return 0, 0, err
			}
			ds = append(ds, time.Since(t0)-spin)
		}
		if err := sub.Unsubscribe(); err != nil {
			return 0, 0, err
		}
		slices.Sort(ds)
		if spin == 0 {
			now = Percentile(ds, 50)
		} else {
			afterWork = Percentile(ds, 50)
		}
	}
	return now, afterWork, nil
}

// CPUTime returns the user and system CPU time this process has used, and
// the system part of it.
func CPUTime() (total, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

// Percentile returns the p-th percentile of sorted durations, 0 when
// there are none.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted) - 1) * p / 100
	return sorted[i]
}

func waitHit(ctx context.Context, nc *nats.Conn, q string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	data, _ := json.Marshal(contract.SearchRequest{Query: q, TopK: 1})
	for time.Now().Before(deadline) {
		msg, err := nc.Request(contract.SubjectSearchDocs, data, 2*time.Second)
		if err == nil {
			var resp contract.SearchResponse
			if json.Unmarshal(msg.Data, &resp) == nil && len(resp.Hits) > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return fmt.Errorf("%q not searchable after %s", q, timeout)
}

// startReplica starts `knowhub worker query` and returns once it reports
// ready on kh.stats, with the time that took from the process start.
func startReplica(ctx context.Context, exe, url string, nc *nats.Conn, extra []string) (*exec.Cmd, time.Duration, error) {
	exe, err := knowhubExe(exe)
	if err != nil {
		return nil, 0, err
	}
	args := append([]string{"worker", "query", "--nats-url", url, "--http", "off", "--log-level", "warn"}, extra...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start query replica %s: %w", exe, err)
	}
	deadline := t0.Add(60 * time.Second)
	for time.Now().Before(deadline) {
		msg, err := nc.Request(contract.SubjectStats, []byte("{}"), time.Second)
		if err == nil {
			var st contract.StatsResponse
			if json.Unmarshal(msg.Data, &st) == nil && st.Ready {
				return cmd, time.Since(t0), nil
			}
		} else if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout) {
			return cmd, 0, err
		}
		time.Sleep(2 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return nil, 0, errors.New("query replica not ready after 60s")
}

// knowhubExe is the knowhub binary that runs the bench's other processes:
// exe, or when empty this one.
func knowhubExe(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	return os.Executable()
}

// writeHeap writes the process's heap profile to path.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write heap profile: %w", err)
	}
	return f.Close()
}

// RSS reads a process's resident and peak resident memory from /proc.
func RSS(pid int) (cur, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			cur = n << 10
		case "VmHWM":
			peak = n << 10
		}
	}
	return cur, peak
}

// RSSFile reads the part of a process's resident memory that maps files
// (its binary, a replica's segment): pages the kernel may drop and read
// again, unlike the heap.
func RSSFile(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			if fields := strings.Fields(v); len(fields) > 0 {
				n, _ := strconv.ParseInt(fields[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

func firstFile(dir string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return err
		}
		if !d.IsDir() && filepath.Ext(path) == ".md" {
			found = path
			return fs.SkipAll
		}
		return nil
	})
	if found == "" && err == nil {
		err = errors.New("no .md file in the corpus")
	}
	return found, err
}
