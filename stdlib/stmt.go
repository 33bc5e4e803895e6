package stdlib

import (
	"context"
	"database/sql/driver"
	"errors"
)

// errStmtClosed is returned by a Stmt used after Close.
var errStmtClosed = errors.New("pgline/stdlib: statement is closed")

// Prepare prepares query (driver.Conn); see PrepareContext.
func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares query on the connection (driver.ConnPrepareContext).
// The statement lives in the connection's statement cache, shared with
// Query and Exec of the same SQL text: it is parsed by the server once per
// connection, however many times it is prepared, run or closed.
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	prepare := c.c.Prepare
	if c.tx != nil {
		prepare = c.tx.Prepare
	}
	sd, err := prepare(ctx, query)
	if err != nil {
		return nil, c.driverErr(err)
	}
	return &Stmt{c: c, sql: query, numInput: len(sd.ParamOIDs)}, nil
}

// Stmt is a prepared statement (driver.Stmt, StmtQueryContext,
// StmtExecContext).
type Stmt struct {
	c        *Conn
	sql      string
	numInput int
	closed   bool
}

// Close marks the statement closed. The server-side statement stays in the
// connection's statement cache, for the next use of the same SQL.
func (s *Stmt) Close() error {
	s.closed = true
	return nil
}

// NumInput returns the number of parameters.
func (s *Stmt) NumInput() int { return s.numInput }

// Exec runs the statement (legacy driver.Stmt); see ExecContext.
func (s *Stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

// Query runs the statement (legacy driver.Stmt); see QueryContext.
func (s *Stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

// ExecContext runs the prepared statement and returns its row count.
func (s *Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.closed {
		return nil, errStmtClosed
	}
	c := s.c
	if err := c.check(); err != nil {
		return nil, err
	}
	// Query, not Exec: without arguments Exec would take the simple
	// protocol and leave the prepared statement unused.
	r, err := c.q().Query(ctx, s.sql, c.namedArgs(args)...)
	c.releaseArgs()
	if err != nil {
		return nil, c.driverErr(err)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return nil, c.driverErr(err)
	}
	return result(r.CommandTag().RowsAffected()), nil
}

// QueryContext runs the prepared statement and returns its rows.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.closed {
		return nil, errStmtClosed
	}
	return s.c.QueryContext(ctx, s.sql, args)
}

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	nvs := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nvs[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nvs
}
