package eval

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/knowhub/knowhub/internal/contract"
)

// TestEndToEnd runs a tiny judged collection from files through the real
// analyzer, index and search.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "corpus.jsonl", `{"id": "d1", "title": "Solar panels", "text": "Photovoltaic cells convert sunlight into electricity."}
{"id": "d2", "title": "Wind turbines", "text": "Blades turn a generator when the wind blows."}
{"id": "d3", "title": "Coffee brewing", "text": "Espresso forces hot water through ground coffee."}
{"id": "d4", "title": "Tea ceremony", "text": "Matcha tea is whisked with hot water."}
`)
	writeFile(t, dir, "queries.jsonl", `{"id": "q1", "text": "sunlight electricity"}
{"id": "q2", "text": "hot water coffee"}
{"id": "q3", "text": "wind generator"}
`)
	writeFile(t, dir, "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td4\t1\nq3\td2\t2\nq3\td1\t1\n")

	docs, err := LoadCorpus(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := LoadQueries(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := LoadQrels(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	col, err := IndexDocs(context.Background(), docs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if col.Docs != 4 || col.Chunks != 4 {
		t.Errorf("indexed %d docs, %d chunks; want 4, 4", col.Docs, col.Chunks)
	}
	rep, err := Run(context.Background(), col, queries, qrels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rep.Results {
		for _, d := range r.Run {
			got[r.QueryID] = append(got[r.QueryID], d.DocID)
		}
	}
	// Only documents sharing a term match.
	wantRuns := map[string][]string{"q1": {"d1"}, "q2": {"d3", "d4"}, "q3": {"d2"}}
	if !reflect.DeepEqual(got, wantRuns) {
		t.Fatalf("runs %v, want %v", got, wantRuns)
	}
	// q1: d1 at rank 1 (d2's grade 0 is ignored): nDCG 1, recall 1, RR 1.
	// q2: d4 at rank 2: nDCG = (1/log2(3))/1 = 0.6309, recall 1, RR 1/2.
	// q3: d2 (grade 2) at rank 1, d1 (grade 1) missing: DCG = 2,
	//     IDCG = 2 + 1/log2(3): nDCG = 0.7602, recall 1/2, RR 1.
	// Means: nDCG 0.7970, recall (1+1+0.5)/3 = 0.8333, MRR 2.5/3 = 0.8333.
	want := Scores{
		NDCG10:    (1 + 1/log2of3 + 2/(2+1/log2of3)) / 3,
		Recall10:  2.5 / 3,
		Recall100: 2.5 / 3,
		MRR10:     2.5 / 3,
		Hit1:      2.0 / 3, // q1 and q3
		Hit5:      1,
	}
	if rep.Queries != 3 || !nearScores(rep.Scores, want) {
		t.Errorf("%d queries, %+v; want 3, %+v", rep.Queries, rep.Scores, want)
	}
}

// TestMarkdown checks that a file counts once, at the rank of its best
// chunk, and is named by its slash-separated path relative to the folder.
func TestMarkdown(t *testing.T) {
	dir := t.TempDir()
	// a.md has two sections about rockets: both outrank b.md's single
	// mention, so chunk ranks are a, a, b and file ranks a, b.
	writeFile(t, dir, "a.md", "# Rockets\n\nRocket rocket rocket engine.\n\n## Rocket fuel\n\nRocket fuel burns.\n")
	writeFile(t, dir, "b.md", "# Boats\n\nA boat with a rocket on deck and sails.\n")
	writeFile(t, dir, "sub/c.md", "# Cars\n\nCars drive on roads.\n")
	writeFile(t, dir, "notes.txt", "rocket rocket rocket\n")
	writeFile(t, dir, ".hidden/d.md", "# Rocket\n\nrocket\n")
	queries := writeFile(t, t.TempDir(), "queries.jsonl", `{"id": "1", "text": "rocket"}
{"id": "2", "text": "cars roads"}
`)
	qrelsPath := writeFile(t, t.TempDir(), "qrels.tsv", "1\tb.md\t1\n2\tsub/c.md\t1\n")

	col, err := IndexMarkdown(context.Background(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if col.Docs != 3 || col.Chunks != 4 || len(col.Skipped) != 0 {
		t.Errorf("indexed %d files, %d chunks, skipped %v; want 3, 4, none", col.Docs, col.Chunks, col.Skipped)
	}
	resp, err := col.engine.SearchDocs(contract.SearchRequest{Query: "rocket", TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	var chunkPaths []string
	for _, h := range resp.Hits {
		chunkPaths = append(chunkPaths, h.Path)
	}
	if want := []string{"a.md", "a.md", "b.md"}; !reflect.DeepEqual(chunkPaths, want) {
		t.Fatalf("chunk hits %v, want %v", chunkPaths, want)
	}
	files, err := col.Search("rocket", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].DocID != "a.md" || files[0].Score != resp.Hits[0].Score ||
		files[1].DocID != "b.md" || files[1].Score != resp.Hits[2].Score {
		t.Fatalf("files %v, want a.md at its best chunk's score %v, then b.md at %v", files, resp.Hits[0].Score, resp.Hits[2].Score)
	}
	if one, _ := col.Search("rocket", 1); len(one) != 1 || one[0].DocID != "a.md" {
		t.Errorf("k = 1: %v, want a.md only", one)
	}

	qs, err := LoadQueries(queries)
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := LoadQrels(qrelsPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), col, qs, qrels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Query 1: b.md at file rank 2 (chunk rank 3): nDCG 1/log2(3), RR 1/2.
	// Query 2: sub/c.md at rank 1. Means: nDCG (0.6309+1)/2, MRR 0.75.
	want := Scores{NDCG10: (1/log2of3 + 1) / 2, Recall10: 1, Recall100: 1, MRR10: 0.75, Hit1: 0.5, Hit5: 1}
	if rep.Queries != 2 || !nearScores(rep.Scores, want) {
		t.Errorf("%d queries, %+v; want 2, %+v", rep.Queries, rep.Scores, want)
	}
}

func TestMarkdownSkipsInvalid(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ok.md", "# Fine\n\ntext\n")
	writeFile(t, dir, "bad.md", "# Bad\n\n\xff\xfe\n")
	writeFile(t, dir, "blank.md", "\n\n")
	col, err := IndexMarkdown(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if col.Docs != 1 || len(col.Skipped) != 1 {
		t.Errorf("indexed %d, skipped %v; want 1 indexed, bad.md skipped", col.Docs, col.Skipped)
	}
	if _, err := IndexMarkdown(context.Background(), filepath.Join(dir, "missing"), 0); err == nil {
		t.Error("missing folder: want an error")
	}
}
