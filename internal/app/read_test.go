package app

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// A section found by search reads back by its id over HTTP and NATS, with
// its page in order; once its file is removed it reads back as not found.
func TestReadDocsOverHTTPAndNATS(t *testing.T) {
	srv := natstest.Start(t, "")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gateway.md"), "# Gateway\n\nRun it on a host.\n\n## Install\n\nUse the install script.\n\n## Configure\n\nSet the port in gateway.json.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: dir})
	cfg.HTTP.Listen = "127.0.0.1:0"
	node := runNode(t, srv, cfg)
	a := &kbAPI{t: t, base: "http://" + node.HTTPAddr(), srv: srv}
	var found contract.SearchResponse
	natstest.WaitFor(t, 10*time.Second, "the page to be searchable", func() bool {
		return a.do("GET", "/api/docs/search?q=port+gateway.json&top_k=1", "", nil, &found) == 200 && len(found.Hits) == 1
	})
	hit := found.Hits[0]
	var read contract.DocsReadResponse
	if code := a.do("GET", "/api/docs/read?context=page&id="+url.QueryEscape(hit.ChunkID), "", nil, &read); code != 200 {
		t.Fatalf("read: %d", code)
	}
	var headings []string
	for _, s := range read.Sections {
		headings = append(headings, strings.Join(s.HeadingPath, " > "))
	}
	if strings.Join(headings, "|") != "Gateway|Gateway > Install|Gateway > Configure" || read.Target != 2 || !strings.Contains(read.Sections[2].Text, "gateway.json") {
		t.Errorf("page of the hit: %v, target %d", headings, read.Target)
	}
	msg, err := srv.NC.Request(contract.SubjectReadDocs, []byte(`{"id":"`+hit.ChunkID+`"}`), 5*time.Second)
	var viaNATS contract.DocsReadResponse
	if err != nil || json.Unmarshal(msg.Data, &viaNATS) != nil || len(viaNATS.Sections) != 1 || viaNATS.Sections[0].ID != hit.ChunkID {
		t.Fatalf("read over NATS: %v %s", err, msg.Data)
	}
	if err := os.Remove(filepath.Join(dir, "gateway.md")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, "a removed file to read back as not found", func() bool {
		return a.do("GET", "/api/docs/read?id="+url.QueryEscape(hit.ChunkID), "", nil, nil) == 404
	})
	if msg, err := srv.NC.Request(contract.SubjectReadDocs, []byte(`{"repo":"docs","path":"gateway.md"}`), 5*time.Second); err != nil || msg.Header.Get("Nats-Service-Error-Code") != "404" {
		t.Errorf("read of a removed page over NATS: %v %v", err, msg.Header)
	}
}
