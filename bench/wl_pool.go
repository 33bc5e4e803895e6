package main

import (
	"context"
	"fmt"
	"time"
)

const wideSQL = `SELECT id, grp, name, email, city, country, zip, phone, amount, qty, active, created, updated, note
	FROM bench_wide WHERE grp = $1`

// wideVals receives one bench_wide row (14 columns).
type wideVals struct {
	id, grp                                int32
	name, email, city, country, zip, phone string
	amount                                 float64
	qty                                    int64
	active                                 bool
	created, updated                       time.Time
	note                                   string
}

// poolCases: one connection or a pool of 5; all requests at once
// (goroutines: the "Promise.all" case) or one at a time (the "for await"
// case); 50 or 500 requests of a 14-column, 40-row query (Mapepire vs
// ODBC). Each request's latency includes its queueing.
func poolCases(sz sizes, rtt bool) []*benchCase {
	prefix, workload := "pool/", "pool"
	if rtt {
		prefix, workload = "rtt/pool/", "rtt"
	}
	var cs []*benchCase
	for _, size := range []int{1, 5} {
		for _, mode := range []string{"all", "seq"} {
			for _, n := range sz.poolCounts {
				if sz.quick && !quickPool(rtt, size, mode, n) {
					continue
				}
				shape := "conn1"
				if size > 1 {
					shape = fmt.Sprintf("pool%d", size)
				}
				cs = append(cs, &benchCase{
					workload: workload, name: fmt.Sprintf("%s%s/%s/%d", prefix, shape, mode, n),
					unit: "request", rtt: rtt, perRequest: true,
					open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
						return openPoolTask(ctx, d, dsn, size, mode, n, quickBursts(sz, rtt, size, n))
					},
				})
			}
		}
	}
	// Step D's figure: 500 concurrent 10-row queries on a pool of 5 (a
	// README row with and without RTT, so -quick runs it too).
	cs = append(cs, &benchCase{
		workload: workload, name: prefix + "pool5/all/500/rows10",
		unit: "request", rtt: rtt, perRequest: true,
		open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
			c, note, err := d.openPool(ctx, dsn, 5)
			if err != nil {
				return nil, err
			}
			op := func(ctx context.Context, i int) error {
				return selectRows(ctx, c, rows10SQL, 10, int32(i%(rowsTableSize-10)+1))
			}
			return &task{run: allAtOnce(op), fixedN: 500, note: note, close: func() { c.Close() }}, nil
		},
	})
	return cs
}

// quickBursts says whether a case of n requests at once on size
// connections runs as calibrated bursts (burstTask) rather than as one
// fixed burst: with -quick, for 500 requests on one connection with RTT,
// where a burst takes up to 1.5 s per driver (one round trip at a time
// behind a mutex) and the runner's three warm-ups of a fixed count, there
// for pools to reach their size, would be a quarter of -quick's minute.
// One connection has no pool to grow.
func quickBursts(sz sizes, rtt bool, size, n int) bool {
	return sz.quick && rtt && size == 1 && n >= 500
}

// burstTask runs op as bursts of size requests started together
// (allAtOnce). Normally the case is exactly one burst (fixedN). With
// calibrated, the runner sizes it like any case instead, in multiples of
// size: one warm-up burst, then bursts one after another, each started
// together, as many as fill the target (one, unless a driver runs a
// burst in under half the target); each latency runs from its burst's
// start.
func burstTask(op func(context.Context, int) error, size int, calibrated bool) *task {
	all := allAtOnce(op)
	if !calibrated {
		return &task{run: all, fixedN: size}
	}
	return &task{step: size, run: func(ctx context.Context, n int, lat []time.Duration) error {
		for i := 0; i < n; i += size {
			var l []time.Duration
			if lat != nil {
				l = lat[i : i+size]
			}
			if err := all(ctx, size, l); err != nil {
				return err
			}
		}
		return nil
	}}
}

// quickPool says which 14-column pool cases -quick runs: those of 50
// requests (with RTT only all at once: one at a time is 50 round trips
// per driver and run), and of the 500-request ones only the README's
// figure, 500 at once on one connection with RTT.
func quickPool(rtt bool, size int, mode string, n int) bool {
	if n != 500 {
		return !rtt || mode == "all"
	}
	return rtt && size == 1 && mode == "all"
}

// rows10SQL reads 10 consecutive rows of bench_rows.
const rows10SQL = `SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id >= $1 AND id < $1 + 10`

// openPoolTask opens a case of n requests of the 14-column query;
// calibrated applies to all at once (burstTask).
func openPoolTask(ctx context.Context, d *driver, dsn string, size int, mode string, n int, calibrated bool) (*task, error) {
	var c conn
	var note string
	var err error
	if size == 1 {
		c, note, err = d.openShared(ctx, dsn)
	} else {
		c, note, err = d.openPool(ctx, dsn, size)
	}
	if err != nil {
		return nil, err
	}
	op := func(ctx context.Context, i int) error { return selectWide(ctx, c, int32(i%wideGroups)) }
	t := &task{run: seq(op), fixedN: n}
	if mode == "all" {
		t = burstTask(op, n, calibrated)
	}
	t.note, t.close = note, func() { c.Close() }
	return t, nil
}

// selectWide reads one group of bench_wide.
func selectWide(ctx context.Context, c conn, grp int32) error {
	if f, ok := c.(wideDecoder); ok {
		n, err := f.DecodeWide(ctx, grp)
		if err != nil {
			return err
		}
		return expectRows(n, wideGroupRows)
	}
	if f, ok := c.(discarder); ok {
		n, err := f.Discard(ctx, wideSQL, grp)
		if err != nil {
			return err
		}
		return expectRows(n, wideGroupRows)
	}
	r, err := c.Query(ctx, wideSQL, grp)
	if err != nil {
		return err
	}
	defer r.Close()
	var v wideVals
	dest := []any{&v.id, &v.grp, &v.name, &v.email, &v.city, &v.country, &v.zip, &v.phone,
		&v.amount, &v.qty, &v.active, &v.created, &v.updated, &v.note} // once (see selectRows)
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
	return expectRows(n, wideGroupRows)
}
