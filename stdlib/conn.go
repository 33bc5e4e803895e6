package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/pgtype"
)

var (
	errNilConfig = errors.New("pgline/stdlib: Connector has no config (use NewConnector)")
	// errBusy is returned for a statement started while rows of the same
	// connection are open: pgline would wait for those rows, and they for
	// the caller, for ever.
	errBusy = errors.New("pgline/stdlib: connection busy: rows of an earlier query on this connection are still open; close them first")
)

// Conn is a database/sql driver connection over a *pgline.Conn. database/sql
// uses it from one goroutine at a time; reach it, and the native Conn,
// with (*sql.Conn).Raw:
//
//	err := sqlConn.Raw(func(dc any) error {
//		c := dc.(*stdlib.Conn).Conn()
//		...
//	})
type Conn struct {
	c     *pgline.Conn
	tx    *pgline.Tx  // the transaction begun by BeginTx, until it ends
	rows  *Rows       // rows open on the connection, if any
	types *pgtype.Map // decodes rows: the connection's own (Conn.TypeMap)
	args  []any       // reused for the arguments of each call
	cols  colCache
	// lastReset is when the connection was opened or last passed
	// ResetSession: ResetSession pings it when it is a second or more ago.
	lastReset time.Time
}

// resetPingAfter is how long a connection sits unused before ResetSession
// pings it: pgline reads the socket only when a statement runs, so a
// server's FATAL (pg_terminate_backend, a restart, idle_session_timeout)
// waits unseen until then. A connection reused sooner is not pinged.
const resetPingAfter = time.Second

func newConn(c *pgline.Conn, types *pgtype.Map) *Conn {
	return &Conn{c: c, types: types, lastReset: time.Now()}
}

// Conn returns the native pgline connection. Statements run on it directly
// bypass database/sql: do not use it while a database/sql transaction or
// rows of this connection are open.
func (c *Conn) Conn() *pgline.Conn { return c.c }

// Close closes the connection (driver.Conn).
func (c *Conn) Close() error { return c.c.Close() }

// Ping checks that the server answers (driver.Pinger).
func (c *Conn) Ping(ctx context.Context) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.driverErr(c.c.Ping(ctx))
}

// ResetSession is called by database/sql before the connection is reused
// (driver.SessionResetter): a closed connection, or one left inside a
// transaction, is bad and gets discarded. A connection unused for a second
// or more is pinged first, with ctx, and is bad when the ping fails (the
// server ended the session meanwhile): database/sql then uses another
// connection, which is safe since the user's statement was not sent.
func (c *Conn) ResetSession(ctx context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	now := time.Now()
	if now.Sub(c.lastReset) >= resetPingAfter {
		if err := ctx.Err(); err != nil {
			return err // not the connection's fault: keep it, ping next time
		}
		if err := c.c.Ping(ctx); err != nil {
			return fmt.Errorf("%w: ping before reuse: %w", driver.ErrBadConn, err)
		}
		now = time.Now()
	}
	c.lastReset = now
	return nil
}

// IsValid reports whether the connection may go back to the pool
// (driver.Validator): it is open, and idle outside any transaction.
func (c *Conn) IsValid() bool {
	return !c.c.IsClosed() && c.tx == nil && c.rows == nil && c.c.TxStatus() == 'I'
}

// CheckNamedValue accepts every positional argument as it is
// (driver.NamedValueChecker): pgline encodes Go values itself, so []int64,
// []string, pgtype values, driver.Valuer implementations and the other
// argument types of pgline reach it unchanged. Named arguments and
// sql.Out are refused.
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return fmt.Errorf("pgline/stdlib: named argument %q: PostgreSQL takes positional parameters only ($1, $2, ...)", nv.Name)
	}
	switch nv.Value.(type) {
	case sql.Out, *sql.Out:
		return errors.New("pgline/stdlib: sql.Out parameters are not supported; use RETURNING or a result column")
	}
	return nil
}

// check returns the error for a call that cannot start: on a closed
// connection (driver.ErrBadConn, so that database/sql uses another), or
// while rows are open.
func (c *Conn) check() error {
	if c.c.IsClosed() {
		return fmt.Errorf("%w: %w", driver.ErrBadConn, pgline.ErrClosed)
	}
	if c.rows != nil {
		return errBusy
	}
	return nil
}

// driverErr marks err as driver.ErrBadConn when nothing reached the server
// and the connection is closed, so that database/sql retries on another
// connection; the cause stays in the chain. Any other error (the server's,
// ctx's, a bad argument) is returned as it is.
func (c *Conn) driverErr(err error) error {
	if err == nil {
		return nil
	}
	if c.c.IsClosed() && pgline.SafeToRetry(err) && !errors.Is(err, driver.ErrBadConn) {
		return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
	}
	return err
}

// namedArgs converts database/sql arguments into pgline's, in c.args;
// callers clear it after the call.
func (c *Conn) namedArgs(nvs []driver.NamedValue) []any {
	args := c.args[:0]
	for _, nv := range nvs {
		args = append(args, nv.Value)
	}
	c.args = args
	return args
}

// releaseArgs drops the references to the last call's arguments.
func (c *Conn) releaseArgs() {
	clear(c.args)
	c.args = c.args[:0]
}
