package broker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// nats-server's own storage limit, when none is set, is three quarters of
// the space free when it starts, and it never moves: a disk that fills up
// and is then freed (or grown) keeps every write refused until a restart.
// So the embedded server is given no server-wide limit of its own
// (unlimitedStore), and a diskGuard keeps the account's storage limit in
// step with the disk instead, refusing writes ("resource limits exceeded
// for account") before the disk itself is full: a write that meets a full
// disk inside JetStream leaves its stream refusing every write until a
// restart, while a refused publish is retried by its producer once the
// guard makes room again.

// unlimitedStore is the server-wide JetStream storage limit of the
// embedded server: the account limit that diskGuard sets is the one that
// binds.
const unlimitedStore = 1 << 60

// DiskReserve is the free space a data directory on a filesystem of size
// bytes keeps out of JetStream's reach: a twentieth of the filesystem,
// between 4 MiB and 1 GiB, for JetStream's own files (indexes, consumer
// state) and the other writers on the disk.
func DiskReserve(size int64) int64 {
	return min(max(size/20, 4<<20), 1<<30)
}

// diskSpace is what statfs tells of a filesystem: its size and the bytes
// an unprivileged writer may still use.
type diskSpace struct {
	size, free int64
}

// diskCheckEvery is how often the guard reads the free space.
const diskCheckEvery = time.Second

// diskGuard sets the storage limit of the embedded server's account from
// the free space of the store directory's filesystem, every
// diskCheckEvery.
type diskGuard struct {
	srv *server.Server
	dir string
	log *slog.Logger

	mu      sync.Mutex
	problem error
	limit   int64
}

// run checks every diskCheckEvery until ctx ends.
func (g *diskGuard) run(ctx context.Context) {
	tick := time.NewTicker(diskCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			g.check()
		}
	}
}

// check reads the disk and sets the account's limit: what JetStream holds
// now plus half the room left above the reserve, so that each check can
// let JetStream's usage approach the reserve but never cross it. With
// less than an eighth of the reserve as room, the disk counts as full and
// writes are refused until space is freed.
func (g *diskGuard) check() {
	ds, err := statDisk(g.dir)
	if err != nil {
		g.log.Warn("cannot read the free space of the data directory", "dir", g.dir, "err", err)
		return
	}
	acc := g.srv.GlobalAccount()
	used := int64(acc.JetStreamUsage().Store)
	reserve := DiskReserve(ds.size)
	room := ds.free - reserve
	full := room < reserve/8
	limit := used
	if !full {
		limit += room / 2
	}
	var problem error
	if full {
		problem = fmt.Errorf("disk full at %s: %s free of %s, under the %s kept in reserve; writes are refused until space is freed",
			g.dir, mib(ds.free), mib(ds.size), mib(reserve))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if limit != g.limit {
		err := acc.UpdateJetStreamLimits(map[string]server.JetStreamAccountLimits{"": {
			MaxMemory: -1, MaxStore: limit, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1,
			MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1,
		}})
		if err != nil {
			g.log.Warn("cannot set the JetStream storage limit", "limit", limit, "err", err)
		} else {
			g.limit = limit
		}
	}
	switch {
	case problem != nil && g.problem == nil:
		g.log.Error(problem.Error(), "dir", g.dir, "free_bytes", ds.free, "reserve_bytes", reserve)
	case problem == nil && g.problem != nil:
		g.log.Info("disk space is back: writes resume", "dir", g.dir, "free_bytes", ds.free)
	}
	g.problem = problem
}

// err is the disk's problem as of the last check, or nil.
func (g *diskGuard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.problem
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
