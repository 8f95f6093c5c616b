package contract

import (
	"encoding/json"
	"errors"
	"fmt"
)

// KH_VECTORS holds the section vectors an embeddings endpoint gave the
// latest chunk set of each file, one message per subject. The embedder
// stage writes it; the indexer folds it into the file's KH_INDEX value.
const (
	StreamVectors  = "KH_VECTORS"
	SubjectVectors = "kh.vectors" // kh.vectors.<repo>.<fileKey>
)

// VectorSubject returns the KH_VECTORS subject of a file.
func VectorSubject(repo, path string) string {
	return SubjectVectors + "." + repo + "." + FileKey(path)
}

// Limits of a vector set.
const (
	// MaxEmbeddingDims bounds the dimensions of one vector.
	MaxEmbeddingDims = 8192
	// MaxEmbeddingModelBytes bounds the model name.
	MaxEmbeddingModelBytes = 200
)

// VectorSet is the KH_VECTORS event of one chunk set: the vector of each
// of its sections, from one model. FileSeq is the chunk set's FileSeq, so
// the indexer folds it only into the index value of that same version.
type VectorSet struct {
	Schema  int    `json:"schema"`
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	FileSeq uint64 `json:"file_seq"`
	// Model names the vectors' space; a query is compared only with
	// vectors of the model that embeds it.
	Model   string          `json:"model"`
	Vectors []SectionVector `json:"vectors"`
}

// SectionVector is one section's vector: int8 components at the scale of
// the largest (semantic.Cosine reads them).
type SectionVector struct {
	ChunkID string `json:"chunk_id"`
	Vec     []byte `json:"vec"`
}

// DecodeVectorSet decodes and checks a KH_VECTORS payload.
func DecodeVectorSet(data []byte) (*VectorSet, error) {
	var vs VectorSet
	if err := json.Unmarshal(data, &vs); err != nil {
		return nil, fmt.Errorf("decode vector set: %w", err)
	}
	if !ValidRepoName(vs.Repo) || !ValidPath(vs.Path) || vs.Path == "" {
		return nil, fmt.Errorf("vector set has invalid repo %q or path %q", vs.Repo, vs.Path)
	}
	if vs.Model == "" || len(vs.Model) > MaxEmbeddingModelBytes {
		return nil, errors.New("vector set names no model, or one over 200 bytes")
	}
	dims := -1
	for _, v := range vs.Vectors {
		if len(v.Vec) == 0 || len(v.Vec) > MaxEmbeddingDims {
			return nil, fmt.Errorf("vector of chunk %q has %d dimensions, want 1 to %d", v.ChunkID, len(v.Vec), MaxEmbeddingDims)
		}
		if dims >= 0 && len(v.Vec) != dims {
			return nil, fmt.Errorf("vectors of %d and %d dimensions in one set", dims, len(v.Vec))
		}
		dims = len(v.Vec)
	}
	return &vs, nil
}

// EncodeVectorSet encodes a KH_VECTORS payload.
func EncodeVectorSet(vs *VectorSet) ([]byte, error) {
	data, err := json.Marshal(vs)
	if err != nil {
		return nil, fmt.Errorf("encode vector set: %w", err)
	}
	return data, nil
}
