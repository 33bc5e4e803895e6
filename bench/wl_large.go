package main

import (
	"context"
	"fmt"
	"io"
)

// largeCases: one row holding a 4 B, 5 MiB or 50 MiB bytea, or a 5 MiB or
// 50 MiB text, scanned into []byte or string (tedious's varbinary and
// nvarchar cases); the floor reads the value into a slice allocated for
// it. The /stream cases stream the value to a writer; the floor discards
// it. The runner also samples the peak heap. With -quick, a
// 50 MiB case runs one operation per driver (the target is far below one
// read), after one warm-up.
func largeCases(sz sizes) []*benchCase {
	var cs []*benchCase
	for _, v := range largeValues {
		if !sz.wantLarge(v.key, v.big) {
			continue
		}
		col := "t"
		if v.bytea {
			col = "b"
		}
		sql := fmt.Sprintf("SELECT %s FROM bench_large WHERE k = $1", col)
		cs = append(cs, &benchCase{
			workload: "large", name: "large/" + v.key, unit: "query", peakHeap: true, interleave: v.big && !sz.quick,
			open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
				t, err := openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
					return func(ctx context.Context, _ int) error {
						return selectLarge(ctx, c, sql, v.key, v.bytea, v.size)
					}
				})
				if t != nil && v.big && !sz.quick {
					t.minOps = 3
				}
				return t, err
			},
		})
		if v.size < 1<<20 {
			continue
		}
		cs = append(cs, &benchCase{
			workload: "large", name: "large/" + v.key + "/stream", unit: "query", peakHeap: true, interleave: v.big && !sz.quick,
			open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
				if d.name != namePgline && d.name != nameFloor {
					return nil, errUnsupported
				}
				t, err := openSeq(ctx, d, dsn, func(c conn) func(context.Context, int) error {
					return func(ctx context.Context, _ int) error {
						return streamLarge(ctx, c, sql, v.key, v.size)
					}
				})
				if t != nil && v.big && !sz.quick {
					t.minOps = 3
				}
				return t, err
			},
		})
	}
	return cs
}

// streamer is implemented by drivers that can stream one column's value
// to a writer without holding it (pgline's StreamTo).
type streamer interface {
	StreamValue(ctx context.Context, w io.Writer, sql string, args ...any) error
}

// streamLarge streams one value to a counting writer and checks its size.
func streamLarge(ctx context.Context, c conn, sql, key string, size int) error {
	if f, ok := c.(discarder); ok {
		n, err := f.Discard(ctx, sql, key)
		if err != nil {
			return err
		}
		return expectRows(n, 1)
	}
	s, ok := c.(streamer)
	if !ok {
		return errUnsupported
	}
	var w countWriter
	if err := s.StreamValue(ctx, &w, sql, key); err != nil {
		return err
	}
	if int(w) != size {
		return fmt.Errorf("streamed %d bytes, want %d", w, size)
	}
	return nil
}

// countWriter counts and discards what is written to it.
type countWriter int

func (w *countWriter) Write(p []byte) (int, error) {
	*w += countWriter(len(p))
	return len(p), nil
}

// valueReader is implemented by the floor, which cannot scan: it reads a
// one-column row's value into a slice allocated for it, as a driver
// scanning into []byte must.
type valueReader interface {
	ReadValue(ctx context.Context, sql string, args ...any) (int, error)
}

// selectLarge reads one value and checks its size.
func selectLarge(ctx context.Context, c conn, sql, key string, bytea bool, size int) error {
	if f, ok := c.(valueReader); ok {
		n, err := f.ReadValue(ctx, sql, key)
		if err != nil {
			return err
		}
		if n != size {
			return fmt.Errorf("value of %d bytes, want %d", n, size)
		}
		return nil
	}
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
