package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Doc is one corpus document: a line of corpus.jsonl.
type Doc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Query is one judged query: a line of queries.jsonl.
type Query struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Qrels are relevance judgments: query ID → doc ID → grade. Only positive
// grades are kept; a judged non-relevant document counts as unjudged, which
// changes no figure computed here.
type Qrels map[string]map[string]int

// LoadCorpus reads a corpus.jsonl file: one {"id", "title", "text"} object
// a line. IDs must be non-empty and unique.
func LoadCorpus(path string) ([]Doc, error) {
	var docs []Doc
	seen := map[string]bool{}
	err := readJSONL(path, func(data []byte) error {
		var d Doc
		if err := json.Unmarshal(data, &d); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New("document without an id")
		}
		if seen[d.ID] {
			return fmt.Errorf("document id %q repeats", d.ID)
		}
		seen[d.ID] = true
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// LoadQueries reads a queries.jsonl file: one {"id", "text"} object a line,
// kept in file order. IDs must be non-empty and unique.
func LoadQueries(path string) ([]Query, error) {
	var qs []Query
	seen := map[string]bool{}
	err := readJSONL(path, func(data []byte) error {
		var q Query
		if err := json.Unmarshal(data, &q); err != nil {
			return err
		}
		if q.ID == "" {
			return errors.New("query without an id")
		}
		if seen[q.ID] {
			return fmt.Errorf("query id %q repeats", q.ID)
		}
		seen[q.ID] = true
		qs = append(qs, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return qs, nil
}

// readJSONL calls fn with every non-blank line of the file at path.
func readJSONL(path string, fn func(data []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		data, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(data)) > 0 {
			if ferr := fn(data); ferr != nil {
				return fmt.Errorf("%s:%d: %w", path, n, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// LoadQrels reads judgments: tab-separated "query-id doc-id grade" lines
// (BEIR's qrels.tsv, with or without its "query-id corpus-id score" header),
// or TREC's four columns "query-id iteration doc-id grade", tab- or
// space-separated. A grade <= 0 marks a non-relevant document and is
// dropped; a repeated pair keeps its last grade.
func LoadQrels(path string) (Qrels, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	qrels := Qrels{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var fields []string
		if strings.Contains(line, "\t") {
			fields = strings.Split(line, "\t")
			for i := range fields {
				fields[i] = strings.TrimSpace(fields[i])
			}
		} else {
			fields = strings.Fields(line)
		}
		var qid, did, grade string
		switch len(fields) {
		case 3:
			qid, did, grade = fields[0], fields[1], fields[2]
		case 4:
			qid, did, grade = fields[0], fields[2], fields[3]
		default:
			return nil, fmt.Errorf("%s:%d: want 3 or 4 columns (query-id, doc-id, grade), got %d", path, n, len(fields))
		}
		g, err := strconv.Atoi(grade)
		if err != nil {
			if n == 1 {
				continue // a header such as "query-id corpus-id score"
			}
			return nil, fmt.Errorf("%s:%d: grade %q is not an integer", path, n, grade)
		}
		if qid == "" || did == "" {
			return nil, fmt.Errorf("%s:%d: empty query or doc id", path, n)
		}
		if g <= 0 {
			if rel := qrels[qid]; rel != nil {
				delete(rel, did)
			}
			continue
		}
		rel := qrels[qid]
		if rel == nil {
			rel = map[string]int{}
			qrels[qid] = rel
		}
		rel[did] = g
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	for qid, rel := range qrels {
		if len(rel) == 0 {
			delete(qrels, qid)
		}
	}
	return qrels, nil
}
