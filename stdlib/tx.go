package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/pgline/pgline"
)

// errInTx is returned by BeginTx on a connection already in a transaction.
var errInTx = errors.New("pgline/stdlib: a transaction is already open on this connection")

// Begin starts a transaction (legacy driver.Conn); see BeginTx.
func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction (driver.ConnBeginTx) with the isolation
// level of opts (sql.LevelDefault leaves the server's default; read
// uncommitted, read committed, repeatable read and serializable are
// PostgreSQL's; the other sql levels are refused) and, when opts.ReadOnly,
// READ ONLY. Until Commit or Rollback every statement of the connection
// runs inside it.
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.tx != nil || c.c.TxStatus() != 'I' {
		// Also a BEGIN given to Exec: the server would only warn.
		return nil, errInTx
	}
	level, err := isoLevel(sql.IsolationLevel(opts.Isolation))
	if err != nil {
		return nil, err
	}
	tx, err := c.c.BeginTx(ctx, pgline.TxOptions{IsoLevel: level, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, c.driverErr(err)
	}
	c.tx = tx
	return connTx{c}, nil
}

// isoLevel maps a database/sql isolation level to PostgreSQL's.
func isoLevel(l sql.IsolationLevel) (string, error) {
	switch l {
	case sql.LevelDefault:
		return "", nil
	case sql.LevelReadUncommitted:
		return "read uncommitted", nil
	case sql.LevelReadCommitted:
		return "read committed", nil
	case sql.LevelRepeatableRead:
		return "repeatable read", nil
	case sql.LevelSerializable:
		return "serializable", nil
	}
	return "", fmt.Errorf("pgline/stdlib: isolation level %v is not supported by PostgreSQL (use read uncommitted, read committed, repeatable read or serializable)", l)
}

// connTx is the driver.Tx of a Conn.
type connTx struct{ c *Conn }

// Commit commits the transaction; when the server rolled it back instead
// (a statement of it had failed) the error is pgline.ErrTxRolledBack.
func (t connTx) Commit() error {
	tx, err := t.end()
	if err != nil {
		return err
	}
	return t.c.driverErr(tx.Commit(context.Background()))
}

// Rollback rolls the transaction back.
func (t connTx) Rollback() error {
	tx, err := t.end()
	if err != nil {
		return err
	}
	return t.c.driverErr(tx.Rollback(context.Background()))
}

// end detaches the transaction from the connection, closing rows left
// open in it.
func (t connTx) end() (*pgline.Tx, error) {
	c := t.c
	tx := c.tx
	if tx == nil {
		return nil, pgline.ErrTxClosed
	}
	if c.rows != nil {
		c.rows.Close()
	}
	c.tx = nil
	return tx, nil
}
