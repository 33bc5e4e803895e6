package stdlib

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/pgline/pgline"
)

// errLastInsertID is LastInsertId's answer: PostgreSQL has no such thing.
var errLastInsertID = errors.New("pgline/stdlib: LastInsertId is not supported by PostgreSQL: add RETURNING id to the INSERT and read it with QueryRow")

// querier is what *pgline.Conn and *pgline.Tx have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (*pgline.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgline.CommandTag, error)
}

// q returns where statements go: the open transaction, or the connection.
func (c *Conn) q() querier {
	if c.tx != nil {
		return c.tx
	}
	return c.c
}

// QueryContext runs query with args and returns its rows
// (driver.QueryerContext).
func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.q().Query(ctx, query, c.namedArgs(args)...)
	c.releaseArgs()
	if err != nil {
		return nil, c.driverErr(err)
	}
	return c.newRows(r), nil
}

// ExecContext runs query with args (driver.ExecerContext). Without
// arguments query may hold several statements separated by semicolons;
// the result counts the rows of the last one.
func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	tag, err := c.q().Exec(ctx, query, c.namedArgs(args)...)
	c.releaseArgs()
	if err != nil {
		return nil, c.driverErr(err)
	}
	return result(tag.RowsAffected()), nil
}

// result is the driver.Result of a statement: its command tag's row count.
type result int64

// LastInsertId returns an error: PostgreSQL has no last insert id; use
// INSERT ... RETURNING.
func (result) LastInsertId() (int64, error) { return 0, errLastInsertID }

// RowsAffected returns the row count of the command tag ("INSERT 0 3"
// gives 3; 0 for commands without one, such as CREATE TABLE).
func (r result) RowsAffected() (int64, error) { return int64(r), nil }
