package main

import "context"

// driver is one client under test. connect is required; shared and pool
// may be nil, meaning "use mutexConn over connect" and "use chanPool over
// connect" respectively, with a note saying so.
type driver struct {
	name string
	// connect opens one connection for use by one goroutine at a time.
	connect func(ctx context.Context, dsn string) (conn, error)
	// shared opens one connection that many goroutines use at once, and
	// says how the driver shares it.
	shared func(ctx context.Context, dsn string) (conn, string, error)
	// pool opens a pool of size connections and says what it is.
	pool func(ctx context.Context, dsn string, size int) (conn, string, error)
	// textArray adapts a []string argument to what the driver binds as
	// text[].
	textArray func([]string) any
}

// openShared returns a connection for concurrent use by many goroutines.
func (d *driver) openShared(ctx context.Context, dsn string) (conn, string, error) {
	if d.shared != nil {
		return d.shared(ctx, dsn)
	}
	c, err := d.connect(ctx, dsn)
	if err != nil {
		return nil, "", err
	}
	return &mutexConn{c: c}, "one connection shared under a mutex", nil
}

// openPool returns a pool of size connections.
func (d *driver) openPool(ctx context.Context, dsn string, size int) (conn, string, error) {
	if d.pool != nil {
		return d.pool(ctx, dsn, size)
	}
	p, err := newChanPool(ctx, size, func(ctx context.Context) (conn, error) { return d.connect(ctx, dsn) })
	if err != nil {
		return nil, "", err
	}
	return p, "stand-in pool: connections checked out through a channel", nil
}

// Driver names, in table order.
const (
	nameFloor   = "floor"
	namePgline  = "pgline"
	namePgx     = "pgx"
	namePgxSQL  = "pgx/stdlib"
	nameLibPQ   = "lib/pq"
	refDriver   = namePgx
	floorDriver = nameFloor
)

// allDrivers lists every driver in table order; pgline first when built.
func allDrivers() []*driver {
	var ds []*driver
	if d := pglineDriver(); d != nil {
		ds = append(ds, d)
	}
	return append(ds, pglineSQLDriver(), pgxDriver(), pgxSQLDriver(), libpqDriver(), floorClientDriver())
}
