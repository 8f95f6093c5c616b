package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
	"github.com/knowhub/knowhub/internal/version"
)

// scrape reads a /metrics page.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the value of the family's metric with these labels, and
// whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func TestMetricsAreScrapedFromARealNode(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "# Alpha\n\n## Setup\n\nInstall the alpha gateway.\n\n## Usage\n\nRun the alpha gateway.\n")
	writeFile(t, filepath.Join(dir, "b.md"), "# Beta\n\nThe beta page.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	cfg.HTTP.Listen = "127.0.0.1:0"
	node := runNode(t, srv, cfg)
	base := "http://" + node.HTTPAddr()

	for range 3 {
		resp, err := http.Get(base + "/api/docs/search?q=alpha+gateway")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(base + "/api/docs/search?q=x&top_k=-1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	searchDocs(t, srv.NC, contract.SearchRequest{Query: "beta"})
	if msg, err := srv.NC.Request(contract.SubjectSearchDocs, []byte(`{"query":"a\u0000b"}`), 5*time.Second); err != nil || msg.Header.Get("Nats-Service-Error-Code") != "400" {
		t.Fatalf("a bad NATS search: %v %v", err, msg)
	}
	// A poisoned message on the chunker's stream becomes a dead letter.
	if _, err := srv.JS.PublishMsg(context.Background(), &nats.Msg{Subject: contract.SubjectFiles + ".docs.0000000000000001", Data: []byte("{not json")}); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 15*time.Second, "a dead letter", func() bool {
		p, err := ReadProgress(context.Background(), srv.JS)
		return err == nil && p.DeadLetters == 1 && p.ChunkerPending == 0
	})

	fams := scrape(t, base+"/metrics")
	stats := node.Query.Engine().Stats(true)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"knowhub_http_requests_total", []string{"endpoint", "GET /api/docs/search", "code", "200"}, 3},
		{"knowhub_http_requests_total", []string{"endpoint", "GET /api/docs/search", "code", "400"}, 1},
		{"knowhub_http_request_duration_seconds", []string{"endpoint", "GET /api/docs/search"}, 4},
		{"knowhub_nats_requests_total", []string{"endpoint", "search-docs", "code", "200"}, 1},
		{"knowhub_nats_requests_total", []string{"endpoint", "search-docs", "code", "400"}, 1},
		{"knowhub_nats_request_duration_seconds", []string{"endpoint", "search-docs"}, 2},
		{"knowhub_nats_reads_running", nil, 0},
		{"knowhub_nats_reads_queued", nil, 0},
		{"knowhub_index_sections", []string{"collection", "docs"}, float64(stats.Collections["docs"].Chunks)},
		{"knowhub_index_sources", []string{"collection", "docs"}, 2},
		{"knowhub_index_terms", []string{"collection", "docs"}, float64(stats.Collections["docs"].Terms)},
		{"knowhub_repo_files", []string{"repo", "docs"}, 2},
		{"knowhub_index_ready", nil, 1},
		{"knowhub_pipeline_up", nil, 1},
		{"knowhub_dead_letters", nil, 1},
		{"knowhub_stage_dead_letters", []string{"stage", "chunker"}, 1},
		{"knowhub_stage_dead_letters", []string{"stage", "indexer"}, 0},
		{"knowhub_stage_pending_messages", []string{"stage", "chunker"}, 0},
		{"knowhub_stage_pending_messages", []string{"stage", "indexer"}, 0},
		{"knowhub_build_info", []string{"version", version.Get().Version}, 1},
	} {
		got, ok := value(fams, c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if stats.Collections["docs"].Chunks < 3 || stats.Collections["docs"].Terms == 0 {
		t.Errorf("docs collection %+v: the sizes compared are not of the indexed pages", stats.Collections["docs"])
	}
	if v, ok := value(fams, "knowhub_stage_stream_last_sequence", "stage", "chunker"); !ok || v < 3 {
		t.Errorf("chunker's stream last sequence %v, want the two files and the poison", v)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "go_build_info"} {
		if fams[name] == nil {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	checkDashboard(t, fams)
	// Scraping counts as a request too, by its own route.
	fams = scrape(t, base+"/metrics")
	if v, _ := value(fams, "knowhub_http_requests_total", "endpoint", "GET /metrics", "code", "200"); v != 1 {
		t.Errorf("GET /metrics counted %v times before the second scrape, want 1", v)
	}
}

func TestMicroEndpointsCarryTheirSchemas(t *testing.T) {
	srv := natstest.Start(t, "")
	runNode(t, srv, testConfig(config.Repository{Name: "docs", Path: t.TempDir()}))
	msg, err := srv.NC.Request("$SRV.INFO."+contract.ServiceName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Version   string `json:"version"`
		Endpoints []struct {
			Name     string            `json:"name"`
			Subject  string            `json:"subject"`
			Metadata map[string]string `json:"metadata"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != version.Get().Version {
		t.Errorf("service version %q, want knowhub's %q", info.Version, version.Get().Version)
	}
	seen := map[string]bool{}
	for _, ep := range info.Endpoints {
		seen[ep.Name] = true
		for _, key := range []string{"request_schema", "response_schema"} {
			var schema struct {
				Type       any            `json:"type"`
				Properties map[string]any `json:"properties"`
			}
			if err := json.Unmarshal([]byte(ep.Metadata[key]), &schema); err != nil || schema.Type == nil {
				t.Errorf("%s %s: %q is not a JSON Schema (%v)", ep.Name, key, ep.Metadata[key], err)
			}
		}
		if ep.Name == "search-docs" {
			var req struct {
				Properties map[string]any `json:"properties"`
			}
			_ = json.Unmarshal([]byte(ep.Metadata["request_schema"]), &req)
			if req.Properties["query"] == nil || req.Properties["top_k"] == nil {
				t.Errorf("search-docs request schema lacks query and top_k: %s", ep.Metadata["request_schema"])
			}
			if !strings.Contains(ep.Metadata["response_schema"], `"heading_path"`) {
				t.Errorf("search-docs response schema lacks the hits' fields: %s", ep.Metadata["response_schema"])
			}
		}
	}
	for _, name := range []string{"search-docs", "stats", "search-tools", "search-kb", "kb-save", "kb-review", "extract"} {
		if !seen[name] {
			t.Errorf("endpoint %s missing from the service info (%v)", name, seen)
		}
	}
}

// checkDashboard fails when the Grafana dashboard in deploy/ queries a
// metric that a real node does not serve.
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("deploy/grafana-dashboard.json: %v", err)
	}
	name := regexp.MustCompile(`\b(?:knowhub|go|process)_[a-z_]+\b`)
	queried := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				queried++
				m = strings.TrimSuffix(m, "_bucket")
				if fams[m] == nil {
					t.Errorf("dashboard panel %q queries %s, which /metrics does not serve", p.Title, m)
				}
			}
		}
	}
	if queried < 20 {
		t.Errorf("the dashboard queries %d metrics; it should chart requests, lag, dead letters, index size and memory", queried)
	}
}
