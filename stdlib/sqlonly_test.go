package stdlib_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"
	"time"
)

// sqlOnlyConnector opens connections to no server: their queries return
// rows shaped like stdlib_bench's, already converted to driver.Values. It
// measures what database/sql itself costs per query and per row, the part
// of the database-sql benchmarks no driver can remove (see
// BenchmarkPoint/sql-only and BenchmarkRows1000/sql-only).
type sqlOnlyConnector struct{ rows [][]driver.Value }

func newSQLOnlyDB(b *testing.B) *sql.DB {
	c := &sqlOnlyConnector{rows: make([][]driver.Value, 1000)}
	now := time.Now()
	for i := range c.rows {
		n := int64(i + 1)
		c.rows[i] = []driver.Value{n, "name " + time.Duration(n).String(), float64(n) * 1.5,
			now.Add(-time.Duration(n) * time.Minute), "0123456789abcdef0123456789abcdef", n%2 == 0}
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	return db
}

func (c *sqlOnlyConnector) Connect(context.Context) (driver.Conn, error) { return &sqlOnlyConn{c}, nil }
func (c *sqlOnlyConnector) Driver() driver.Driver                        { return nil }

type sqlOnlyConn struct{ c *sqlOnlyConnector }

func (c *sqlOnlyConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *sqlOnlyConn) Close() error                        { return nil }
func (c *sqlOnlyConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }

// QueryContext answers benchPointSQL with row $1 and benchRowsSQL with
// rows 1..$1.
func (c *sqlOnlyConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	n := int(args[0].Value.(int64))
	if query == benchPointSQL {
		return &sqlOnlyRows{rows: c.c.rows[n-1 : n]}, nil
	}
	return &sqlOnlyRows{rows: c.c.rows[:n]}, nil
}

type sqlOnlyRows struct {
	rows [][]driver.Value
	cur  []driver.Value // the row NextRow moved to (Go 1.27, see sqlonly_go127_test.go)
}

func (r *sqlOnlyRows) Columns() []string {
	return []string{"id", "name", "score", "created", "hash", "flag"}
}
func (r *sqlOnlyRows) Close() error { return nil }
func (r *sqlOnlyRows) Next(dest []driver.Value) error {
	if len(r.rows) == 0 {
		return io.EOF
	}
	copy(dest, r.rows[0])
	r.rows = r.rows[1:]
	return nil
}
