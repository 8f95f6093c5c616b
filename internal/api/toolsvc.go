package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/contract"
)

// SearchTools honours MinSeq, then searches the tool catalog.
func (s *Service) SearchTools(ctx context.Context, req contract.ToolSearchRequest) (*contract.ToolSearchResponse, error) {
	if req.MinSeq > 0 && !s.waitApplied(ctx, contract.CollectionTools, req.MinSeq) {
		return nil, fmt.Errorf("%w: tools index has not reached sequence %d within %s", ErrUnavailable, req.MinSeq, s.cfg.MinSeqWait)
	}
	resp, err := s.engine.SearchTools(req)
	if err == nil {
		resp.Indexing = !s.Complete()
	}
	return resp, err
}

// UpsertTools redacts, validates and screens a batch as a whole and, only
// if every tool is valid, publishes each descriptor to KH_TOOLS. Every
// producer of tools (HTTP, NATS, the CLI) comes through here, so no
// secret in a description, keyword or input schema reaches the stream,
// and no text that reads as prompt injection is served to agents. The
// indexer makes them searchable; the reply carries each tool's sequence
// for min_seq.
func (s *Service) UpsertTools(ctx context.Context, req contract.ToolsUpsertRequest) (*contract.ToolsWriteResponse, error) {
	if err := catalog.Redact(req.Tools, s.red); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := catalog.Validate(req.Tools); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := catalog.Screen(req.Tools, s.screen); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	events := make([]contract.ToolEvent, len(req.Tools))
	for i := range req.Tools {
		t := req.Tools[i]
		events[i] = contract.ToolEvent{Schema: contract.SchemaVersion, Name: t.Name, Tool: &t}
	}
	return s.publishTools(ctx, events)
}

// RemoveTools publishes a removal for each named tool.
func (s *Service) RemoveTools(ctx context.Context, req contract.ToolsRemoveRequest) (*contract.ToolsWriteResponse, error) {
	if err := catalog.ValidateNames(req.Names); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	// A name that is not in the catalog is an error, and then nothing
	// is removed.
	stream, err := s.js.Stream(ctx, contract.StreamTools)
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %v", ErrUnavailable, contract.StreamTools, err)
	}
	for _, n := range req.Names {
		m, err := stream.GetLastMsgForSubject(ctx, contract.ToolSubject(n))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return nil, fmt.Errorf("%w: no tool %q in the catalog", ErrNotFound, n)
		case err != nil:
			return nil, fmt.Errorf("%w: read tool %q: %v", ErrUnavailable, n, err)
		case m.Header.Get(contract.HeaderOp) == contract.OpDelete:
			return nil, fmt.Errorf("%w: no tool %q in the catalog (it was removed)", ErrNotFound, n)
		}
	}
	events := make([]contract.ToolEvent, len(req.Names))
	for i, n := range req.Names {
		events[i] = contract.ToolEvent{Schema: contract.SchemaVersion, Name: n, Deleted: true}
	}
	return s.publishTools(ctx, events)
}

func (s *Service) publishTools(ctx context.Context, events []contract.ToolEvent) (*contract.ToolsWriteResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp := &contract.ToolsWriteResponse{}
	for _, ev := range events {
		data, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		op := contract.OpPut
		if ev.Deleted {
			op = contract.OpDelete
		}
		ack, err := s.js.PublishMsg(ctx, &nats.Msg{
			Subject: contract.ToolSubject(ev.Name),
			Data:    data,
			Header: nats.Header{
				contract.HeaderOp:     {op},
				contract.HeaderSchema: {strconv.Itoa(contract.SchemaVersion)},
			},
		})
		if err != nil {
			return resp, fmt.Errorf("%w: publish tool %q after %d written: %v", ErrUnavailable, ev.Name, len(resp.Written), err)
		}
		resp.Written = append(resp.Written, contract.ToolWrite{Name: ev.Name, Seq: ack.Sequence})
	}
	return resp, nil
}
