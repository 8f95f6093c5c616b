package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/version"
)

// DefaultShardTimeout bounds how long a coordinating replica waits for a
// shard's part of a request.
const DefaultShardTimeout = 2 * time.Second

// sharded reports whether the replica is one shard of several.
func (s *Service) sharded() bool { return s.cfg.Shards > 1 }

// shardClient reaches one replica of every shard over NATS; the
// replica's own shard is answered in process.
type shardClient struct {
	s *Service
}

// Search implements engine.Shards.
func (c shardClient) Search(req contract.ShardSearchRequest) ([]*contract.ShardSearchReply, []int) {
	replies := make([]*contract.ShardSearchReply, c.s.cfg.Shards)
	c.s.eachShard(context.Background(), func(ctx context.Context, i int) error {
		var r *contract.ShardSearchReply
		var err error
		if i == c.s.cfg.Shard {
			r, err = c.s.engine.ShardSearch(req)
		} else {
			r, err = c.s.askShardParts(ctx, i, contract.ShardSearch, req)
		}
		if err != nil {
			return err
		}
		replies[i] = r
		return nil
	})
	var out []*contract.ShardSearchReply
	var missing []int
	for i, r := range replies {
		if r == nil {
			missing = append(missing, i)
			continue
		}
		out = append(out, r)
	}
	return out, missing
}

// Page implements engine.Shards.
func (c shardClient) Page(key string) (*contract.ShardSearchReply, error) {
	i := contract.ShardOf(key, c.s.cfg.Shards)
	if i == c.s.cfg.Shard {
		return c.s.engine.ShardPage(key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.s.shardTimeout())
	defer cancel()
	return c.s.askShardParts(ctx, i, contract.ShardPage, contract.ShardPageRequest{Key: key})
}

func (s *Service) shardTimeout() time.Duration {
	return cmp.Or(s.cfg.ShardTimeout, DefaultShardTimeout)
}

// eachShard calls fn for every shard at once, each within the shard
// timeout, and returns the shards whose call failed, logged.
func (s *Service) eachShard(ctx context.Context, fn func(ctx context.Context, i int) error) (failed []int) {
	ctx, cancel := context.WithTimeout(ctx, s.shardTimeout())
	defer cancel()
	errs := make([]error, s.cfg.Shards)
	var wg sync.WaitGroup
	for i := range s.cfg.Shards {
		wg.Go(func() { errs[i] = fn(ctx, i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			s.log.Warn("shard did not answer", "shard", i, "of", s.cfg.Shards, "err", err)
			failed = append(failed, i)
		}
	}
	return failed
}

// askShardParts sends req to one replica of shard i and decodes its
// reply, binary and perhaps in parts (shardEndpoint).
func (s *Service) askShardParts(ctx context.Context, i int, op string, req any) (*contract.ShardSearchReply, error) {
	subject := contract.ShardSubject(s.cfg.Shards, i, op)
	r, err := s.replies.request(ctx, subject, req)
	return r, s.shardError(i, subject, err)
}

// shardError says which shard an error of a request to it came from.
func (s *Service) shardError(i int, subject string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: no replica of shard %d answers %s", ErrUnavailable, i, subject)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%w: shard %d did not answer %s in %s", ErrUnavailable, i, subject, s.shardTimeout())
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrBadRequest), errors.Is(err, ErrUnavailable):
		return err
	}
	return fmt.Errorf("%w: request %s: %v", ErrUnavailable, subject, err)
}

// serviceError is the error a micro service error reply stands for.
func serviceError(msg *nats.Msg) error {
	code, _ := strconv.Atoi(msg.Header.Get(micro.ErrorCodeHeader))
	class := classOf(code)
	return fmt.Errorf("%w: %s", class, strings.TrimPrefix(msg.Header.Get(micro.ErrorHeader), class.Error()+": "))
}

// askShard sends req to one replica of shard i and decodes its JSON reply.
func (s *Service) askShard(ctx context.Context, i int, op string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	subject := contract.ShardSubject(s.cfg.Shards, i, op)
	msg, err := s.nc.RequestWithContext(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: no replica of shard %d answers %s", ErrUnavailable, i, subject)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%w: shard %d did not answer %s in %s", ErrUnavailable, i, subject, s.shardTimeout())
	case err != nil:
		return fmt.Errorf("%w: request %s: %v", ErrUnavailable, subject, err)
	}
	if msg.Header.Get(micro.ErrorHeader) != "" {
		return serviceError(msg)
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("decode reply of %s: %w", subject, err)
	}
	return nil
}

// serveShard registers the endpoints of the replica's own shard, on which
// coordinators ask for its part, as a micro service of its own whose
// queue group holds the shard's replicas. They have a lane of their own:
// a replica coordinating a request holds a worker of its reads lane while
// it waits for the shards, so shard requests queued behind coordinators
// on the same workers could wait for each other across replicas.
func (s *Service) serveShard(ctx context.Context) (stop func(), err error) {
	reads := newLane(s.nc, s.cfg.Concurrency, s.cfg.Queue)
	n, i := s.cfg.Shards, s.cfg.Shard
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:        contract.ShardServiceName,
		Version:     version.Get().Version,
		Description: fmt.Sprintf("knowhub docs shard %d of %d", i, n),
		QueueGroup:  contract.ShardQueueGroup(n, i),
		Metadata:    map[string]string{"shard": strconv.Itoa(i), "shards": strconv.Itoa(n)},
	})
	if err != nil {
		reads.stop()
		return nil, fmt.Errorf("add shard service: %w", err)
	}
	endpoints := []struct {
		op string
		h  micro.HandlerFunc
	}{
		{contract.ShardSearch, shardEndpoint(s.nc, s.engine.ShardSearch)},
		{contract.ShardPage, shardEndpoint(s.nc, func(r contract.ShardPageRequest) (*contract.ShardSearchReply, error) {
			return notFound(s.engine.ShardPage(r.Key))
		})},
		{contract.ShardRead, jsonEndpoint(ctx, func(_ context.Context, r contract.DocsReadRequest) (*contract.DocsReadResponse, error) {
			return notFound(s.engine.ReadDocs(r))
		})},
		{contract.ShardPages, jsonEndpoint(ctx, func(_ context.Context, r contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
			return notFound(s.engine.ShardPages(r))
		})},
		{contract.ShardRepos, jsonEndpoint(ctx, func(context.Context, struct{}) (*contract.DocsReposResponse, error) {
			return s.engine.ListRepos(), nil
		})},
		{contract.ShardStats, func(req micro.Request) { _ = req.RespondJSON(s.engine.Stats(s.IsReady())) }},
	}
	for _, ep := range endpoints {
		h := reads.handler(s.metrics.microHandler("shard-"+ep.op, ep.h), func() { s.metrics.microRejected("shard-" + ep.op) })
		if err := svc.AddEndpoint("shard-"+ep.op, h, micro.WithEndpointSubject(contract.ShardSubject(n, i, ep.op))); err != nil {
			_ = svc.Stop()
			reads.stop()
			return nil, fmt.Errorf("add shard endpoint %s: %w", ep.op, err)
		}
	}
	return func() { _ = svc.Stop(); reads.stop() }, nil
}

// notFound maps the engine's ErrNotFound to the API's.
func notFound[T any](v T, err error) (T, error) {
	if errors.Is(err, engine.ErrNotFound) {
		return v, fmt.Errorf("%w: %v", ErrNotFound, strings.TrimPrefix(err.Error(), engine.ErrNotFound.Error()+": "))
	}
	return v, err
}

// readSharded reads a page from the shard holding it; a read by section
// id alone asks every shard.
func (s *Service) readSharded(ctx context.Context, r contract.DocsReadRequest) (*contract.DocsReadResponse, error) {
	if r.Repo != "" && r.Path != "" {
		i := contract.ShardOf(contract.DocKey(r.Repo, r.Path), s.cfg.Shards)
		if i == s.cfg.Shard {
			return notFound(s.engine.ReadDocs(r))
		}
		ctx, cancel := context.WithTimeout(ctx, s.shardTimeout())
		defer cancel()
		var resp contract.DocsReadResponse
		return &resp, s.askShard(ctx, i, contract.ShardRead, r, &resp)
	}
	var (
		mu    sync.Mutex
		found *contract.DocsReadResponse
		other error
	)
	failed := s.eachShard(ctx, func(ctx context.Context, i int) error {
		var resp *contract.DocsReadResponse
		var err error
		if i == s.cfg.Shard {
			resp, err = notFound(s.engine.ReadDocs(r))
		} else {
			resp = new(contract.DocsReadResponse)
			err = s.askShard(ctx, i, contract.ShardRead, r, resp)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			found = resp
		case errors.Is(err, ErrNotFound):
		case errors.Is(err, ErrBadRequest):
			other = err
		default:
			return err
		}
		return nil
	})
	switch {
	case found != nil:
		return found, nil
	case other != nil:
		return nil, other
	case len(failed) > 0:
		return nil, fmt.Errorf("%w: section %s not found, and shards %v did not answer", ErrUnavailable, r.ID, failed)
	}
	return nil, fmt.Errorf("%w: no section %s", ErrNotFound, r.ID)
}

// gather asks every shard for op (the own shard through local) and
// returns the replies of those that answered and the shards that did not;
// a shard that answers not found counts as an answer with no reply.
func gather[Req, Resp any](ctx context.Context, s *Service, op string, req Req, local func(Req) (*Resp, error)) ([]*Resp, []int) {
	replies := make([]*Resp, s.cfg.Shards)
	failed := s.eachShard(ctx, func(ctx context.Context, i int) error {
		var r *Resp
		var err error
		if i == s.cfg.Shard {
			r, err = local(req)
		} else {
			r = new(Resp)
			err = s.askShard(ctx, i, op, req, r)
		}
		switch {
		case errors.Is(err, ErrNotFound), errors.Is(err, engine.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		replies[i] = r
		return nil
	})
	var out []*Resp
	for _, r := range replies {
		if r != nil {
			out = append(out, r)
		}
	}
	return out, failed
}

// pagesSharded lists a repository's pages across shards.
func (s *Service) pagesSharded(ctx context.Context, r contract.DocsPagesRequest) (*contract.DocsPagesResponse, error) {
	if _, err := s.engine.ListPages(contract.DocsPagesRequest{Repo: r.Repo, Offset: r.Offset, Limit: r.Limit}); err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, err // a bad window
	}
	// Each shard lists its pages up to the end of the window.
	ask := contract.DocsPagesRequest{Repo: r.Repo, Limit: r.Offset + cmp.Or(r.Limit, engine.DefaultPagesLimit)}
	replies, failed := gather(ctx, s, contract.ShardPages, ask, s.engine.ShardPages)
	if len(replies) == 0 && len(failed) > 0 {
		return nil, fmt.Errorf("%w: shards %v did not answer", ErrUnavailable, failed)
	}
	resp, err := engine.MergePages(r, replies)
	if err != nil {
		return notFound(resp, err)
	}
	resp.Partial, resp.MissingShards = len(failed) > 0, failed
	return resp, nil
}

// reposSharded lists the repositories of every shard.
func (s *Service) reposSharded(ctx context.Context) (*contract.DocsReposResponse, error) {
	replies, failed := gather(ctx, s, contract.ShardRepos, struct{}{}, func(struct{}) (*contract.DocsReposResponse, error) {
		return s.engine.ListRepos(), nil
	})
	if len(replies) == 0 && len(failed) > 0 {
		return nil, fmt.Errorf("%w: shards %v did not answer", ErrUnavailable, failed)
	}
	resp := engine.MergeRepos(replies)
	resp.Partial, resp.MissingShards = len(failed) > 0, failed
	return resp, nil
}

// statsSharded adds up every shard's docs counts into the replica's own
// statistics.
func (s *Service) statsSharded(ctx context.Context, st *contract.StatsResponse) {
	replies, failed := gather(ctx, s, contract.ShardStats, struct{}{}, func(struct{}) (*contract.StatsResponse, error) {
		return s.engine.Stats(s.IsReady()), nil
	})
	engine.MergeStats(st, replies)
	st.Shards = s.cfg.Shards
	st.Partial, st.MissingShards = len(failed) > 0, failed
	slices.Sort(st.MissingShards)
}
