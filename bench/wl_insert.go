package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// largeDoc is the Ruby Mongo driver's LARGE document as a row: a URL, an
// integer, a timestamp, the meta/page-structure fields as jsonb and the
// 280 harvested words as text[].
type largeDoc struct {
	url   string
	ts    time.Time
	meta  string
	words []string
}

func newLargeDoc() largeDoc {
	words := make([]string, 280)
	stems := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	for i := range words {
		words[i] = fmt.Sprintf("%s%d", stems[i%len(stems)], i)
	}
	meta, _ := json.Marshal(map[string]any{
		"meta": map[string]any{
			"description": "A page harvested by the crawler, kept for the benchmark",
			"keywords":    []string{"postgres", "driver", "benchmark", "pipeline"},
			"robots":      "index,follow", "language": "en",
		},
		"page": map[string]any{
			"links": 126, "images": 14, "headings": 22, "paragraphs": 48,
			"scripts": 6, "stylesheets": 3, "forms": 1, "tables": 2,
		},
	})
	return largeDoc{
		url:   "https://www.example.com/articles/2024/postgres-driver-pipelining?ref=bench",
		ts:    time.Date(2024, 5, 17, 12, 30, 0, 0, time.UTC),
		meta:  string(meta),
		words: words,
	}
}

// insertKinds are the document shapes: SMALL (a key), MEDIUM (integer,
// number, boolean, array of 2 strings) and LARGE.
var insertKinds = []struct {
	kind, table, indexCol, sql string
}{
	{"small", "bench_ins_small", "k", `INSERT INTO bench_ins_small (k) VALUES ($1)`},
	{"medium", "bench_ins_medium", "i", `INSERT INTO bench_ins_medium (i, f, b, tags) VALUES ($1, $2, $3, $4)`},
	{"large", "bench_ins_large", "words", `INSERT INTO bench_ins_large (url, words, ts, meta, body) VALUES ($1, $2, $3, $4::jsonb, $5)`},
}

// insertCases: one INSERT per operation, with and without an index on the
// integer column (the Ruby Mongo driver's standard_benchmark).
func insertCases(sizes) []*benchCase {
	var cs []*benchCase
	for _, k := range insertKinds {
		for _, indexed := range []bool{false, true} {
			name := "insert/" + k.kind
			if indexed {
				name += "+index"
			}
			cs = append(cs, &benchCase{
				workload: "insert", name: name, unit: "insert",
				setup: func(ctx context.Context, e *env) error {
					stmts := []string{
						"TRUNCATE " + k.table,
						"DROP INDEX IF EXISTS " + k.table + "_idx",
					}
					if indexed {
						stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s_idx ON %s (%s)", k.table, k.table, k.indexCol))
					}
					for _, s := range stmts {
						if _, err := e.admin.Exec(ctx, s); err != nil {
							return err
						}
					}
					return nil
				},
				open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
					tags := d.textArray([]string{"first tag", "second tag"})
					words := d.textArray(e.doc.words)
					return openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
						return func(ctx context.Context, i int) error {
							switch k.kind {
							case "small":
								return c.Exec(ctx, k.sql, int32(i))
							case "medium":
								return c.Exec(ctx, k.sql, int32(i), float64(i)*0.5, i%2 == 0, tags)
							default:
								return c.Exec(ctx, k.sql, e.doc.url, int32(i), e.doc.ts, e.doc.meta, words)
							}
						}
					})
				},
			})
		}
	}
	return cs
}
