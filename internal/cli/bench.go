package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/knowhub/knowhub/internal/bench"
	corpuspkg "github.com/knowhub/knowhub/internal/corpus"
)

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommon("bench", "bench [--corpus DIR|FILE.tar.gz] [flags]", stdout, stderr)
	corpus := c.fs.String("corpus", "../shared/corpora/openclaw-docs", "Markdown `dir` or .tar.gz to index")
	queries := c.fs.Int("queries", 2000, "timed queries")
	edits := c.fs.Int("edits", 5, "timed edits")
	asJSON := c.fs.Bool("json", false, "also print the figures as JSON")
	cpuProfile := c.fs.String("cpuprofile", "", "write a CPU profile of this process to `file`, and of the query replica to file.replica")
	memProfile := c.fs.String("memprofile", "", "write an allocation profile of this process to `file` when done")
	heapProfile := c.fs.String("heapprofile", "", "write the heap profile of the all-in-one node, once indexed and settled, to `file`")
	clientOf := c.fs.String("client-of", "", "only send the corpus's queries to the NATS server at `URL` and print their latency as JSON (the bench runs itself so, as a client process)")
	qps := c.fs.Bool("qps", false, "measure throughput instead: docs searches per second at 1, 4, 16 and 64 concurrent clients over NATS and HTTP against a `knowhub up` process, then over NATS with a second query replica")
	exe := c.fs.String("exe", "", "with --qps, the knowhub `binary` to measure (default this one)")
	duration := c.fs.Duration("duration", 2*time.Second, "with --qps, how long each figure is measured")
	multiply := c.fs.String("multiply", "", "only write `N` copies of the corpus (2.5 for two and a half) into --out, for measuring past its size, and exit")
	out := c.fs.String("out", "", "with --multiply, the `dir` to write the copies into")
	c.logLevel = "warn"
	if _, err := c.parse(args); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	if *multiply != "" {
		n, err := strconv.ParseFloat(*multiply, 64)
		if err != nil || *out == "" {
			return usageError{fmt.Errorf("--multiply takes a number of copies and --out a directory")}
		}
		files, size, err := corpuspkg.Multiply(*corpus, *out, n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d files, %.1f MB: %v copies of %s in %s\n", files, float64(size)/1e6, n, *corpus, *out)
		return nil
	}
	if *clientOf != "" {
		lat, err := bench.MeasureClient(*clientOf, *corpus, *queries)
		if err != nil {
			return err
		}
		return printJSON(stdout, lat)
	}
	if *qps {
		res, err := bench.RunQPS(ctx, bench.QPSConfig{Corpus: *corpus, Exe: *exe, Duration: *duration, Out: stdout})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, res)
		}
		return nil
	}
	var replicaArgs []string
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
		replicaArgs = []string{"--cpuprofile", *cpuProfile + ".replica"}
	}
	if *memProfile != "" {
		defer writeAllocs(*memProfile, stderr)
	}
	res, err := bench.Run(ctx, bench.Config{Corpus: *corpus, Queries: *queries, Edits: *edits, ReplicaArgs: replicaArgs, HeapProfile: *heapProfile, Out: stdout, Log: log})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, res)
	}
	return nil
}

// writeAllocs writes the allocation profile of the process to path.
func writeAllocs(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "knowhub bench: memprofile: %v\n", err)
	}
}

// startCPUProfile profiles the process's CPU into path until the returned
// function is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
