package main

import (
	"context"
	"fmt"
	"time"
)

// sweepCases: point lookups from G goroutines at once through a pool of
// 4 or 16 connections, G from 1 to 5,000, so that the throughput and p99
// as concurrency grows past a pool's capacity are in every report; and
// through a pool of 100, the size pgxpool needs to keep up, from G=100.
// Each goroutine runs its lookups back to back; a latency includes the
// wait for a connection. Through the delay proxy (rtt), G starts at 100,
// and -quick leaves it out.
func sweepCases(sz sizes, rtt bool) []*benchCase {
	warmUp := time.Second
	if sz.quick {
		warmUp = 0 // one warm-up run: -quick stays about a minute
	}
	gs, pools := []int{1, 10, 100, 1000, 5000}, []int{4, 16, 100}
	if sz.quick {
		gs, pools = []int{1, 100, 1000}, []int{4}
	}
	prefix, workload := "sweep/", "sweep"
	if rtt {
		prefix, workload = "rtt/sweep/", "rtt"
		gs = []int{100, 1000, 5000}
		if sz.quick {
			return nil // -quick stays about a minute: the sweep without RTT shows the curve
		}
	}
	var cs []*benchCase
	for _, size := range pools {
		for _, g := range gs {
			if size == 100 && g < 100 {
				continue
			}
			cs = append(cs, &benchCase{
				workload: workload, name: fmt.Sprintf("%spool%d/G%d", prefix, size, g), unit: "query", rtt: rtt, whole: true,
				open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
					c, note, err := d.openPool(ctx, dsn, size)
					if err != nil {
						return nil, err
					}
					op := func(ctx context.Context, i int) error {
						return selectRows(ctx, c, pointSQL, 1, int32(i%rowsTableSize+1))
					}
					run, stop := concurrent(g, op)
					// Warm up for a second at least: pools that open
					// connections as load needs them (in the background:
					// pgline's, pgxpool) reach their size, and every
					// connection has the statement prepared and its
					// backend has run it, before calibration. A pool of 100
					// takes most of that second here; measured with fewer
					// connections open and backends cold, its rounds were
					// of 100 lookups, bursts that spent most of their time
					// opening and warming backends (0.08–0.14× the floor).
					for end := time.Now().Add(warmUp); ; {
						if err := run(ctx, 4*max(g, size), nil); err != nil {
							stop()
							c.Close()
							return nil, err
						}
						if time.Now().After(end) {
							break
						}
					}
					// n a multiple of G: every goroutine has lookups to run.
					return &task{run: run, step: g, note: note, close: func() { stop(); c.Close() }}, nil
				},
			})
		}
	}
	return cs
}
