package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/knowhub/knowhub/internal/app"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts three JetStream servers routed into one cluster.
func startCluster(t *testing.T) []*server.Server {
	t.Helper()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var servers []*server.Server
	for i, p := range ports {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoSigs:     true,
			NoLog:      true,
			MaxPayload: 8 << 20,
			Cluster:    server.ClusterOpts{Name: "knowhub", Host: "127.0.0.1", Port: p},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(s.Shutdown)
		servers = append(servers, s)
	}
	for _, s := range servers {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("cluster server not ready")
		}
	}
	natstest.WaitFor(t, 30*time.Second, "a JetStream meta leader", func() bool {
		for _, s := range servers {
			if s.JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
	return servers
}

// TestClusterWithReplicatedStreamsSurvivesAServerLoss runs every stage
// against a three-server JetStream cluster with replicated streams, stops
// a server that the workers are not connected to, and checks that
// indexing and search go on.
func TestClusterWithReplicatedStreamsSurvivesAServerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server cluster")
	}
	servers := startCluster(t)
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Alpha\n\nReplicated streams keep three copies.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.HTTP.Listen = config.HTTPOff
	cfg.NATS.URL = servers[0].ClientURL()
	cfg.NATS.Replicas = 3
	cfg.Watcher.DebounceMS = 20
	cfg.Repositories = []config.Repository{{Name: "docs", Path: docs, Priority: 1, Type: contract.RepoCore, Glob: config.DefaultGlob}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, js, err := app.Connect(ctx, cfg.NATS, "cluster-test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	info, err := js.Stream(ctx, contract.StreamFiles)
	if err != nil {
		t.Fatal(err)
	}
	if si, _ := info.Info(ctx); si == nil || si.Config.Replicas != 3 {
		t.Fatalf("KH_FILES replicas: %+v", si)
	}
	node, err := app.NewNode(ctx, cfg, conn, js, app.All, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	defer func() { cancel(); <-done }()

	search := func(q string) int {
		data, _ := json.Marshal(contract.SearchRequest{Query: q})
		msg, err := conn.Request(contract.SubjectSearchDocs, data, 5*time.Second)
		if err != nil {
			return -1
		}
		var resp contract.SearchResponse
		if json.Unmarshal(msg.Data, &resp) != nil {
			return -1
		}
		return len(resp.Hits)
	}
	natstest.WaitFor(t, 30*time.Second, "the first file searchable", func() bool { return search("replicated streams") == 1 })

	servers[2].Shutdown() // a minority of the cluster
	if err := os.WriteFile(filepath.Join(docs, "b.md"), []byte("# Beta\n\nWritten after a server stopped.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Leaders that were on the stopped server are elected again first.
	natstest.WaitFor(t, 60*time.Second, "a file written after the loss searchable", func() bool { return search("written after a server stopped") == 1 })
}
