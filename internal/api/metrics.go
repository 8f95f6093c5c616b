package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/knowhub/knowhub/internal/version"
)

// Metrics is a process's Prometheus registry: Go runtime, process and
// build information, the pipeline's position read from JetStream at each
// scrape, and, on a process serving the API, request counts and latencies
// per endpoint and the size of the index.
type Metrics struct {
	reg         *prometheus.Registry
	httpReqs    *prometheus.CounterVec
	httpLatency *prometheus.HistogramVec
	natsReqs    *prometheus.CounterVec
	natsLatency *prometheus.HistogramVec
}

// NewMetrics returns a registry with the runtime and build collectors and,
// when js is set, the pipeline collector.
func NewMetrics(js jetstream.JetStream) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	version, revision := buildVersion()
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "knowhub_build_info",
		Help:        "Always 1; the labels name the knowhub version and VCS revision.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision},
	}, func() float64 { return 1 }))
	if js != nil {
		m.reg.MustRegister(&pipelineCollector{js: js})
	}
	return m
}

func buildVersion() (v, revision string) {
	in := version.Get()
	if in.Revision == "" {
		in.Revision = "unknown"
	}
	return in.Version, in.Revision
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry, for collectors of the process's own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// latencyBuckets span a cached search (tens of µs) to a bounded min_seq
// wait (seconds).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// instrumentAPI adds the request and index metrics of the service s.
func (m *Metrics) instrumentAPI(s *Service) {
	m.httpReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "knowhub_http_requests_total",
		Help: "HTTP requests by route pattern and status code.",
	}, []string{"endpoint", "code"})
	m.httpLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "knowhub_http_request_duration_seconds",
		Help:    "HTTP request latency by route pattern.",
		Buckets: latencyBuckets,
	}, []string{"endpoint"})
	m.natsReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "knowhub_nats_requests_total",
		Help: "NATS micro requests by endpoint and code: 200, or the error code the reply carried (400, 404, 500, 503 ...).",
	}, []string{"endpoint", "code"})
	m.natsLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "knowhub_nats_request_duration_seconds",
		Help:    "NATS micro request latency by endpoint.",
		Buckets: latencyBuckets,
	}, []string{"endpoint"})
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "knowhub_nats_reads_running",
		Help: "NATS read requests (searches, reads, listings, stats) being answered now; at most query.concurrency.",
	}, func() float64 { return float64(s.Running()) })
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "knowhub_nats_reads_queued",
		Help: "NATS read requests waiting for a worker; beyond query.queue they are refused with a 503.",
	}, func() float64 { return float64(s.Queued()) })
	m.reg.MustRegister(m.httpReqs, m.httpLatency, m.natsReqs, m.natsLatency, running, queued, &indexCollector{s: s})
}

type patternKey struct{}

// instrument counts and times each request by the pattern of the route
// that served it ("unmatched" when none did, "unauthenticated" when the
// request was refused before routing).
func (m *Metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		pattern := new(string)
		*pattern = "unauthenticated"
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), patternKey{}, pattern)))
		m.httpReqs.WithLabelValues(*pattern, strconv.Itoa(sw.code)).Inc()
		m.httpLatency.WithLabelValues(*pattern).Observe(time.Since(start).Seconds())
	})
}

// recordPattern, inside the router, reports the matched pattern to
// instrument.
func recordPattern(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		if p, ok := r.Context().Value(patternKey{}).(*string); ok {
			*p = r.Pattern
			if *p == "" {
				*p = "unmatched"
			}
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming replies (MCP over HTTP) flush through.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// codeRecorder notes the code of the error a micro handler replies with.
type codeRecorder struct {
	micro.Request
	code string
}

func (r *codeRecorder) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	r.code = code
	return r.Request.Error(code, description, data, opts...)
}

// microHandler counts and times one NATS micro endpoint.
func (m *Metrics) microHandler(name string, h micro.HandlerFunc) micro.HandlerFunc {
	return func(req micro.Request) {
		start := time.Now()
		rec := &codeRecorder{Request: req, code: "200"}
		h(rec)
		m.natsReqs.WithLabelValues(name, rec.code).Inc()
		m.natsLatency.WithLabelValues(name).Observe(time.Since(start).Seconds())
	}
}

// microRejected counts a NATS request refused as overloaded.
func (m *Metrics) microRejected(name string) {
	m.natsReqs.WithLabelValues(name, "503").Inc()
}

var (
	descIndexReady    = prometheus.NewDesc("knowhub_index_ready", "1 once the query replica has loaded the index.", nil, nil)
	descIndexSources  = prometheus.NewDesc("knowhub_index_sources", "Sources (files, tools, entries) in the index by collection.", []string{"collection"}, nil)
	descIndexSections = prometheus.NewDesc("knowhub_index_sections", "Sections (chunks) in the index by collection.", []string{"collection"}, nil)
	descIndexTerms    = prometheus.NewDesc("knowhub_index_terms", "Distinct terms in the index by collection.", []string{"collection"}, nil)
	descIndexApplied  = prometheus.NewDesc("knowhub_index_applied_revision", "Last index bucket revision the replica applied.", nil, nil)
	descRepoFiles     = prometheus.NewDesc("knowhub_repo_files", "Indexed files by repository.", []string{"repo"}, nil)
	descRepoSections  = prometheus.NewDesc("knowhub_repo_sections", "Indexed sections by repository.", []string{"repo"}, nil)
)

type indexCollector struct{ s *Service }

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIndexReady, descIndexSources, descIndexSections, descIndexTerms, descIndexApplied, descRepoFiles, descRepoSections} {
		ch <- d
	}
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.stats()
	ready := 0.0
	if st.Ready {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descIndexReady, prometheus.GaugeValue, ready)
	ch <- prometheus.MustNewConstMetric(descIndexApplied, prometheus.GaugeValue, float64(st.IndexRevision))
	for name, col := range st.Collections {
		ch <- prometheus.MustNewConstMetric(descIndexSources, prometheus.GaugeValue, float64(col.Sources), name)
		ch <- prometheus.MustNewConstMetric(descIndexSections, prometheus.GaugeValue, float64(col.Chunks), name)
		ch <- prometheus.MustNewConstMetric(descIndexTerms, prometheus.GaugeValue, float64(col.Terms), name)
	}
	for _, r := range st.Repos {
		ch <- prometheus.MustNewConstMetric(descRepoFiles, prometheus.GaugeValue, float64(r.Files), r.Repo)
		ch <- prometheus.MustNewConstMetric(descRepoSections, prometheus.GaugeValue, float64(r.Chunks), r.Repo)
	}
}

var (
	descPipelineUp    = prometheus.NewDesc("knowhub_pipeline_up", "1 when the last scrape could read the pipeline's state from JetStream.", nil, nil)
	descStreamLast    = prometheus.NewDesc("knowhub_stage_stream_last_sequence", "Last sequence of the stream a stage reads.", []string{"stage", "stream"}, nil)
	descAckFloor      = prometheus.NewDesc("knowhub_stage_ack_floor_sequence", "Stream sequence below which a stage has acknowledged every message.", []string{"stage"}, nil)
	descPending       = prometheus.NewDesc("knowhub_stage_pending_messages", "Messages a stage has not finished, undelivered or unacknowledged: its consumer lag.", []string{"stage"}, nil)
	descAckPending    = prometheus.NewDesc("knowhub_stage_ack_pending_messages", "Messages delivered to a stage and not yet acknowledged.", []string{"stage"}, nil)
	descRedelivered   = prometheus.NewDesc("knowhub_stage_redelivered_messages", "Messages delivered to a stage more than once and not yet acknowledged.", []string{"stage"}, nil)
	descStageDead     = prometheus.NewDesc("knowhub_stage_dead_letters", "Messages a stage moved to the dead-letter stream.", []string{"stage"}, nil)
	descDeadLetters   = prometheus.NewDesc("knowhub_dead_letters", "Messages in the dead-letter stream.", nil, nil)
	descIndexRevision = prometheus.NewDesc("knowhub_index_revision", "Last revision of the index bucket.", nil, nil)
)

// pipelineCollector reads the pipeline's state at each scrape.
type pipelineCollector struct{ js jetstream.JetStream }

func (c *pipelineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPipelineUp, descStreamLast, descAckFloor, descPending, descAckPending, descRedelivered, descStageDead, descDeadLetters, descIndexRevision} {
		ch <- d
	}
}

func (c *pipelineCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	p, err := ReadPipeline(ctx, c.js)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descPipelineUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descPipelineUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(descDeadLetters, prometheus.GaugeValue, float64(p.DeadLetters))
	ch <- prometheus.MustNewConstMetric(descIndexRevision, prometheus.GaugeValue, float64(p.IndexRevision))
	for _, st := range p.Stages {
		ch <- prometheus.MustNewConstMetric(descStreamLast, prometheus.GaugeValue, float64(st.StreamLastSeq), st.Stage, st.Stream)
		ch <- prometheus.MustNewConstMetric(descAckFloor, prometheus.GaugeValue, float64(st.AckFloor), st.Stage)
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(st.Pending+uint64(st.AckPending)), st.Stage)
		ch <- prometheus.MustNewConstMetric(descAckPending, prometheus.GaugeValue, float64(st.AckPending), st.Stage)
		ch <- prometheus.MustNewConstMetric(descRedelivered, prometheus.GaugeValue, float64(st.Redelivered), st.Stage)
		ch <- prometheus.MustNewConstMetric(descStageDead, prometheus.GaugeValue, float64(st.DeadLetters), st.Stage)
	}
}

// statusOf answers GET /api/status.
func (s *Service) httpStatus(w http.ResponseWriter, r *http.Request) {
	out := StatusResponse{StatsResponse: s.stats()}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	p, err := ReadPipeline(ctx, s.js)
	if err != nil {
		out.PipelineError = err.Error()
	} else {
		out.Pipeline = p
	}
	writeJSON(w, http.StatusOK, out)
}
