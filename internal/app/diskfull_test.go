//go:build linux

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/knowhub/knowhub/internal/api"
	"github.com/knowhub/knowhub/internal/broker"
	"github.com/knowhub/knowhub/internal/config"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/natstest"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory, unmounted
// when the test ends, and skips the test where mounting is not permitted.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("the full-disk test mounts a small tmpfs it can grow, which needs root on Linux: mount: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// fillDisk writes a file on dir's filesystem, of size bytes, that leaves
// less free space than the reserve JetStream keeps out of its own reach.
func fillDisk(t *testing.T, dir string, size int64) {
	t.Helper()
	fill := freeBytes(t, dir) - broker.DiskReserve(size)/4
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, fill), 0o644); err != nil {
		t.Fatal(err)
	}
}

func growTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_REMOUNT, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("grow the tmpfs: %v", err)
	}
}

// upRun is `up` running in the test, with its output and its log.
type upRun struct {
	t         *testing.T
	logs, out natstest.LogBuffer
	done      chan error
	stop      func()
}

// startUp runs `up` until the test ends.
func startUp(t *testing.T, cfg *config.Config) *upRun {
	t.Helper()
	u := &upRun{t: t, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(&u.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { u.done <- Up(ctx, cfg, log, &u.out, "knowhub") }()
	var once sync.Once
	u.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-u.done:
				if err != nil {
					t.Errorf("up stopped with %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("up did not stop within 15s of cancellation")
			}
		})
	}
	t.Cleanup(u.stop)
	natstest.WaitFor(t, 30*time.Second, "up to listen", func() bool { return strings.Contains(u.out.String(), "HTTP   http://") })
	return u
}

// base is the HTTP API's URL.
func (u *upRun) base() string {
	return regexp.MustCompile(`HTTP   (http://\S+)`).FindStringSubmatch(u.out.String())[1]
}

func (u *upRun) readyz() (int, api.Readiness) {
	u.t.Helper()
	resp, err := http.Get(u.base() + "/readyz")
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	var rd api.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
		u.t.Fatal(err)
	}
	return resp.StatusCode, rd
}

// TestFullDiskIsLoudAndRecovers runs `up` with its data directory on a
// small filesystem, fills that filesystem, edits the repository, then
// grows the filesystem: the full disk is an error naming it, /readyz and
// stats say why, and once there is room every file is indexed without a
// restart and without a dead letter.
func TestFullDiskIsLoudAndRecovers(t *testing.T) {
	const size = 64 << 20
	data := mountTmpfs(t, size)
	docs := t.TempDir()
	for i := range 3 {
		writeFile(t, filepath.Join(docs, fmt.Sprintf("base%d.md", i)), fmt.Sprintf("# Base %d\n\nThe gateway restarts cleanly.\n", i))
	}
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.DataDir = data
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = "127.0.0.1:0"
	u := startUp(t, cfg)
	natstest.WaitFor(t, 30*time.Second, "up to report the index", func() bool { return strings.Contains(u.out.String(), "indexed 3 files") })
	base, logs, readyz := u.base(), &u.logs, u.readyz
	if code, rd := readyz(); code != http.StatusOK || rd.State != api.StateComplete {
		t.Fatalf("/readyz before the disk fills: %d %+v", code, rd)
	}

	// Another writer fills the disk, leaving less than the reserve
	// JetStream keeps out of its own reach.
	fillDisk(t, data, size)
	jsDir := filepath.Join(data, "jetstream")
	natstest.WaitFor(t, 20*time.Second, "/readyz to say the disk is full", func() bool {
		code, rd := readyz()
		return code == http.StatusServiceUnavailable && rd.State == api.StateStalled && strings.Contains(rd.Error, "disk full at "+jsDir)
	})
	if !regexp.MustCompile(`level=ERROR msg="disk full at ` + regexp.QuoteMeta(jsDir)).MatchString(logs.String()) {
		t.Errorf("no error line names the full disk:\n%s", logs.String())
	}
	var st contract.StatsResponse
	getJSON(t, base+"/api/stats", &st)
	if !strings.Contains(st.Problem, "disk full at "+jsDir) {
		t.Errorf("stats do not say the disk is full: problem %q", st.Problem)
	}

	// Edits made while the disk is full wait: none is lost.
	const edits = 20
	for i := range edits {
		writeFile(t, filepath.Join(docs, fmt.Sprintf("new%d.md", i)), fmt.Sprintf("# New %d\n\nThe quokka handbook, chapter %d.\n", i, i))
	}
	writeFile(t, filepath.Join(docs, "base0.md"), "# Base 0\n\nThe quokka gateway restarts cleanly.\n")
	natstest.WaitFor(t, 20*time.Second, "the watcher to meet the full disk", func() bool {
		return strings.Contains(logs.String(), "publishing changes failed; retrying")
	})

	// The disk grows: work resumes by itself.
	growTmpfs(t, data, 4*size)
	var found contract.SearchResponse
	natstest.WaitFor(t, 60*time.Second, "every edit indexed after the disk grew", func() bool {
		getJSON(t, base+"/api/docs/search?q=quokka&top_k=100&group=pages", &found)
		return found.Total == edits+1
	})
	if code, rd := readyz(); code != http.StatusOK || rd.State != api.StateComplete {
		t.Errorf("/readyz once the disk grew: %d %+v", code, rd)
	}
	st = contract.StatsResponse{}
	getJSON(t, base+"/api/stats", &st)
	if st.Problem != "" {
		t.Errorf("stats still name a problem: %q", st.Problem)
	}
	var status api.StatusResponse
	getJSON(t, base+"/api/status", &status)
	if status.Pipeline == nil || status.Pipeline.DeadLetters != 0 {
		t.Errorf("dead letters after the full disk: %+v", status.Pipeline)
	}
	if !strings.Contains(logs.String(), "disk space is back") {
		t.Errorf("no line says the disk space is back")
	}
}

// TestUpOnAFullDiskWaitsForRoom restarts `up` on a data directory whose
// disk filled while it was stopped: it stays up and says why it is
// stalled, and indexes the new file once the disk grows.
func TestUpOnAFullDiskWaitsForRoom(t *testing.T) {
	const size = 64 << 20
	data := mountTmpfs(t, size)
	docs := t.TempDir()
	writeFile(t, filepath.Join(docs, "base.md"), "# Base\n\nThe gateway restarts cleanly.\n")
	cfg := testConfig(config.Repository{Name: "docs", Path: docs})
	cfg.DataDir = data
	cfg.NATS.Listen = "127.0.0.1:-1"
	cfg.HTTP.Listen = "127.0.0.1:0"
	first := startUp(t, cfg)
	natstest.WaitFor(t, 30*time.Second, "up to report the index", func() bool { return strings.Contains(first.out.String(), "indexed 1 file,") })
	first.stop()

	fillDisk(t, data, size)
	writeFile(t, filepath.Join(docs, "new.md"), "# New\n\nThe quokka handbook.\n")
	u := startUp(t, cfg)
	natstest.WaitFor(t, 20*time.Second, "/readyz to say the disk is full", func() bool {
		code, rd := u.readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(rd.Error, "disk full at ")
	})
	select {
	case err := <-u.done:
		t.Fatalf("up on a full disk exited: %v", err)
	default:
	}
	growTmpfs(t, data, 4*size)
	var found contract.SearchResponse
	natstest.WaitFor(t, 60*time.Second, "the new file indexed after the disk grew", func() bool {
		getJSON(t, u.base()+"/api/docs/search?q=quokka", &found)
		return found.Total == 1
	})
	natstest.WaitFor(t, 20*time.Second, "/readyz complete", func() bool {
		code, rd := u.readyz()
		return code == http.StatusOK && rd.State == api.StateComplete
	})
}
