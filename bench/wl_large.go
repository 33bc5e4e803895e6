package main

import (
	"context"
	"fmt"
)

// largeCases: one row holding a 4 B, 5 MiB or 50 MiB bytea, or a 5 MiB or
// 50 MiB text, scanned into []byte or string (tedious's varbinary and
// nvarchar cases). The runner also samples the peak heap.
func largeCases(sz sizes) []*benchCase {
	var cs []*benchCase
	for _, v := range largeValues {
		if v.big && !sz.largeBig {
			continue
		}
		col := "t"
		if v.bytea {
			col = "b"
		}
		sql := fmt.Sprintf("SELECT %s FROM bench_large WHERE k = $1", col)
		cs = append(cs, &benchCase{
			workload: "large", name: "large/" + v.key, unit: "query", peakHeap: true,
			open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
				return openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
					return func(ctx context.Context, _ int) error {
						return selectLarge(ctx, c, sql, v.key, v.bytea, v.size)
					}
				})
			},
		})
	}
	return cs
}

// selectLarge reads one value and checks its size.
func selectLarge(ctx context.Context, c conn, sql, key string, bytea bool, size int) error {
	if f, ok := c.(discarder); ok {
		n, err := f.Discard(ctx, sql, key)
		if err != nil {
			return err
		}
		return expectRows(n, 1)
	}
	r, err := c.Query(ctx, sql, key)
	if err != nil {
		return err
	}
	defer r.Close()
	n, got := 0, 0
	for r.Next() {
		if bytea {
			var b []byte
			err = r.Scan(&b)
			got = len(b)
		} else {
			var s string
			err = r.Scan(&s)
			got = len(s)
		}
		if err != nil {
			return err
		}
		n++
	}
	if err := r.Err(); err != nil {
		return err
	}
	if err := expectRows(n, 1); err != nil {
		return err
	}
	if got != size {
		return fmt.Errorf("value of %d bytes, want %d", got, size)
	}
	return nil
}
