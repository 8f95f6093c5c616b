package indexer

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knowhub/knowhub/internal/bus"
	"github.com/knowhub/knowhub/internal/contract"
)

// StageVectors names the indexer's consumer of KH_VECTORS.
const StageVectors = "indexer-vectors"

// handleVectors folds a vector set into the KH_INDEX value of the same
// file version. A value of a newer version makes the set stale; a value
// not yet written (the indexer is behind the embedder) makes it wait.
func (w *Worker) handleVectors(ctx context.Context, m *bus.Message) error {
	vs, err := contract.DecodeVectorSet(m.Data)
	if err != nil {
		return bus.Permanent(fmt.Errorf("vector set on %s: %w", m.Subject, err))
	}
	if vs.Schema > contract.SchemaVersion {
		return bus.Permanent(fmt.Errorf("vector set schema %d is newer than %d", vs.Schema, contract.SchemaVersion))
	}
	if want := contract.VectorSubject(vs.Repo, vs.Path); want != m.Subject {
		return bus.Permanent(fmt.Errorf("vector set for %s/%s arrived on %s, want %s", vs.Repo, vs.Path, m.Subject, want))
	}
	key := contract.DocKey(vs.Repo, vs.Path)
	for attempt := 0; attempt < 16; attempt++ {
		cur, err := w.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return w.waitIndex(m, vs, 0)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		seq, err := contract.IndexDocSeq(cur.Value())
		if err != nil {
			return bus.Permanent(fmt.Errorf("read %s: %w", key, err))
		}
		switch {
		case seq > vs.FileSeq:
			return nil // a newer version is indexed; its own vectors follow
		case seq < vs.FileSeq:
			return w.waitIndex(m, vs, seq)
		}
		doc, err := contract.DecodeIndexDoc(cur.Value())
		if err != nil {
			return bus.Permanent(fmt.Errorf("decode %s: %w", key, err))
		}
		if doc.Deleted || !AddEmbeddings(doc, vs) {
			return nil
		}
		val, err := contract.EncodeIndexDoc(doc)
		if err != nil {
			return bus.Permanent(err)
		}
		if _, err := w.kv.Update(ctx, key, val, cur.Revision()); err != nil {
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				continue
			}
			return fmt.Errorf("write %s: %w", key, err)
		}
		w.log.Debug("vectors indexed", "repo", vs.Repo, "path", vs.Path, "seq", vs.FileSeq, "vectors", len(vs.Vectors))
		return nil
	}
	return errors.New("too many concurrent writers")
}

// waitIndex makes a vector set wait for the index value of its version,
// at most MaxVectorWaits deliveries.
func (w *Worker) waitIndex(m *bus.Message, vs *contract.VectorSet, indexed uint64) error {
	err := fmt.Errorf("vectors of %s/%s at file_seq %d wait for the index, at %d", vs.Repo, vs.Path, vs.FileSeq, indexed)
	if m.Delivered >= uint64(w.cfg.MaxVectorWaits) {
		return bus.Permanent(err)
	}
	return bus.Later(err)
}

// addEmbeddings sets each chunk's Embedding from vs, by chunk id, and
// reports whether doc changed.
func AddEmbeddings(doc *contract.IndexDoc, vs *contract.VectorSet) bool {
	byID := make(map[string][]byte, len(vs.Vectors))
	for _, v := range vs.Vectors {
		byID[v.ChunkID] = v.Vec
	}
	changed := doc.EmbeddingModel != vs.Model
	doc.EmbeddingModel = vs.Model
	for i := range doc.Chunks {
		c := &doc.Chunks[i]
		v := byID[c.ID]
		if string(v) != string(c.Embedding) {
			c.Embedding, changed = v, true
		}
	}
	return changed
}

// keepEmbeddings returns val, the encoding of doc, with the embeddings of
// cur when cur is the same version and has them: a chunk set delivered
// again must not drop the vectors already folded in.
func keepEmbeddings(doc *contract.IndexDoc, cur, val []byte) []byte {
	old, err := contract.DecodeIndexDoc(cur)
	if err != nil || old.EmbeddingModel == "" {
		return val
	}
	vs := &contract.VectorSet{Model: old.EmbeddingModel}
	for _, c := range old.Chunks {
		if len(c.Embedding) > 0 {
			vs.Vectors = append(vs.Vectors, contract.SectionVector{ChunkID: c.ID, Vec: c.Embedding})
		}
	}
	d := *doc
	d.Chunks = append([]contract.IndexChunk(nil), doc.Chunks...)
	AddEmbeddings(&d, vs)
	if b, err := contract.EncodeIndexDoc(&d); err == nil {
		return b
	}
	return val
}
