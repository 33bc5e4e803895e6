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
	cs = append(cs, &benchCase{
		workload: "rows", name: fmt.Sprintf("rows/struct%d", structRows), unit: "query",
		open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
			c, err := d.connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			sc, ok := c.(structCollector)
			if !ok {
				c.Close()
				return nil, errUnsupported
			}
			return &task{run: seq(func(ctx context.Context, _ int) error {
				n, err := sc.CollectStructs(ctx, rowsSQL, structRows)
				if err != nil {
					return err
				}
				return expectRows(n, structRows)
			}), close: func() { c.Close() }}, nil
		},
	})
	return cs
}

// structRows is the size of the rows/struct case.
const structRows = 1000

// rowStruct is a bench_rows row for the drivers' struct row functions,
// which match fields to columns by db tag.
type rowStruct struct {
	ID      int32     `db:"id"`
	Name    string    `db:"name"`
	Score   float64   `db:"score"`
	Created time.Time `db:"created"`
	Hash    string    `db:"hash"`
	Flag    bool      `db:"flag"`
}

// structCollector is implemented by drivers with pgx-style row functions:
// CollectStructs runs sql with arg and collects every row into a
// []rowStruct by column name (CollectRows with RowToStructByName),
// returning how many it got.
type structCollector interface {
	CollectStructs(ctx context.Context, sql string, arg any) (int, error)
}

// selectRows runs sql with arg, scans every row into rowVals and checks
// that want rows came back.
func selectRows(ctx context.Context, c conn, sql string, want int, arg any) error {
	if f, ok := c.(rowsDecoder); ok {
		n, err := f.DecodeRows(ctx, sql, arg)
		if err != nil {
			return err
		}
		return expectRows(n, want)
	}
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
	// Built once: a variadic call through the rows interface would
	// allocate the slice for every row, a cost of the harness, not of
	// the driver.
	dest := []any{&v.id, &v.name, &v.score, &v.created, &v.hash, &v.flag}
	n := 0
	for r.Next() {
		if err := r.Scan(dest...); err != nil {
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
