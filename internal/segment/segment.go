package segment

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/knowhub/knowhub/internal/search"
)

// Meta says what a segment reflects, so that a replica can tell whether
// it may load it.
type Meta struct {
	// Revision is the last KH_INDEX revision the indexes applied: a
	// replica that loads the segment follows the bucket from the next.
	Revision uint64 `json:"revision"`
	// Bucket identifies the KH_INDEX bucket the revisions count in (its
	// stream's creation time): a bucket made again restarts them.
	Bucket string `json:"bucket"`
	// Builds holds, per collection, the analyzer (and for docs chunker)
	// version the replica that wrote it expected.
	Builds map[string]string `json:"builds"`
	// StaleDocs is the replica's StaleDocs when it wrote the segment.
	StaleDocs string `json:"stale_docs,omitempty"`
	// Shard is the docs shard of the replica that wrote it, "<shard>/<shards>",
	// empty when not sharded: a segment serves replicas of its shard only.
	Shard   string    `json:"shard,omitempty"`
	Written time.Time `json:"written"`
}

// Collection is one collection's index, by name.
type Collection struct {
	Name     string
	Snapshot *search.Snapshot
}

// collectionInfo is a collection's small scalars, as JSON.
type collectionInfo struct {
	Fields       []string `json:"fields"`
	OutlineField string   `json:"outline_field,omitempty"`
	Applied      uint64   `json:"applied"`
	MaxBoost     float64  `json:"max_boost"`
	Entries      int      `json:"entries"`
	Sources      int      `json:"sources"`
	// Remotes counts the documents of other shards whose statistics the
	// index holds (search.Index.PutStats); their columns are there only
	// then.
	Remotes int `json:"remotes,omitempty"`
}

// Write writes cols and meta to a segment file at path, atomically: a
// reader sees the file before or the file after. encode turns a source's
// Extra into bytes (nil Extra is never passed).
func Write(path string, meta Meta, cols []Collection, encode func(collection string, extra any) ([]byte, error)) error {
	return writeAtomic(path, func(w *writer) error {
		m, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		w.bytes("meta", m)
		for _, c := range cols {
			if err := writeCollection(w, c, encode); err != nil {
				return fmt.Errorf("collection %s: %w", c.Name, err)
			}
		}
		return nil
	})
}

func writeCollection(w *writer, c Collection, encode func(string, any) ([]byte, error)) error {
	if !validName(c.Name) {
		return fmt.Errorf("invalid collection name %q", c.Name)
	}
	s := c.Snapshot
	p := c.Name + "/"
	// The sources, in the order of their entries.
	var sources []*search.Source
	srcEnds := make([]uint64, 0)
	for i, e := range s.Entries {
		if len(sources) == 0 || sources[len(sources)-1] != e.Source {
			sources = append(sources, e.Source)
			srcEnds = append(srcEnds, 0)
		}
		srcEnds[len(srcEnds)-1] = uint64(i + 1)
	}
	info, err := json.Marshal(collectionInfo{Fields: s.Fields, OutlineField: s.OutlineField, Applied: s.Applied, MaxBoost: s.MaxBoost,
		Entries: len(s.Entries), Sources: len(sources), Remotes: len(s.RemoteKeys)})
	if err != nil {
		return err
	}
	w.bytes(p+"info", info)

	w.bytes(p+"terms.bytes", s.TermBytes)
	w.u32s(p+"terms.ends", s.TermEnds)
	w.u32s(p+"terms.free", s.Free)
	w.u64s(p+"lists.ends", s.ListEnds)
	w.bytes(p+"postings", s.Postings)

	w.u16s(p+"entries.lens", s.Lens)
	boosts := make([]uint64, len(s.Boosts))
	for i, b := range s.Boosts {
		boosts[i] = math.Float64bits(b)
	}
	w.u64s(p+"entries.boost", boosts)
	w.u64s(p+"entries.termends", s.TermRefEnds)
	w.u32s(p+"entries.terms", s.EntryTerms)
	ords := make([]uint64, len(s.Entries))
	for i, e := range s.Entries {
		ords[i] = uint64(int64(e.Ord))
	}
	w.u64s(p+"entries.ord", ords)
	en := s.Entries
	w.strs(p+"entries.id", len(en), func(i int) string { return en[i].ID })
	w.lists(p+"entries.heading", len(en), func(i int) []string { return en[i].HeadingPath })
	w.strs(p+"entries.title", len(en), func(i int) string { return en[i].Title })
	w.strs(p+"entries.text", len(en), func(i int) string { return en[i].Text })
	w.strs(p+"entries.markdown", len(en), func(i int) string { return en[i].Markdown })
	w.strs(p+"entries.sectionkey", len(en), func(i int) string { return en[i].SectionKey })
	w.strs(p+"entries.vec", len(en), func(i int) string { return string(en[i].Vec) })
	w.strs(p+"entries.embedding", len(en), func(i int) string { return string(en[i].Embedding) })

	w.u64s(p+"sources.ends", srcEnds)
	w.strs(p+"sources.key", len(sources), func(i int) string { return sources[i].Key })
	w.strs(p+"sources.collection", len(sources), func(i int) string { return sources[i].Collection })
	w.strs(p+"sources.repo", len(sources), func(i int) string { return sources[i].Repo })
	w.strs(p+"sources.path", len(sources), func(i int) string { return sources[i].Path })
	w.strs(p+"sources.type", len(sources), func(i int) string { return sources[i].Meta.Type })
	w.strs(p+"sources.embedding_model", len(sources), func(i int) string { return sources[i].EmbeddingModel })
	w.strs(p+"sources.lang", len(sources), func(i int) string { return sources[i].Lang })
	w.lists(p+"sources.demote", len(sources), func(i int) []string { return sources[i].Meta.Demote })
	seqs, prios, chunks := make([]uint64, len(sources)), make([]uint64, len(sources)), make([]uint64, len(sources))
	var outline []uint32
	outlineEnds := make([]uint64, len(sources))
	extras := make([][]byte, len(sources))
	for i, src := range sources {
		seqs[i], prios[i], chunks[i] = src.SourceSeq, uint64(int64(src.Meta.Priority)), uint64(src.Chunks)
		outline = append(outline, src.Outline...)
		outlineEnds[i] = uint64(len(outline))
		if src.Extra != nil {
			if extras[i], err = encode(c.Name, src.Extra); err != nil {
				return fmt.Errorf("source %s: %w", src.Key, err)
			}
		}
	}
	w.u64s(p+"sources.seq", seqs)
	w.u64s(p+"sources.priority", prios)
	w.u64s(p+"sources.chunks", chunks)
	w.u64s(p+"sources.outline.n", outlineEnds)
	w.u32s(p+"sources.outline", outline)
	w.strs(p+"sources.extra", len(sources), func(i int) string { return string(extras[i]) })
	if nr := len(s.RemoteKeys); nr > 0 {
		w.strs(p+"remotes.key", nr, func(i int) string { return s.RemoteKeys[i] })
		w.strs(p+"remotes.repo", nr, func(i int) string { return s.RemoteRepos[i] })
		w.u64s(p+"remotes.entries", s.RemoteEntries)
		w.u64s(p+"remotes.lens", s.RemoteLens)
		w.u64s(p+"remotes.terms.ends", s.RemoteTermEnds)
		w.bytes(p+"remotes.terms", s.RemoteTerms)
	}
	return w.err
}

// Segment is an opened segment file: checked whole, read in place.
type Segment struct {
	Meta Meta
	f    *file
}

// Open maps the segment file at path and checks its layout and every
// section's checksum. An error wrapping os.ErrNotExist means there is no
// file; ErrLayout, a file of another layout; any other, a damaged file.
func Open(path string) (*Segment, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > int64(^uint(0)>>1) {
		return nil, errors.New("segment file too large to map")
	}
	data, err := mapFile(fh, int(st.Size()))
	if err != nil {
		return nil, err
	}
	f, err := parse(data)
	if err != nil {
		unmap(data)
		return nil, err
	}
	s := &Segment{f: f}
	m, err := f.section("meta")
	if err == nil {
		err = json.Unmarshal(m, &s.Meta)
	}
	if err != nil {
		unmap(data)
		return nil, fmt.Errorf("segment meta: %w", err)
	}
	return s, nil
}

// Release undoes the file's map, for a segment that nothing was restored
// from. One that was must stay mapped, and is never released: its
// indexes serve their terms and text from the map.
func (s *Segment) Release() {
	if s.f != nil {
		unmap(s.f.data)
		s.f = nil
	}
}

// Settle drops the file's pages from the process once every collection
// was restored: checking and restoring read every section, and the
// indexes read in place only what searches touch (postings of the words
// asked for, the text of the sections shown), which come back from the
// page cache then. So a replica's resident memory is its heap and the
// part of the file in use, not the whole file.
func (s *Segment) Settle() {
	if s.f == nil {
		return
	}
	for _, b := range s.f.sections {
		dontNeed(s.f.data, b)
	}
}

// Has reports whether the segment holds collection name.
func (s *Segment) Has(name string) bool {
	_, ok := s.f.sections[name+"/info"]
	return ok
}

// Collection reads collection name into a snapshot for search.Index's
// Restore. Stored text is read in place; decode turns a source's extra
// bytes back into its Extra.
func (s *Segment) Collection(name string, decode func(collection string, b []byte) (any, error)) (*search.Snapshot, error) {
	f, p := s.f, name+"/"
	var info collectionInfo
	b, err := f.section(p + "info")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("segment collection %s: %w", name, err)
	}
	snap := &search.Snapshot{Fields: info.Fields, OutlineField: info.OutlineField, Applied: info.Applied, MaxBoost: info.MaxBoost}
	r := reader{f: f}
	snap.TermBytes = r.bytes(p + "terms.bytes")
	snap.TermEnds = r.u32s(p + "terms.ends")
	snap.Free = r.u32s(p + "terms.free")
	snap.ListEnds = r.u64s(p + "lists.ends")
	snap.Postings = r.bytes(p + "postings")
	snap.Lens = r.u16s(p + "entries.lens")
	for _, b := range r.u64s(p + "entries.boost") {
		snap.Boosts = append(snap.Boosts, math.Float64frombits(b))
	}
	snap.TermRefEnds = r.u64s(p + "entries.termends")
	snap.EntryTerms = r.u32sInPlace(p + "entries.terms")
	ne, ns := info.Entries, info.Sources
	ords := r.u64s(p + "entries.ord")
	ids := r.strs(p+"entries.id", ne, false)
	heading := r.lists(p+"entries.heading", ne, false)
	title := r.strs(p+"entries.title", ne, false)
	text := r.strs(p+"entries.text", ne, false)
	markdown := r.strs(p+"entries.markdown", ne, true)
	sectionKey := r.strs(p+"entries.sectionkey", ne, false)
	vec := r.strs(p+"entries.vec", ne, true)
	embedding := r.strs(p+"entries.embedding", ne, true)

	srcEnds := r.u64s(p + "sources.ends")
	key := r.strs(p+"sources.key", ns, false)
	coll := r.strs(p+"sources.collection", ns, false)
	repo := r.strs(p+"sources.repo", ns, false)
	path := r.strs(p+"sources.path", ns, false)
	typ := r.strs(p+"sources.type", ns, false)
	model := r.strs(p+"sources.embedding_model", ns, true)
	lang := r.strs(p+"sources.lang", ns, true)
	demote := r.lists(p+"sources.demote", ns, true)
	seqs := r.u64s(p + "sources.seq")
	prios := r.u64s(p + "sources.priority")
	chunks := r.u64s(p + "sources.chunks")
	outlineEnds := r.u64s(p + "sources.outline.n")
	outline := r.u32s(p + "sources.outline")
	extra := r.strs(p+"sources.extra", ns, true)
	if nr := info.Remotes; nr > 0 {
		keys, repos := r.strs(p+"remotes.key", nr, false), r.strs(p+"remotes.repo", nr, false)
		snap.RemoteEntries = r.u64s(p + "remotes.entries")
		snap.RemoteLens = r.u64s(p + "remotes.lens")
		snap.RemoteTermEnds = r.u64s(p + "remotes.terms.ends")
		snap.RemoteTerms = r.bytes(p + "remotes.terms")
		if r.err == nil {
			for i := range nr {
				snap.RemoteKeys = append(snap.RemoteKeys, keys.str(i))
				snap.RemoteRepos = append(snap.RemoteRepos, repos.str(i))
			}
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("segment collection %s: %w", name, r.err)
	}
	if len(ords) != ne || len(srcEnds) != ns || len(seqs) != ns || len(prios) != ns || len(chunks) != ns || len(outlineEnds) != ns {
		return nil, fmt.Errorf("segment collection %s: columns disagree with %d entries and %d sources", name, ne, ns)
	}
	if ns > 0 && (srcEnds[ns-1] != uint64(ne) || outlineEnds[ns-1] != uint64(len(outline))) {
		return nil, fmt.Errorf("segment collection %s: sources do not cover the entries", name)
	}

	srcs := make([]search.Source, ns)
	entries := make([]search.Entry, ne)
	snap.Entries = make([]*search.Entry, ne)
	var from, ofrom uint64
	for i := range srcs {
		src := &srcs[i]
		*src = search.Source{Key: key.str(i), Collection: coll.str(i), Repo: repo.str(i), Path: path.str(i), SourceSeq: seqs[i],
			Meta: search.Meta{Priority: int(int64(prios[i])), Type: typ.str(i), Demote: demote.row(i)}, Chunks: int(chunks[i]),
			EmbeddingModel: model.str(i), Lang: lang.str(i)}
		to := srcEnds[i]
		if to < from || to > uint64(ne) || outlineEnds[i] < ofrom {
			return nil, fmt.Errorf("segment collection %s: source offsets out of order", name)
		}
		if ofrom < outlineEnds[i] {
			src.Outline = append([]uint32(nil), outline[ofrom:outlineEnds[i]]...)
		}
		ofrom = outlineEnds[i]
		if b := extra.bytes(i); len(b) > 0 {
			if src.Extra, err = decode(name, b); err != nil {
				return nil, fmt.Errorf("segment collection %s, source %s: %w", name, src.Key, err)
			}
		}
		for o := from; o < to; o++ {
			e := &entries[o]
			*e = search.Entry{Source: src, ID: ids.str(int(o)), Ord: int(int64(ords[o])), HeadingPath: heading.row(int(o)),
				Title: title.str(int(o)), Text: text.str(int(o)), Markdown: markdown.str(int(o)), SectionKey: sectionKey.str(int(o)),
				Vec: vec.view(int(o)), Embedding: embedding.view(int(o))}
			snap.Entries[o] = e
		}
		from = to
	}
	return snap, nil
}

// reader reads sections, keeping the first error.
type reader struct {
	f   *file
	err error
}

func (r *reader) bytes(name string) []byte {
	if r.err != nil {
		return nil
	}
	b, err := r.f.section(name)
	r.err = err
	return b
}

func (r *reader) u16s(name string) []uint16 {
	if r.err != nil {
		return nil
	}
	v, err := r.f.u16s(name)
	r.err = err
	return v
}

func (r *reader) u32s(name string) []uint32 {
	if r.err != nil {
		return nil
	}
	v, err := r.f.u32s(name)
	r.err = err
	return v
}

func (r *reader) u32sInPlace(name string) []uint32 {
	if r.err != nil {
		return nil
	}
	v, err := r.f.u32sInPlace(name)
	r.err = err
	return v
}

func (r *reader) u64s(name string) []uint64 {
	if r.err != nil {
		return nil
	}
	v, err := r.f.u64s(name)
	r.err = err
	return v
}

func (r *reader) strs(name string, n int, optional bool) column {
	if r.err != nil {
		return column{ends: make([]uint64, n)}
	}
	c, err := r.f.strs(name, n, optional)
	if err != nil {
		r.err = err
		return column{ends: make([]uint64, n)}
	}
	return c
}

func (r *reader) lists(name string, n int, optional bool) listColumn {
	if r.err != nil {
		return listColumn{ends: make([]uint64, n)}
	}
	c, err := r.f.lists(name, n, optional)
	if err != nil {
		r.err = err
		return listColumn{ends: make([]uint64, n)}
	}
	return c
}
