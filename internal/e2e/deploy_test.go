package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gopkg.in/yaml.v3"

	"github.com/knowhub/knowhub/internal/cli"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// deployNATSConf is the configuration every server of the deployed
// cluster reads.
const deployNATSConf = repoRoot + "/deploy/nats/cluster.conf"

// composeFile is the part of docker-compose.yml the deployment test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       map[string]string `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Deploy      struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// mounts maps each container path of a service's volumes to its source.
func (s composeService) mounts() map[string]string {
	m := make(map[string]string)
	for _, v := range s.Volumes {
		// The source may be "${VAR:-default}", which holds a colon.
		src, rest := v, ""
		if strings.HasPrefix(v, "${") {
			end := strings.IndexByte(v, '}')
			src, rest = v[:end+1], v[end+1:]
		} else if i := strings.IndexByte(v, ':'); i >= 0 {
			src, rest = v[:i], v[i:]
		}
		target, _, _ := strings.Cut(strings.TrimPrefix(rest, ":"), ":")
		m[target] = src
	}
	return m
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(data, &cf); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return cf
}

// TestComposeDeployment runs docker-compose.yml's deployment without
// containers: the NATS servers from deploy/nats/cluster.conf with the
// compose environment, and every worker service, as many replicas as
// compose starts, with its command line and environment, the container
// paths mapped to the files they mount. Only addresses change: servers
// listen on free local ports, and nats-N in URLs points at them.
func TestComposeDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server cluster and every worker")
	}
	cf := readCompose(t)
	var natsNames, workerNames []string
	for name, s := range cf.Services {
		switch {
		case strings.HasPrefix(s.Image, "nats:"):
			natsNames = append(natsNames, name)
			if tag := strings.TrimPrefix(s.Image, "nats:"); tag != server.VERSION && !strings.HasPrefix(tag, server.VERSION+"-") {
				t.Errorf("%s runs NATS %s; knowhub embeds and is tested with %s", name, tag, server.VERSION)
			}
			if src := s.mounts()["/etc/nats/cluster.conf"]; filepath.Clean(src) != "deploy/nats/cluster.conf" {
				t.Errorf("%s mounts %q as its configuration", name, src)
			}
		case s.Build != nil:
			workerNames = append(workerNames, name)
		}
	}
	slices.Sort(natsNames)
	slices.Sort(workerNames)
	if !slices.Equal(natsNames, []string{"nats-1", "nats-2", "nats-3"}) {
		t.Fatalf("NATS services %v, want nats-1, nats-2 and nats-3", natsNames)
	}
	stagesRun := map[string]bool{}
	for _, name := range workerNames {
		stagesRun[cf.Services[name].Command[0]] = true
	}
	for _, stage := range []string{"watcher", "chunker", "indexer", "query", "extractor"} {
		if !stagesRun[stage] {
			t.Errorf("no service runs the %s", stage)
		}
	}
	// The query services serve every shard of one count, each with two
	// replicas at least.
	shardReplicas := map[string]int{}
	shardCount := 0
	for _, name := range workerNames {
		s := cf.Services[name]
		if s.Command[0] != "query" {
			continue
		}
		i := slices.Index(s.Command, "--shard")
		if i < 0 || i+1 >= len(s.Command) {
			t.Fatalf("%s runs a query replica without --shard", name)
		}
		shard, n, err := config.ParseShard(s.Command[i+1])
		if err != nil || shardCount != 0 && n != shardCount {
			t.Fatalf("%s: --shard %s: %v (other services have %d shards)", name, s.Command[i+1], err, shardCount)
		}
		shardCount = n
		shardReplicas[fmt.Sprint(shard)] += max(1, s.Deploy.Replicas)
	}
	if shardCount < 2 || len(shardReplicas) != shardCount {
		t.Fatalf("query services serve shards %v of %d", shardReplicas, shardCount)
	}
	for shard, n := range shardReplicas {
		if n < 2 {
			t.Errorf("shard %s has %d replica", shard, n)
		}
	}
	checkDockerfile(t)

	servers := startClusterFrom(t, deployNATSConf, natsNames, func(name string) map[string]string { return cf.Services[name].Environment })

	// The docs directory compose mounts, with one page in it.
	docs := t.TempDir()
	if err := os.WriteFile(filepath.Join(docs, "deploy.md"), []byte("# Deploying\n\nThe compose file starts a replicated cluster of workers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Container paths to host paths: every mounted file or directory.
	host := map[string]string{}
	for _, name := range workerNames {
		for target, src := range cf.Services[name].mounts() {
			switch {
			case strings.HasPrefix(src, "${KNOWHUB_DOCS"):
				host[target] = docs
			case strings.HasPrefix(src, "./"):
				host[target] = filepath.Join(repoRoot, src)
			default:
				t.Fatalf("%s mounts %q, which the test cannot map", name, src)
			}
		}
	}
	// knowhub.json names container paths too (the repositories).
	for target, src := range host {
		if strings.HasSuffix(target, ".json") {
			host[target] = rewriteConfig(t, src, host)
		}
	}

	// The environment is the process's, so all workers must agree on it.
	env := map[string]string{}
	for _, name := range workerNames {
		for k, v := range cf.Services[name].Environment {
			for i, n := range natsNames {
				v = strings.ReplaceAll(v, "nats://"+n+":4222", servers[i].ClientURL())
			}
			if prev, ok := env[k]; ok && prev != v {
				t.Fatalf("services disagree on %s", k)
			}
			env[k] = v
		}
	}
	if !strings.HasPrefix(env["KNOWHUB_NATS_URL"], "nats://127.0.0.1:") || strings.Contains(env["KNOWHUB_NATS_URL"], "nats-") {
		t.Fatalf("KNOWHUB_NATS_URL %q does not name the cluster's servers", env["KNOWHUB_NATS_URL"])
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	// Query replicas share this process, so each takes a free port.
	t.Setenv("KNOWHUB_HTTP", "127.0.0.1:0")

	ctx, cancel := context.WithCancel(context.Background())
	var logs natstest.LogBuffer
	exited := make(chan string, 16)
	var wg sync.WaitGroup
	for _, name := range workerNames {
		s := cf.Services[name]
		args := []string{"worker", s.Command[0]}
		for i, a := range s.Command[1:] {
			if p, ok := host[a]; ok {
				a = p
			}
			if i > 0 && s.Command[i] == "--metrics" {
				a = "127.0.0.1:0" // replicas share this process
			}
			args = append(args, a)
		}
		for r := range max(1, s.Deploy.Replicas) {
			wg.Go(func() {
				if code := cli.Main(ctx, args, &logs, &logs); code != 0 || ctx.Err() == nil {
					exited <- fmt.Sprintf("%s replica %d exited with code %d", name, r, code)
				}
			})
		}
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	found := func() bool {
		select {
		case msg := <-exited:
			t.Fatalf("%s:\n%s", msg, logs.String())
		default:
		}
		data, _ := json.Marshal(contract.SearchRequest{Query: "replicated cluster of workers"})
		msg, err := nc.Request(contract.SubjectSearchDocs, data, 5*time.Second)
		if err != nil {
			return false
		}
		var resp contract.SearchResponse
		return json.Unmarshal(msg.Data, &resp) == nil && len(resp.Hits) == 1 && resp.Hits[0].Path == "deploy.md"
	}
	natstest.WaitFor(t, 60*time.Second, "the mounted page searchable through the deployment", found)
	natstest.WaitFor(t, 30*time.Second, "every shard to answer", func() bool {
		msg, err := nc.Request(contract.SubjectStats, []byte("{}"), 5*time.Second)
		var st contract.StatsResponse
		return err == nil && json.Unmarshal(msg.Data, &st) == nil && st.Shards == shardCount && !st.Partial &&
			st.Collections[contract.CollectionDocs].Chunks == 1
	})

	// Every replica logs its address once it runs; the search above needs
	// only one of each stage.
	replicas := 0
	for _, name := range workerNames {
		replicas += max(1, cf.Services[name].Deploy.Replicas)
	}
	natstest.WaitFor(t, 30*time.Second, "every replica to start", func() bool {
		return strings.Count(logs.String(), `msg="worker started"`) >= replicas
	})
	checkHealth(t, cf, workerNames, logs.String())

	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []string{contract.StreamFiles, contract.StreamChunks} {
		info, err := js.StreamInfo(stream)
		if err != nil || info.Config.Replicas != 3 {
			t.Errorf("%s: %v, replicas %+v", stream, err, info)
		}
	}
}

// checkHealth checks that every service has a health check and that every
// worker serves /metrics and answers its check's command: `knowhub health`
// on the port the worker listens on, run here against the address each
// replica logged when it started.
func checkHealth(t *testing.T, cf composeFile, workerNames []string, logs string) {
	t.Helper()
	for name, s := range cf.Services {
		if len(s.Healthcheck.Test) < 2 || s.Healthcheck.Test[0] != "CMD" {
			t.Errorf("%s has no health check", name)
		}
	}
	started := regexp.MustCompile(`msg="worker started" stage=(\w+) .*http=(\S+)`)
	addrs := map[string][]string{}
	for _, m := range started.FindAllStringSubmatch(logs, -1) {
		addrs[m[1]] = append(addrs[m[1]], m[2])
	}
	// Several services may run one stage (the shards' query replicas).
	perStage := map[string]int{}
	for _, name := range workerNames {
		perStage[cf.Services[name].Command[0]] += max(1, cf.Services[name].Deploy.Replicas)
	}
	for _, name := range workerNames {
		s := cf.Services[name]
		stage, test := s.Command[0], s.Healthcheck.Test
		if len(test) != 4 || test[1] != "knowhub" || test[2] != "health" {
			t.Errorf("%s: health check %q, want knowhub health URL", name, test)
			continue
		}
		port := "7700" // the query's API, from deploy/knowhub.json
		if i := slices.Index(s.Command, "--metrics"); i >= 0 {
			_, port, _ = strings.Cut(s.Command[i+1], ":")
		} else if stage != "query" {
			t.Errorf("%s serves no metrics: no --metrics on its command line", name)
		}
		if want := "http://127.0.0.1:" + port + "/readyz"; test[3] != want {
			t.Errorf("%s: health check probes %s, want %s", name, test[3], want)
		}
		if len(addrs[stage]) != perStage[stage] {
			t.Errorf("%s: %d replicas of the %s logged their address (%v), want %d", name, len(addrs[stage]), stage, addrs[stage], perStage[stage])
		}
		for _, addr := range addrs[stage] {
			var out, errOut bytes.Buffer
			if code := cli.Main(t.Context(), []string{"health", "http://" + addr + "/readyz"}, &out, &errOut); code != 0 {
				t.Errorf("%s at %s: knowhub health exit %d: %s", name, addr, code, errOut.String())
			}
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				t.Errorf("%s at %s: %v", name, addr, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("knowhub_build_info")) {
				t.Errorf("%s at %s: /metrics answered %s without knowhub_build_info", name, addr, resp.Status)
			}
		}
	}
}

// rewriteConfig copies the knowhub.json at path with each repository
// path mapped from its container path to host, and returns the copy.
func rewriteConfig(t *testing.T, path string, host map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	repos, _ := cfg["repositories"].([]any)
	if len(repos) == 0 {
		t.Fatalf("%s configures no repository", path)
	}
	for _, r := range repos {
		repo := r.(map[string]any)
		p, ok := host[repo["path"].(string)]
		if !ok {
			t.Fatalf("repository path %v is not mounted", repo["path"])
		}
		repo["path"] = p
	}
	out, _ := json.Marshal(cfg)
	copyPath := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(copyPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return copyPath
}

// checkDockerfile checks that the image builds with the Go release go.mod
// asks for.
func checkDockerfile(t *testing.T) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	df, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	base := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+)`).FindSubmatch(df)
	if goVer == nil || base == nil || !bytes.Equal(goVer[1], base[1]) {
		t.Errorf("deploy/Dockerfile builds with golang:%s, go.mod asks for go %s", base, goVer)
	}
}
