package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"

	_ "modernc.org/sqlite" // the pure-Go SQLite, registered as "sqlite"
)

// sqliteFTS is SQLite's FTS5 with its defaults (the unicode61 tokenizer,
// bm25() with every column weighted 1), over an in-memory database.
type sqliteFTS struct {
	db   *sql.DB
	stmt *sql.Stmt
}

func openSQLite(ctx context.Context, c *collection, _ Config) (engine, string, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, "", fmt.Errorf("open sqlite: %w", err)
	}
	// Every connection to :memory: is a database of its own: keep one.
	db.SetMaxOpenConns(1)
	s := &sqliteFTS{db: db}
	if err := s.load(ctx, c.Sections); err != nil {
		db.Close()
		return nil, "", err
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("read sqlite version: %w", err)
	}
	about := fmt.Sprintf("SQLite %s FTS5 (modernc.org/sqlite %s), bm25(), the query's terms OR-ed", version, moduleVersion("modernc.org/sqlite"))
	return pages{s: s, secs: c.Sections, depth: sectionDepth(c)}, about, nil
}

// load indexes every section, its rowid its index in secs plus one.
func (s *sqliteFTS) load(ctx context.Context, secs []section) error {
	if _, err := s.db.ExecContext(ctx, "CREATE VIRTUAL TABLE sections USING fts5(title, summary, heading, body)"); err != nil {
		return fmt.Errorf("create fts5 table: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin sqlite load: %w", err)
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, "INSERT INTO sections(rowid, title, summary, heading, body) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("prepare sqlite insert: %w", err)
	}
	for i, sec := range secs {
		if _, err := ins.ExecContext(ctx, i+1, sec.Title, sec.Summary, sec.Heading, sec.Body); err != nil {
			return fmt.Errorf("insert section %s into sqlite: %w", sec.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit sqlite load: %w", err)
	}
	s.stmt, err = s.db.PrepareContext(ctx, "SELECT rowid, bm25(sections) FROM sections WHERE sections MATCH ? ORDER BY bm25(sections) LIMIT ?")
	if err != nil {
		return fmt.Errorf("prepare sqlite search: %w", err)
	}
	return nil
}

func (s *sqliteFTS) sections(q string, n int) ([]hit, time.Duration, error) {
	start := time.Now()
	expr := ftsQuery(q)
	if expr == "" {
		return nil, time.Since(start), nil // no term: nothing matches
	}
	rows, err := s.stmt.Query(expr, n)
	if err != nil {
		return nil, time.Since(start), fmt.Errorf("search sqlite for %q: %w", expr, err)
	}
	defer rows.Close()
	var hits []hit
	for rows.Next() {
		var rowid int
		var bm25 float64
		if err := rows.Scan(&rowid, &bm25); err != nil {
			return nil, time.Since(start), fmt.Errorf("read sqlite hit: %w", err)
		}
		// bm25() is lower for a better match; the bench wants higher.
		hits = append(hits, hit{idx: rowid - 1, score: -bm25})
	}
	if err := rows.Err(); err != nil {
		return nil, time.Since(start), fmt.Errorf("read sqlite hits: %w", err)
	}
	return hits, time.Since(start), nil
}

func (s *sqliteFTS) close() error { return s.db.Close() }

// ftsQuery turns free text into an FTS5 query that matches a row holding
// any of its words: each distinct word (a run of letters, numbers and
// marks, as the unicode61 tokenizer cuts them) quoted as a string, so that
// no word is read as an operator (OR, NOT, NEAR), a column filter or a
// prefix, and the strings OR-ed. It returns "" when q has no word.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
	seen := make(map[string]bool, len(words))
	var b strings.Builder
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		if b.Len() > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(`"` + strings.ReplaceAll(w, `"`, `""`) + `"`)
	}
	return b.String()
}
