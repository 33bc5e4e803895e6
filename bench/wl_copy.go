package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgline/pgline"
)

// copyColumns are the columns of bench_copy: int4, text, float8,
// timestamptz, bool.
var copyColumns = []string{"a", "b", "c", "d", "e"}

// copyCases: one COPY FROM STDIN of 1,000,000 rows per operation (with
// -quick too, as the README's row: one operation per driver after one
// warm-up, well under a second each), from a row iterator, through the driver's bulk-copy API
// (pgline CopyFrom, pgx CopyFrom; both binary). The table is unlogged, so
// that the server's WAL does not hide the clients' cost, and truncated
// before each COPY (inside the measured loop, outside the latency).
func copyCases(sz sizes) []*benchCase {
	const rows = 1_000_000
	return []*benchCase{{
		workload: "copy", name: fmt.Sprintf("copy/%d", rows), unit: "copy", peakHeap: true,
		setup: func(ctx context.Context, e *env) error {
			_, err := e.admin.Exec(ctx, "DROP TABLE IF EXISTS bench_copy; CREATE UNLOGGED TABLE bench_copy (a int4, b text, c float8, d timestamptz, e bool)")
			return err
		},
		open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
			if d.name != namePgline && d.name != namePgx {
				return nil, errUnsupported
			}
			c, err := d.connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			var copyFrom func(ctx context.Context, next func() ([]any, error)) (int64, error)
			switch cc := c.(type) {
			case *pglineConn:
				copyFrom = func(ctx context.Context, next func() ([]any, error)) (int64, error) {
					return cc.c.CopyFrom(ctx, pgline.Identifier{"bench_copy"}, copyColumns, pgline.CopyFromFunc(next))
				}
			case *pgxConn:
				copyFrom = func(ctx context.Context, next func() ([]any, error)) (int64, error) {
					return cc.c.CopyFrom(ctx, pgx.Identifier{"bench_copy"}, copyColumns, pgx.CopyFromFunc(next))
				}
			default:
				c.Close()
				return nil, errUnsupported
			}
			run := func(ctx context.Context, n int, lat []time.Duration) error {
				for i := range n {
					if err := c.Exec(ctx, "TRUNCATE bench_copy"); err != nil {
						return err
					}
					t0 := time.Now()
					got, err := copyFrom(ctx, copyRowSource(rows))
					if err != nil {
						return err
					}
					if got != int64(rows) {
						return fmt.Errorf("copied %d rows, want %d", got, rows)
					}
					if lat != nil {
						lat[i] = time.Since(t0)
					}
				}
				return nil
			}
			return &task{run: run, close: func() { c.Close() }}, nil
		},
	}}
}

// copyRowSource returns an iterator over n rows, reusing one slice.
func copyRowSource(n int) func() ([]any, error) {
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	row := make([]any, 5)
	i := 0
	return func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		row[0], row[1], row[2], row[3], row[4] = int32(i), "row "+strconv.Itoa(i), float64(i)*0.25, epoch.Add(time.Duration(i)*time.Millisecond), i%2 == 0
		return row, nil
	}
}
