package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/knowhub/knowhub/internal/contract"
)

// serveRescan answers contract.SubjectRescan for the node's watcher until
// ctx ends: it reads every repository again, publishing what changed.
func (n *Node) serveRescan(ctx context.Context) error {
	sub, err := n.nc.QueueSubscribe(contract.SubjectRescan, contract.RescanQueueGroup, func(m *nats.Msg) {
		// A scan can take a while: never on the connection's dispatcher.
		go func() {
			reply := contract.RescanReply{Repos: n.Watcher.Repos()}
			res, err := n.Watcher.Scan(ctx, true)
			if err != nil {
				reply.Error = err.Error()
				n.log.Warn("requested rescan failed", "err", err)
			} else {
				reply.Published, reply.Deleted, reply.Unchanged, reply.Skipped = res.Published, res.Deleted, res.Unchanged, res.Skipped
				reply.OtherLanguage = res.OtherLanguage
				n.log.Info("requested rescan done", "published", res.Published, "deleted", res.Deleted, "unchanged", res.Unchanged, "skipped", res.Skipped,
					"other_language", res.OtherLanguage)
			}
			data, _ := json.Marshal(reply)
			_ = m.Respond(data)
		}()
	})
	if err != nil {
		return fmt.Errorf("serve %s: %w", contract.SubjectRescan, err)
	}
	<-ctx.Done()
	_ = sub.Unsubscribe()
	return nil
}

// RequestRescan asks the running watcher to read its repositories again
// and waits, until ctx ends, for what it did.
func RequestRescan(ctx context.Context, nc *nats.Conn) (contract.RescanReply, error) {
	var reply contract.RescanReply
	m, err := nc.RequestWithContext(ctx, contract.SubjectRescan, nil)
	if errors.Is(err, nats.ErrNoResponders) {
		return reply, fmt.Errorf("no watcher is running at %s to rescan its repositories: start `knowhub up`, or pass --config naming them", nc.ConnectedUrlRedacted())
	}
	if err != nil {
		return reply, fmt.Errorf("rescan: %w", err)
	}
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		return reply, fmt.Errorf("rescan: the watcher's reply: %w", err)
	}
	if reply.Error != "" {
		return reply, fmt.Errorf("rescan: %s", reply.Error)
	}
	return reply, nil
}
