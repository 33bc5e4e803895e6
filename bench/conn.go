package main

import (
	"context"
	"errors"
	"sync"
)

// conn is what the workloads need from a driver: one connection, or a
// pool or shared connection that is safe for concurrent use (see driver).
type conn interface {
	// Query runs sql (or a name returned by Prepare) with args.
	Query(ctx context.Context, sql string, args ...any) (rows, error)
	// Exec runs a statement that returns no rows.
	Exec(ctx context.Context, sql string, args ...any) error
	// Prepare makes sql a named prepared statement where the driver has
	// them, and returns what to pass to Query in its place.
	Prepare(ctx context.Context, name, sql string) (string, error)
	Close() error
}

// rows is the result iterator every driver offers.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// discarder is implemented by the floor client, which cannot scan: it runs
// sql and discards the reply, returning the number of rows.
type discarder interface {
	Discard(ctx context.Context, sql string, args ...any) (int, error)
}

// rowsDecoder is implemented by the floor client for the queries of
// bench_rows' six columns (selectRows): it runs sql with arg and decodes
// every row into a rowVals with the least work that gives the drivers'
// guarantee (each value in a Go variable, strings the caller's to keep),
// returning the number of rows.
type rowsDecoder interface {
	DecodeRows(ctx context.Context, sql string, arg any) (int, error)
}

// wideDecoder is the same for the 14-column query of bench_wide
// (selectWide): it decodes every row of group grp into a wideVals.
type wideDecoder interface {
	DecodeWide(ctx context.Context, grp int32) (int, error)
}

// intBatcher is implemented by drivers that can pipeline several queries
// on one connection. Every query returns one int4 column in one row; args
// holds one argument per query (nil: none) and out receives the values.
type intBatcher interface {
	QueryIntBatch(ctx context.Context, sql string, args []any, out []int32) error
}

// errUnsupported marks a workload variant a driver does not offer; the
// table shows "—".
var errUnsupported = errors.New("not supported by this driver")

// mutexConn makes a connection that is not safe for concurrent use
// shareable: a caller holds it from Query until the rows are closed.
type mutexConn struct {
	mu sync.Mutex // held while a statement and its rows are in progress
	c  conn
}

func (m *mutexConn) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	m.mu.Lock()
	r, err := m.c.Query(ctx, sql, args...)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	return &releaseRows{rows: r, release: m.mu.Unlock}, nil
}

func (m *mutexConn) Exec(ctx context.Context, sql string, args ...any) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.c.Exec(ctx, sql, args...)
}

func (m *mutexConn) Prepare(ctx context.Context, name, sql string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.c.Prepare(ctx, name, sql)
}

func (m *mutexConn) Close() error { return m.c.Close() }

// releaseRows calls release once, when the rows are closed.
type releaseRows struct {
	rows
	release func()
	done    bool
}

func (r *releaseRows) Close() {
	r.rows.Close()
	if !r.done {
		r.done = true
		r.release()
	}
}

// chanPool is a stand-in pool for clients without one: size connections,
// each held by one caller from Query until its rows are closed. A caller
// waits for a token of a channel (one per idle connection, waiters served
// in arrival order) and takes the connection released last, as pgxpool
// does: one request at a time then always runs on the same warm
// connection and backend (handed out in turn, five backends each ran a
// fifth of the requests, and the floor's pool of 5 ran one request at a
// time at 0.75× its lone connection).
type chanPool struct {
	tokens chan struct{}
	mu     sync.Mutex
	idle   []conn // released last at the end
	all    []conn
}

func newChanPool(ctx context.Context, size int, open func(context.Context) (conn, error)) (*chanPool, error) {
	p := &chanPool{tokens: make(chan struct{}, size)}
	for range size {
		c, err := open(ctx)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.all = append(p.all, c)
		p.put(c)
	}
	return p, nil
}

func (p *chanPool) get(ctx context.Context) (conn, error) {
	select {
	case <-p.tokens:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	c := p.idle[len(p.idle)-1]
	p.idle = p.idle[:len(p.idle)-1]
	p.mu.Unlock()
	return c, nil
}

// put returns c, taken by get, to the pool.
func (p *chanPool) put(c conn) {
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
	p.tokens <- struct{}{}
}

func (p *chanPool) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	c, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.Query(ctx, sql, args...)
	if err != nil {
		p.put(c)
		return nil, err
	}
	return &releaseRows{rows: r, release: func() { p.put(c) }}, nil
}

func (p *chanPool) Exec(ctx context.Context, sql string, args ...any) error {
	c, err := p.get(ctx)
	if err != nil {
		return err
	}
	defer p.put(c)
	return c.Exec(ctx, sql, args...)
}

// Prepare prepares sql on every connection of the pool.
func (p *chanPool) Prepare(ctx context.Context, name, sql string) (string, error) {
	var out string
	for _, c := range p.all {
		s, err := c.Prepare(ctx, name, sql)
		if err != nil {
			return "", err
		}
		out = s
	}
	return out, nil
}

func (p *chanPool) Close() error {
	var first error
	for _, c := range p.all {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
