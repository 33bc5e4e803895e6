package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// pipeQuery is one of node-postgres's pipelining queries.
type pipeQuery struct {
	sql     string
	arg     func(i int) any // nil: the query takes no argument
	prepare bool            // run as a named prepared statement
}

var pipeQueries = map[string]pipeQuery{
	"select1": {sql: "SELECT 1"},
	"param":   {sql: "SELECT $1::int", arg: func(i int) any { return int32(i) }},
	"cached": {sql: "SELECT id FROM bench_rows WHERE id = $1", prepare: true,
		arg: func(i int) any { return int32(i%rowsTableSize + 1) }},
}

// batchNoter is implemented by a driver connection whose QueryIntBatch
// does not pipeline yet, to say how it runs instead.
type batchNoter interface{ batchNote() string }

// pipelineCases: on one connection, queries one after another (serial),
// in pipelined batches of 10 or 1000 (pgx's Batch; the floor writes them
// all at once), or from N goroutines sharing the connection (concN). With
// RTT, the point query also runs as 1000 goroutines against a Batch of
// 1000 (step D's figure).
func pipelineCases(sz sizes, rtt bool) []*benchCase {
	modes, prefix := sz.pipeModes, "pipeline/"
	if rtt {
		modes, prefix = sz.rttModes, "rtt/pipeline/"
	}
	var cs []*benchCase
	for _, qname := range sz.pipeQueries {
		q := pipeQueries[qname]
		qmodes := modes
		if rtt && qname == "cached" {
			qmodes = append(append([]string(nil), modes...), "batch1000", "conc1000", "own1000")
		}
		for _, mode := range qmodes {
			cs = append(cs, &benchCase{
				workload: map[bool]string{false: "pipeline", true: "rtt"}[rtt],
				name:     prefix + qname + "/" + mode, unit: "query", rtt: rtt,
				open: func(ctx context.Context, e *env, d *driver, dsn string) (*task, error) {
					return openPipeline(ctx, d, dsn, q, mode)
				},
			})
		}
	}
	return cs
}

func openPipeline(ctx context.Context, d *driver, dsn string, q pipeQuery, mode string) (*task, error) {
	if mode == "own1000" {
		return openOwn1000(ctx, d, dsn, q)
	}
	if workers, ok := strings.CutPrefix(mode, "conc"); ok {
		n, err := strconv.Atoi(workers)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad pipeline mode %q", mode)
		}
		return openConcurrent(ctx, d, dsn, q, n, false)
	}
	c, err := d.connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	t, err := pipelineTask(ctx, c, q, mode)
	if err != nil {
		c.Close()
		return nil, err
	}
	t.close = func() { c.Close() }
	return t, nil
}

func pipelineTask(ctx context.Context, c conn, q pipeQuery, mode string) (*task, error) {
	sql := q.sql
	if q.prepare {
		var err error
		if sql, err = c.Prepare(ctx, "bench_cached", q.sql); err != nil {
			return nil, err
		}
	}
	switch mode {
	case "serial":
		return &task{run: seq(func(ctx context.Context, i int) error { return queryInt(ctx, c, sql, q, i) })}, nil
	case "batch10", "batch1000":
		b, ok := c.(intBatcher)
		if !ok {
			return nil, errUnsupported
		}
		size, _ := strconv.Atoi(strings.TrimPrefix(mode, "batch"))
		t := batchTask(b.QueryIntBatch, sql, q, size)
		if n, ok := c.(batchNoter); ok {
			t.note = n.batchNote()
		}
		return t, nil
	}
	return nil, fmt.Errorf("bad pipeline mode %q", mode)
}

// openOwn1000 runs 1000 point queries the way each driver offers for
// them: pgline from 1000 goroutines sharing one Conn, pgx as one Batch of
// 1000 in one transaction under one Sync. Its pgline / pgx column is step
// D's figure, measured round by round (batch1000 and conc1000 run the two
// sides as separate cases, minutes apart on a noisy machine). The floor
// sends what keeps the 1000 queries independent, as pgline's are, with
// the fewest messages (BEGIN and COMMIT after each, one Sync), so the
// pgline / floor column is pgline's distance from the wire's floor for
// the same guarantee.
func openOwn1000(ctx context.Context, d *driver, dsn string, q pipeQuery) (*task, error) {
	switch d.name {
	case namePgline:
		t, err := openConcurrent(ctx, d, dsn, q, 1000, false)
		if t != nil {
			t.note = "1000 goroutines sharing one Conn, pipelined automatically"
		}
		return t, err
	case nameFloor:
		t, err := openConcurrent(ctx, d, dsn, q, 1000, true)
		if t != nil {
			t.note = "1000 queries in one write, each committed on its own (BEGIN and COMMIT after each, one Sync)"
		}
		return t, err
	case namePgx:
		t, err := openPipeline(ctx, d, dsn, q, "batch1000")
		if t != nil {
			t.note = "one Batch of 1000 (one transaction, one Sync)"
		}
		return t, err
	}
	return nil, errUnsupported
}

// batchTask runs n queries as n/size batches of size.
func batchTask(send func(context.Context, string, []any, []int32) error, sql string, q pipeQuery, size int) *task {
	args := make([]any, size)
	out := make([]int32, size)
	return &task{step: size, noLat: true, run: func(ctx context.Context, n int, _ []time.Duration) error {
		for i := 0; i < n; i += size {
			for j := range args {
				if q.arg != nil {
					args[j] = q.arg(i + j)
				}
			}
			if err := send(ctx, sql, args, out); err != nil {
				return err
			}
		}
		return nil
	}}
}

// openConcurrent runs the query from workers goroutines on one shared
// connection. The floor shares its connection through a reader floor.Pipe, the
// least machinery that hands each goroutine its own reply; with
// batchFloor it sends pipelined batches of workers queries from one
// goroutine instead, each committing on its own (BEGIN and COMMIT after
// it, one Sync per batch): the wire's floor for that many independent
// queries in flight, with no goroutines to serve.
func openConcurrent(ctx context.Context, d *driver, dsn string, q pipeQuery, workers int, batchFloor bool) (*task, error) {
	if d.name == nameFloor && batchFloor {
		c, err := d.connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		t := batchTask(c.(*floorConn).QueryIntIndependent, q.sql, q, workers)
		t.note = fmt.Sprintf("pipelined batches of %d on one connection, each query committed on its own", workers)
		t.close = func() { c.Close() }
		return t, nil
	}
	if d.name == nameFloor {
		c, err := d.connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		fc := c.(*floorConn)
		for _, sql := range []string{q.sql, "BEGIN", "COMMIT"} {
			if _, err := fc.stmt(sql); err != nil {
				c.Close()
				return nil, err
			}
		}
		p, err := newFloorPipe(fc)
		if err != nil {
			c.Close()
			return nil, err
		}
		run, stop := concurrent(workers, func(ctx context.Context, i int) error {
			var args []any
			if q.arg != nil {
				args = []any{q.arg(i)}
			}
			n, err := p.Discard(ctx, q.sql, args...)
			if err != nil {
				return err
			}
			return expectRows(n, 1)
		})
		return &task{
			workers: workers,
			run:     run,
			note:    fmt.Sprintf("%d goroutines sharing one connection: a FIFO of waiters, one writer at a time, one reader goroutine handing each reply to its caller, whose ctx is kept; each query committed on its own", workers),
			close:   func() { stop(); p.Close() },
		}, nil
	}
	c, note, err := d.openShared(ctx, dsn)
	if err != nil {
		return nil, err
	}
	sql := q.sql
	if q.prepare {
		if sql, err = c.Prepare(ctx, "bench_cached", q.sql); err != nil {
			c.Close()
			return nil, err
		}
	}
	run, stop := concurrent(workers, func(ctx context.Context, i int) error { return queryInt(ctx, c, sql, q, i) })
	return &task{workers: workers, run: run, note: note, close: func() { stop(); c.Close() }}, nil
}

// queryInt runs one query returning one int4 and checks that one row came.
func queryInt(ctx context.Context, c conn, sql string, q pipeQuery, i int) error {
	var args []any
	if q.arg != nil {
		args = []any{q.arg(i)}
	}
	if f, ok := c.(discarder); ok {
		n, err := f.Discard(ctx, sql, args...)
		if err != nil {
			return err
		}
		return expectRows(n, 1)
	}
	r, err := c.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer r.Close()
	var v int32
	n := 0
	for r.Next() {
		if err := r.Scan(&v); err != nil {
			return err
		}
		n++
	}
	if err := r.Err(); err != nil {
		return err
	}
	return expectRows(n, 1)
}
