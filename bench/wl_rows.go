package main

import (
	"context"
	"fmt"
	"time"
)

// rowVals receives one bench_rows row.
type rowVals struct {
	id      int32
	name    string
	score   float64
	created time.Time
	hash    string
	flag    bool
}

const rowsSQL = `SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id <= $1`

// rowsCases: SELECT of size rows scanned into typed variables, n runs in a
// row on one connection (tedious's select-many-rows).
func rowsCases(sz sizes) []*benchCase {
	var cs []*benchCase
	for _, size := range sz.rowCounts {
		cs = append(cs, &benchCase{
			workload: "rows", name: fmt.Sprintf("rows/%d", size), unit: "query",
			open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
				return openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
					return func(ctx context.Context, _ int) error {
						return selectRows(ctx, c, rowsSQL, size, int32(size))
					}
				})
			},
		})
	}
	return cs
}

// selectRows runs sql with arg, scans every row into rowVals and checks
// that want rows came back.
func selectRows(ctx context.Context, c conn, sql string, want int, arg any) error {
	if f, ok := c.(discarder); ok {
		n, err := f.Discard(ctx, sql, arg)
		if err != nil {
			return err
		}
		return expectRows(n, want)
	}
	r, err := c.Query(ctx, sql, arg)
	if err != nil {
		return err
	}
	defer r.Close()
	var v rowVals
	n := 0
	for r.Next() {
		if err := r.Scan(&v.id, &v.name, &v.score, &v.created, &v.hash, &v.flag); err != nil {
			return err
		}
		n++
	}
	if err := r.Err(); err != nil {
		return err
	}
	return expectRows(n, want)
}

// openSeq opens one connection and makes a sequential task of the
// operation mk builds on it.
func openSeq(ctx context.Context, d *driver, dsn string, mk func(conn) func(context.Context, int) error) (*task, error) {
	c, err := d.connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &task{run: seq(mk(c)), close: func() { c.Close() }}, nil
}
