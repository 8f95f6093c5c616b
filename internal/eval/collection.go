package eval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knowhub/knowhub/internal/catalog"
	"github.com/knowhub/knowhub/internal/chunker"
	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/embedder"
	"github.com/knowhub/knowhub/internal/embedding"
	"github.com/knowhub/knowhub/internal/engine"
	"github.com/knowhub/knowhub/internal/indexer"
)

// repo is the repository name every evaluated document is indexed under;
// with a single repository, conflict resolution never hides a hit.
const repo = "eval"

// maxChunkHits is the engine's top-k ceiling and the number of chunks a
// Markdown search asks for, so that collapsing chunks to files still
// leaves Depth files when the folder has them.
const maxChunkHits = 1000

// Collection is a corpus indexed in a engine.Engine and searched the way
// the query service searches: SearchDocs, with its analyzer, BM25F scoring
// and conflict resolution. Documents are identified by the Path of their
// index entry: the doc ID for a JSONL corpus, the slash-separated path
// relative to the folder for Markdown. It is safe for concurrent use.
type Collection struct {
	engine *engine.Engine
	files  bool // a document has several chunks: collapse hits to files
	tools  bool // documents are tools, searched through tool search
	// repos names a document repository/path: several repositories share
	// the index (IndexMarkdownRepos).
	repos bool
	// embed embeds queries for fusion (SetEmbeddings).
	embed *embedding.Client
	// tees are engines every document is applied to besides engine: the
	// shards of a sharded view of the collection.
	tees []*engine.Engine

	// Docs and Chunks count what was indexed; IndexTime is how long
	// reading, chunking, analysis and indexing took.
	Docs      int
	Chunks    int
	IndexTime time.Duration
	// Skipped lists the Markdown files the chunker rejected, with why.
	Skipped []string
}

func newCollection(files bool) *Collection {
	return &Collection{
		engine: engine.NewEngine(engine.Limits{DefaultTopK: Depth, MaxTopK: maxChunkHits, MaxToolLimit: Depth}),
		files:  files,
	}
}

// SetSemantic chooses the parts of semantic matching the engine uses
// (engine.SemanticBoth by default).
func (c *Collection) SetSemantic(m engine.SemanticMode) { c.engine.SetSemanticMode(m) }

// IndexDocs indexes every document as one docs-collection entry of a single
// chunk (Title = title, Text = text) at Path = ID, using up to workers
// goroutines (0 means GOMAXPROCS) for analysis.
func IndexDocs(ctx context.Context, docs []Doc, workers int) (*Collection, error) {
	start := time.Now()
	c := newCollection(false)
	an := c.engine.Analyzer()
	err := forEach(ctx, len(docs), workers, func(i int) error {
		d := &docs[i]
		seq := uint64(i + 1)
		cs := &contract.ChunkSet{
			Schema: contract.SchemaVersion, Repo: repo, Path: d.ID, FileSeq: seq,
			Chunks: []contract.Chunk{{ID: contract.FileKey(d.ID), Title: d.Title, Text: d.Text}},
		}
		c.engine.Apply(contract.DocKey(repo, d.ID), indexer.BuildDoc(cs, an), seq)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.Docs, c.Chunks = len(docs), len(docs)
	c.IndexTime = time.Since(start)
	return c, nil
}

// IndexTools indexes each document as a core tool (id = name, text =
// description) and searches it through tool search.
func IndexTools(ctx context.Context, docs []Doc, workers int) (*Collection, error) {
	start := time.Now()
	c := newCollection(false)
	c.tools = true
	an := c.engine.Analyzer()
	err := forEach(ctx, len(docs), workers, func(i int) error {
		d := &docs[i]
		seq := uint64(i + 1)
		t := &contract.Tool{Name: d.ID, Description: d.Text, Type: contract.ToolCore}
		c.engine.Apply(contract.ToolIndexKey(d.ID), catalog.BuildDoc(t, seq, an), seq)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.Docs, c.Chunks = len(docs), len(docs)
	c.IndexTime = time.Since(start)
	return c, nil
}

// IndexMarkdown indexes every .md and .mdx file under dir (directories
// whose name starts with '.' are skipped) through chunker.Split, as the
// pipeline does, using up to workers goroutines (0 means GOMAXPROCS).
// A file the chunker rejects is listed in Skipped; one that yields no
// chunk (blank) is not indexed.
func IndexMarkdown(ctx context.Context, dir string, workers int) (*Collection, error) {
	return IndexMarkdownWith(ctx, dir, MarkdownOptions{Workers: workers})
}

// MarkdownOptions tune IndexMarkdownWith.
type MarkdownOptions struct {
	// Workers is the number of files read and indexed at once; 0 means
	// GOMAXPROCS.
	Workers int
	// StripFrontMatter names top-level front-matter keys removed from
	// every file before it is chunked (see StripFrontMatter), so that
	// nothing of their values is indexed: a judged set made from a key
	// does not find its answers in that key. A file whose front matter
	// cannot be parsed is listed in Skipped.
	StripFrontMatter []string
	// Learned holds, by path, the learned words indexed with a file's
	// sections (indexer.BuildLearnedDoc), to measure learned vocabulary.
	Learned map[string]*contract.LearnedRecord
	// Embed, when set, gives every section a vector from this embeddings
	// endpoint, and every query, for fusion (engine.Embeddings).
	Embed *embedding.Client
}

// IndexMarkdownWith is IndexMarkdown with options.
func IndexMarkdownWith(ctx context.Context, dir string, opts MarkdownOptions) (*Collection, error) {
	start := time.Now()
	c := newCollection(true)
	if err := c.addMarkdown(ctx, repo, dir, opts, 0); err != nil {
		return nil, err
	}
	c.IndexTime = time.Since(start)
	return c, nil
}

// RepoDir is one repository of IndexMarkdownRepos.
type RepoDir struct {
	Repo, Dir string
}

// IndexMarkdownRepos indexes several folders into one engine, each as a
// repository of its own (with equal priority and type), as `knowhub up`
// does with several repositories configured. A document's ID is
// repo/path.
func IndexMarkdownRepos(ctx context.Context, dirs []RepoDir, opts MarkdownOptions) (*Collection, error) {
	start := time.Now()
	c := newCollection(true)
	c.repos = true
	for i, d := range dirs {
		if err := c.addMarkdown(ctx, d.Repo, d.Dir, opts, uint64(i)<<32); err != nil {
			return nil, err
		}
	}
	c.IndexTime = time.Since(start)
	return c, nil
}

// addMarkdown indexes the Markdown files under dir as repository name,
// numbering their sequences from seqBase.
func (c *Collection) addMarkdown(ctx context.Context, name, dir string, opts MarkdownOptions, seqBase uint64) error {
	workers := opts.Workers
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".md" || ext == ".mdx" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	an := c.engine.Analyzer()
	var (
		docs, chunks atomic.Int64
		mu           sync.Mutex
	)
	err = forEach(ctx, len(paths), workers, func(i int) error {
		data, err := os.ReadFile(paths[i])
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, paths[i])
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if data, err = StripFrontMatter(data, opts.StripFrontMatter); err != nil {
			mu.Lock()
			c.Skipped = append(c.Skipped, fmt.Sprintf("strip front matter of %s: %v", rel, err))
			mu.Unlock()
			return nil
		}
		cs, err := chunker.Split(rel, data, chunker.Options{})
		if err != nil {
			mu.Lock()
			c.Skipped = append(c.Skipped, err.Error())
			mu.Unlock()
			return nil
		}
		if len(cs) == 0 {
			return nil
		}
		seq := seqBase + uint64(i+1)
		set := &contract.ChunkSet{Schema: contract.SchemaVersion, Repo: name, Path: rel, FileSeq: seq,
			Meta: contract.RepoMeta{Priority: 100, Type: contract.RepoCore}, Chunks: cs}
		doc := indexer.BuildLearnedDoc(set, an, opts.Learned[rel])
		if opts.Embed != nil {
			if err := embedDoc(ctx, opts.Embed, set, doc); err != nil {
				return fmt.Errorf("embed %s: %w", rel, err)
			}
		}
		c.engine.Apply(contract.DocKey(name, rel), doc, seq)
		for _, t := range c.tees {
			t.Apply(contract.DocKey(name, rel), doc, seq)
		}
		docs.Add(1)
		chunks.Add(int64(len(cs)))
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(c.Skipped)
	c.Docs += int(docs.Load())
	c.Chunks += int(chunks.Load())
	return nil
}

// embedDoc sets the Embedding of doc's chunks, those of set, from e.
func embedDoc(ctx context.Context, e *embedding.Client, set *contract.ChunkSet, doc *contract.IndexDoc) error {
	inputs := make([]string, len(set.Chunks))
	for i := range set.Chunks {
		inputs[i] = embedder.Input(&set.Chunks[i])
	}
	vecs, err := e.Embed(ctx, inputs)
	if err != nil {
		return err
	}
	vs := &contract.VectorSet{Model: e.Model()}
	for i, v := range vecs {
		vs.Vectors = append(vs.Vectors, contract.SectionVector{ChunkID: set.Chunks[i].ID, Vec: embedding.Encode(v)})
	}
	indexer.AddEmbeddings(doc, vs)
	return nil
}

// SetEmbeddings sets the fusion of the collection's engine; Search embeds
// its queries with e when the weight is positive.
func (c *Collection) SetEmbeddings(e *embedding.Client, weight float64) {
	c.embed = e
	if e == nil {
		c.engine.SetEmbeddings(engine.Embeddings{})
		return
	}
	c.engine.SetEmbeddings(engine.Embeddings{Model: e.Model(), Weight: weight})
}

// WithPageScoring returns a view of c, sharing its index, that searches
// with page scoring p (see engine.Engine.WithPageScoring).
func (c *Collection) WithPageScoring(p engine.PageScoring) *Collection {
	v := *c
	v.engine = c.engine.WithPageScoring(p)
	return &v
}

// Search returns the k best documents for q. For Markdown it asks the
// engine for up to maxChunkHits chunks and keeps each file once, at the
// rank and score of its best chunk.
func (c *Collection) Search(q string, k int) ([]Ranked, error) {
	if k <= 0 {
		return nil, nil
	}
	n := k
	if c.files {
		n = maxChunkHits
	}
	if c.tools {
		resp, err := c.engine.SearchTools(contract.ToolSearchRequest{Query: q, Limit: k, Detail: contract.DetailName})
		if err != nil {
			return nil, err
		}
		out := make([]Ranked, 0, len(resp.Hits))
		for _, h := range resp.Hits {
			out = append(out, Ranked{DocID: h.Name, Score: h.Score})
		}
		return out, nil
	}
	req := contract.SearchRequest{Query: q, TopK: n, NoSnippet: true}
	if c.embed != nil {
		v, err := c.embed.EmbedQuery(context.Background(), q)
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		req.Embedding = v
	}
	resp, err := c.engine.SearchDocs(req)
	if err != nil {
		return nil, err
	}
	out := make([]Ranked, 0, min(k, len(resp.Hits)))
	seen := make(map[string]bool, len(resp.Hits))
	for _, h := range resp.Hits {
		if len(out) == k {
			break
		}
		id := h.Path
		if c.repos {
			id = h.Repo + "/" + h.Path
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, Ranked{DocID: id, Score: h.Score})
	}
	return out, nil
}
