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

// startCluster starts the deployed three-server JetStream cluster.
func startCluster(t *testing.T) []*server.Server {
	names := []string{"nats-1", "nats-2", "nats-3"}
	return startClusterFrom(t, deployNATSConf, names, func(name string) map[string]string {
		return map[string]string{"SERVER_NAME": name}
	})
}

// startClusterFrom starts one JetStream server per name from the
// configuration file conf, read with the environment env(name), and routes
// them into one cluster. The file's settings hold except the addresses:
// servers listen on free local ports (monitoring off) and store in
// temporary directories.
func startClusterFrom(t *testing.T, conf string, names []string, env func(name string) map[string]string) []*server.Server {
	t.Helper()
	ports := make([]int, len(names))
	var routes []string
	for i := range names {
		ports[i] = freePort(t)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i]))
	}
	var servers []*server.Server
	for i, name := range names {
		for k, v := range env(name) {
			t.Setenv(k, v)
		}
		opts, err := server.ProcessConfigFile(conf)
		if err != nil {
			t.Fatalf("%s: %v", conf, err)
		}
		if opts.ServerName != name || !opts.JetStream || opts.Cluster.Name == "" || len(opts.Routes) != len(names) {
			t.Fatalf("%s for %s: server %q, JetStream %v, cluster %q with %d routes", conf, name,
				opts.ServerName, opts.JetStream, opts.Cluster.Name, len(opts.Routes))
		}
		opts.Host, opts.Port = "127.0.0.1", -1
		opts.HTTPHost, opts.HTTPPort = "", 0
		opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", ports[i]
		opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		opts.StoreDir = t.TempDir()
		opts.NoSigs, opts.NoLog = true, true
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
