package pgline

import (
	"context"
	"errors"
	"strconv"
)

// ErrTxClosed is returned by calls on a transaction that has been
// committed or rolled back.
var ErrTxClosed = errors.New("pgline: transaction already committed or rolled back")

// ErrTxRolledBack is returned by Commit when the server rolled the
// transaction back instead (an earlier statement of it failed).
var ErrTxRolledBack = errors.New("pgline: commit ended in rollback: the transaction had failed")

// TxOptions are the characteristics of a transaction (BEGIN ...). Zero
// values leave the server's defaults.
type TxOptions struct {
	// IsoLevel is "serializable", "repeatable read", "read committed" or
	// "read uncommitted".
	IsoLevel   string
	ReadOnly   bool
	Deferrable bool // with ReadOnly and serializable: DEFERRABLE
}

// Tx is a transaction. It holds its connection exclusively from Begin to
// Commit or Rollback: statements of other goroutines on the Conn wait and
// never run inside it. Its methods may be called from several goroutines;
// its statements are pipelined like any others. A Tx must end with Commit
// or Rollback; calling Rollback after Commit is harmless (ErrTxClosed).
type Tx struct {
	c         *Conn
	root      *Tx    // the outermost transaction, which owns the connection
	savepoint string // for a nested Tx: its savepoint
	depth     int    // nesting level, for savepoint names
	done      bool
	onEnd     func() // called when the outermost transaction ends (a Pool's)
}

// Begin starts a transaction.
func (c *Conn) Begin(ctx context.Context) (*Tx, error) {
	return c.BeginTx(ctx, TxOptions{})
}

// BeginTx starts a transaction with opts. It waits until the connection is
// free of other transactions; statements already queued by other
// goroutines run before the BEGIN, each in its own implicit transaction.
func (c *Conn) BeginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	sql, err := beginSQL(opts)
	if err != nil {
		return nil, err
	}
	tx, err := c.takeExclusive(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.simpleQuery(ctx, tx, sql, nil); err != nil {
		c.releaseExclusive(tx)
		return nil, err
	}
	return tx, nil
}

func beginSQL(opts TxOptions) (string, error) {
	sql := "BEGIN"
	switch opts.IsoLevel {
	case "":
	case "serializable", "repeatable read", "read committed", "read uncommitted":
		sql += " ISOLATION LEVEL " + opts.IsoLevel
	default:
		return "", errors.New("pgline: invalid isolation level " + strconv.Quote(opts.IsoLevel))
	}
	if opts.ReadOnly {
		sql += " READ ONLY"
	}
	if opts.Deferrable {
		sql += " DEFERRABLE"
	}
	return sql, nil
}

// takeExclusive makes the connection accept the requests of a new Tx
// only, waiting for a transaction that holds it to end.
func (c *Conn) takeExclusive(ctx context.Context) (*Tx, error) {
	tx := &Tx{c: c}
	tx.root = tx
	c.wmu.Lock()
	if err := c.gateLocked(ctx, nil); err != nil {
		c.wmu.Unlock()
		return nil, notSent(err)
	}
	c.excl = tx
	c.exclFree = make(chan struct{})
	c.wmu.Unlock()
	return tx, nil
}

// releaseExclusive lets every goroutine use the connection again.
func (c *Conn) releaseExclusive(tx *Tx) {
	c.wmu.Lock()
	if c.excl == tx {
		c.excl = nil
		close(c.exclFree)
	}
	c.wmu.Unlock()
}

// Exec runs sql in the transaction (see Conn.Exec).
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	if tx.done {
		return CommandTag{}, ErrTxClosed
	}
	return tx.c.exec(ctx, tx.root, sql, args)
}

// Query runs sql in the transaction (see Conn.Query).
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	if tx.done {
		return nil, ErrTxClosed
	}
	r := &Rows{}
	if err := tx.c.query(ctx, tx.root, r, sql, args); err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRow runs sql in the transaction (see Conn.QueryRow).
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{}
	if tx.done {
		row.err = ErrTxClosed
		return row
	}
	row.err = tx.c.query(ctx, tx.root, &row.rows, sql, args)
	return row
}

// Begin starts a nested transaction: a savepoint, released by its Commit
// and rolled back to by its Rollback.
func (tx *Tx) Begin(ctx context.Context) (*Tx, error) {
	if tx.done {
		return nil, ErrTxClosed
	}
	name := "pgline_sp_" + strconv.Itoa(tx.depth+1)
	if _, err := tx.c.simpleQuery(ctx, tx.root, "SAVEPOINT "+name, nil); err != nil {
		return nil, err
	}
	return &Tx{c: tx.c, root: tx.root, savepoint: name, depth: tx.depth + 1}, nil
}

// Commit commits the transaction (or releases the savepoint of a nested
// one). When the transaction had failed, the server rolls it back and
// Commit returns ErrTxRolledBack.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return ErrTxClosed
	}
	tx.done = true
	if tx.savepoint != "" {
		_, err := tx.c.simpleQuery(ctx, tx.root, "RELEASE SAVEPOINT "+tx.savepoint, nil)
		return err
	}
	defer tx.end()
	tag, err := tx.c.simpleQuery(ctx, tx, "COMMIT", nil)
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		return ErrTxRolledBack
	}
	return nil
}

// Rollback rolls the transaction back (or, for a nested one, rolls back
// to its savepoint). After Commit or Rollback it returns ErrTxClosed and
// does nothing, so it can be deferred.
func (tx *Tx) Rollback(ctx context.Context) error {
	if tx.done {
		return ErrTxClosed
	}
	tx.done = true
	if tx.savepoint != "" {
		_, err := tx.c.simpleQuery(ctx, tx.root, "ROLLBACK TO SAVEPOINT "+tx.savepoint, nil)
		return err
	}
	defer tx.end()
	_, err := tx.c.simpleQuery(ctx, tx, "ROLLBACK", nil)
	return err
}

// end releases the connection held by the outermost transaction.
func (tx *Tx) end() {
	tx.c.releaseExclusive(tx)
	if tx.onEnd != nil {
		tx.onEnd()
	}
}
