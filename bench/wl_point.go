package main

import "context"

const pointSQL = `SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id = $1`

// pointCases: a point select by primary key, sequential, one connection
// (the Ruby Mongo driver's find_one benchmark). Ids cycle through the
// table so every query reads a different row.
func pointCases(sizes) []*benchCase {
	return []*benchCase{{
		workload: "point", name: "point", unit: "query",
		open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
			return openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
				return func(ctx context.Context, i int) error {
					return selectRows(ctx, c, pointSQL, 1, int32(i%rowsTableSize+1))
				}
			})
		},
	}}
}
