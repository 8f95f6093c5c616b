package engine

import (
	"encoding/json"
	"fmt"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/kb"
	"github.com/knowhub/knowhub/internal/search"
)

// Collections are the names of the engine's indexes, in a fixed order.
var Collections = []string{contract.CollectionDocs, contract.CollectionTools, contract.CollectionKB}

// Snapshot returns a snapshot of each collection's index, by name, and
// the KH_INDEX revision they reflect. The caller must not apply updates
// meanwhile (the replica takes it between two), or the revision may lag
// the indexes.
func (e *Engine) Snapshot() (map[string]*search.Snapshot, uint64) {
	out := make(map[string]*search.Snapshot, len(Collections))
	for _, c := range Collections {
		out[c] = e.index(c).Snapshot()
	}
	return out, e.Revision()
}

// Restore replaces every collection's index with its snapshot and sets
// the revision they reflect; a collection without one is emptied. It
// fails, changing nothing, when a snapshot does not fit its index.
func (e *Engine) Restore(snaps map[string]*search.Snapshot, revision uint64) error {
	for _, c := range Collections {
		if s := snaps[c]; s != nil {
			if err := e.index(c).Check(s); err != nil {
				return fmt.Errorf("collection %s: %w", c, err)
			}
		}
	}
	for _, c := range Collections {
		if err := e.index(c).Restore(snaps[c]); err != nil {
			return fmt.Errorf("collection %s: %w", c, err)
		}
	}
	e.mu.Lock()
	e.revision = revision
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	return nil
}

// Keys returns the KH_INDEX key of every source the engine holds, those
// of other shards' pages it holds the statistics of included.
func (e *Engine) Keys() []string {
	var keys []string
	for _, c := range Collections {
		e.index(c).EachSource(func(s *search.Source, _ int) { keys = append(keys, s.Key) })
	}
	return append(keys, e.docs.RemoteKeys()...)
}

// EncodeExtra encodes the Extra an engine keeps on a source of collection
// c (a tool's descriptor, a knowledge entry), for a segment file.
func EncodeExtra(c string, extra any) ([]byte, error) {
	switch x := extra.(type) {
	case *contract.Tool:
		return json.Marshal(x)
	case *kb.Entry:
		return json.Marshal(x)
	}
	return nil, fmt.Errorf("collection %s: no encoding for %T", c, extra)
}

// DecodeExtra decodes what EncodeExtra encoded.
func DecodeExtra(c string, b []byte) (any, error) {
	switch c {
	case contract.CollectionTools:
		var t contract.Tool
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, err
		}
		return &t, nil
	case contract.CollectionKB:
		var x kb.Entry
		if err := json.Unmarshal(b, &x); err != nil {
			return nil, err
		}
		return &x, nil
	}
	return nil, fmt.Errorf("collection %s keeps no record", c)
}
