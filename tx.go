package pgline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pgline/pgline/internal/session"
)

// ErrTxClosed is returned by calls on a transaction that has been
// committed or rolled back.
var ErrTxClosed = errors.New("pgline: transaction already committed or rolled back")

// ErrTxRolledBack is returned by Commit when the transaction was rolled
// back instead: the server did (an earlier statement of it failed), or
// pgline did because a statement of it was given up when its ctx ended
// (its caller got ctx's error, but the server may have run it).
var ErrTxRolledBack = errors.New("pgline: commit ended in rollback: the transaction had failed")

// errRowsClosedByTx is the error of Rows that their transaction's Commit
// or Rollback closed before the end of their reply (see Tx.closeRows).
var errRowsClosedByTx = fmt.Errorf("%w: its Commit or Rollback closed these rows before their end", ErrTxClosed)

// errRowsGivenUp is Commit's error when it closed Rows of the transaction
// before the end of their reply: their statement was given up, and the
// transaction rolled back (see Tx.closeRows).
var errRowsGivenUp = fmt.Errorf("%w: rows of one of its queries were open, unread, at Commit, which gave their statement up", ErrTxRolledBack)

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
// its statements are pipelined like any others, and those queued after
// its Commit or Rollback get ErrTxClosed. A Tx must end with Commit or
// Rollback; calling Rollback after Commit is harmless (ErrTxClosed), and
// a Rollback whose ctx has ended still ends the transaction. One nested
// transaction may be open in a Tx at a time.
//
// Commit and Rollback first close the Rows of the transaction's queries
// still open (of its nested transactions' too), as database/sql does,
// instead of waiting for them: a loop over rows that returns early, then
// the deferred Rollback, ends the transaction at once. Rows whose reply
// had ended are closed as by Close. Rows still being sent are given up
// (the rest of their reply is drained, their statement canceled if it
// runs on): their Err wraps ErrTxClosed, the transaction is doomed (see
// Commit), and a Commit rolls back and returns ErrTxRolledBack. Rows
// another goroutine is reading are closed between two of its calls (one
// under way, Next or Scan, closes them as it returns); its next call
// finds them closed. A Row of QueryRow is not closed: it is a statement
// in flight until its Scan, which must be called (see Conn.QueryRow).
type Tx struct {
	c         *Conn
	root      *Tx    // the outermost transaction, which owns the connection
	parent    *Tx    // for a nested Tx: the transaction it is nested in
	savepoint string // for a nested Tx: its savepoint
	depth     int    // nesting level, for savepoint names
	done      atomic.Bool
	child     atomic.Bool // a nested Tx of this one is open
	onEnd     func()      // called when the outermost transaction ends (a Pool's)

	// Of the outermost transaction, guarded by c.wmu:
	h session.Holder // its hold on the connection's gate (see gate.go)

	// Of the outermost transaction: the open Rows of its queries and its
	// nested transactions' (see track), which its end closes.
	rmu     sync.Mutex // guards rows
	rows    []*Rows
	rowsBuf [2]*Rows // rows' first array: no allocation for a few Rows
}

// track notes r, just made by Query on tx, as open rows of the
// transaction, which its end closes if they are still open then (see
// closeRows). Rows.finish untracks them.
func (tx *Tx) track(r *Rows) {
	r.tx = tx
	root := tx.root
	root.rmu.Lock()
	if root.rows == nil {
		root.rows = root.rowsBuf[:0]
	}
	root.rows = append(root.rows, r)
	root.rmu.Unlock()
}

// untrack forgets r, rows of tx that are closed (see track).
func (tx *Tx) untrack(r *Rows) {
	root := tx.root
	root.rmu.Lock()
	for i, o := range root.rows {
		if o == r {
			last := len(root.rows) - 1
			root.rows[i] = root.rows[last]
			root.rows[last] = nil
			root.rows = root.rows[:last]
			break
		}
	}
	root.rmu.Unlock()
}

// within reports whether tx is anc or nested in it.
func (tx *Tx) within(anc *Tx) bool {
	for t := tx; t != nil; t = t.parent {
		if t == anc {
			return true
		}
	}
	return false
}

// closeRows closes, for tx's Commit or Rollback, the open Rows of tx's
// queries and of its nested transactions', so that ending tx never waits
// for Rows nobody may read any more (see Tx and Rows.closeForTx). It
// reports whether rows still being sent were given up, which dooms the
// transaction, and ctx's error when ctx ended while a call under way on
// some rows was to close them (those are left open).
func (tx *Tx) closeRows(ctx context.Context) (gaveUp bool, err error) {
	root := tx.root
	root.rmu.Lock()
	if len(root.rows) == 0 {
		root.rmu.Unlock()
		return false, nil
	}
	var open []*Rows
	for _, r := range root.rows {
		if r.tx.within(tx) {
			open = append(open, r)
		}
	}
	root.rmu.Unlock()
	for _, r := range open {
		g, e := r.closeForTx(ctx)
		gaveUp = gaveUp || g
		if e != nil {
			return gaveUp, e
		}
	}
	return gaveUp, nil
}

// doom marks the transaction a given-up statement belongs to (a nil tx
// is none): whether that statement ran is unknown to its caller, so
// committing could keep an effect its caller was told failed.
func (tx *Tx) doom() {
	if tx != nil {
		tx.root.h.Doomed.Store(true) // see holder.doomed
	}
}

// errDoomed is Commit's error for a doomed transaction.
var errDoomed = fmt.Errorf("%w: one of its statements was given up when its ctx ended", ErrTxRolledBack)

// owner returns the holder tx's statements are sent for: the outermost
// transaction's.
func (tx *Tx) owner() *session.Holder { return &tx.root.h }

// closed reports whether tx, or the transaction it is nested in, ended.
func (tx *Tx) closed() bool {
	for t := tx; t != nil; t = t.parent {
		if t.done.Load() {
			return true
		}
	}
	return false
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
	_, err = session.WhileRefused(ctx, func() (CommandTag, error) {
		tag, err := c.simpleQuery(ctx, &tx.h, sql, nil)
		if err == nil && c.s.RolledBackAfter(&tx.h) {
			return tag, errBeginEnded
		}
		return tag, err
	})
	if err != nil {
		// Unless nothing was sent or the server refused it, the BEGIN
		// may still run (its ctx ended while it waited for its turn):
		// a ROLLBACK follows it before anyone else's statements. So it
		// does when a cancel's signal hit the BEGIN once it had begun
		// the block: the session is in the aborted block. The Tx holds
		// the gate: the last ReadyForQuery read is the BEGIN's, or a
		// later ROLLBACK's (see rollBackStranded).
		var pgErr *PgError
		tx.end(!session.IsNotSent(err) && (!errors.As(err, &pgErr) || c.TxStatus() != 'I'))
		return nil, err
	}
	return tx, nil
}

// errBeginEnded is a BEGIN's error when it ran before a ROLLBACK queued
// for a block stranded before it (see rollBackStranded): it found no block
// to refuse it (a caller's raw ROLLBACK or COMMIT ended that one in
// between) and began the Tx's, which that ROLLBACK ends. Like a refusal,
// it is sent again, behind that ROLLBACK.
var errBeginEnded = fmt.Errorf("%w: pgline: the transaction's BEGIN ran before the ROLLBACK of a block stranded before it, which ends its block", session.ErrRefused)

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
	tx.root, tx.h.Block = tx, &tx.h
	if err := c.s.HoldBlock(ctx, &tx.h); err != nil {
		return nil, err
	}
	return tx, nil
}

// Exec runs sql in the transaction (see Conn.Exec).
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	if tx.closed() {
		return CommandTag{}, ErrTxClosed
	}
	return tx.c.exec(ctx, tx.owner(), sql, args)
}

// Query runs sql in the transaction (see Conn.Query).
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	if tx.closed() {
		return failedRows(ErrTxClosed), ErrTxClosed
	}
	r := &Rows{}
	if err := tx.c.query(ctx, tx.owner(), r, sql, args); err != nil {
		return failedRows(err), err
	}
	tx.track(r)
	return r, nil
}

// QueryRow runs sql in the transaction (see Conn.QueryRow).
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{} // QueryRow stays inlinable: the Row on the caller's stack
	row.err = tx.queryRow(ctx, row, sql, args)
	return row
}

// queryRow runs QueryRow's statement into row, noting what it ran so that
// Scan may send it again (see Row). It is not inlined, so that QueryRow
// is (see Conn.queryRow).
//
//go:noinline
func (tx *Tx) queryRow(ctx context.Context, row *Row, sql string, args []any) error {
	row.c, row.ctx, row.owner, row.sql, row.args = tx.c, ctx, tx.owner(), sql, args
	if tx.closed() {
		return ErrTxClosed
	}
	return tx.c.query(ctx, tx.owner(), &row.rows, sql, args)
}

// Begin starts a nested transaction: a savepoint, released by its Commit
// and rolled back to by its Rollback. Savepoints nest like a stack, so a
// Tx has one nested transaction open at a time. As in SQL, a statement run
// on tx while the nested transaction is open (from another goroutine, say)
// runs after the savepoint: the nested transaction's Rollback undoes it.
func (tx *Tx) Begin(ctx context.Context) (*Tx, error) {
	if tx.closed() {
		return nil, ErrTxClosed
	}
	if !tx.child.CompareAndSwap(false, true) {
		return nil, errors.New("pgline: a nested transaction of this transaction is still open")
	}
	name := "pgline_sp_" + strconv.Itoa(tx.depth+1)
	if _, err := tx.c.simpleQuery(ctx, tx.owner(), "SAVEPOINT "+name, nil); err != nil {
		tx.child.Store(false)
		return nil, err
	}
	return &Tx{c: tx.c, root: tx.root, parent: tx, savepoint: name, depth: tx.depth + 1}, nil
}

// Commit commits the transaction (or releases the savepoint of a nested
// one). When the transaction had failed, the server rolls it back and
// Commit returns ErrTxRolledBack. Rows of the transaction still open are
// closed first (see Tx): rows still being sent make it roll back instead,
// with ErrTxRolledBack.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.closed() || !tx.done.CompareAndSwap(false, true) {
		return ErrTxClosed
	}
	gaveUp, err := tx.closeRows(ctx)
	if err != nil {
		tx.doom() // ctx ended: rows left open, their outcome unknown
	}
	// A statement of the transaction still in flight (another
	// goroutine's) may yet be given up, its caller told it failed: COMMIT
	// is sent once each has its outcome, or not at all (see doom).
	if tx.c.s.Settle(ctx, tx.owner()) != nil {
		tx.doom()
	}
	if tx.root.h.Doomed.Load() {
		err := errDoomed
		if gaveUp {
			err = errRowsGivenUp
		}
		if tx.savepoint != "" {
			if e := tx.endNested(ctx, "ROLLBACK TO SAVEPOINT "); e != nil {
				err = e
			}
		} else if _, e := tx.finish(ctx, "ROLLBACK"); e != nil {
			err = e
		}
		return err
	}
	if tx.savepoint != "" {
		return tx.endNested(ctx, "RELEASE SAVEPOINT ")
	}
	tag, err := tx.finish(ctx, "COMMIT")
	if err == nil && tag.String() == "ROLLBACK" {
		return ErrTxRolledBack
	}
	return err
}

// Rollback rolls the transaction back (or, for a nested one, rolls back
// to its savepoint). After Commit or Rollback it returns ErrTxClosed and
// does nothing, so it can be deferred. When ctx has ended before the
// ROLLBACK could be sent, it is sent all the same and ctx's error
// returned. Rows of the transaction still open are closed first (see
// Tx).
func (tx *Tx) Rollback(ctx context.Context) error {
	if tx.closed() || !tx.done.CompareAndSwap(false, true) {
		return ErrTxClosed
	}
	tx.closeRows(ctx) // what ctx's end leaves open waits for the ROLLBACK (see finish)
	if tx.savepoint != "" {
		return tx.endNested(ctx, "ROLLBACK TO SAVEPOINT ")
	}
	_, err := tx.finish(ctx, "ROLLBACK")
	return err
}

// endNested releases or rolls back to a nested transaction's savepoint.
// Unsent for want of time, ROLLBACK TO is sent all the same; an unsent
// RELEASE is left to the outer transaction's end.
func (tx *Tx) endNested(ctx context.Context, verb string) error {
	defer tx.parent.child.Store(false)
	_, err := tx.c.simpleQuery(ctx, tx.owner(), verb+tx.savepoint, nil)
	if session.IsNotSent(err) && verb == "ROLLBACK TO SAVEPOINT " {
		tx.c.s.SendWhileHeld(tx.owner(), &tx.root.h, verb+tx.savepoint)
	}
	return err
}

// finish sends COMMIT or ROLLBACK for the outermost transaction and ends
// it. From the moment it is queued, the transaction's statements are
// refused (ErrTxClosed) rather than run after it, outside the transaction.
func (tx *Tx) finish(ctx context.Context, sql string) (CommandTag, error) {
	c := tx.c
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceStatement, SQL: sql})
	tag, err := c.s.EndBlock(ctx, &tx.h, sql)
	traceEnd(tctx, c.cfg, ev, CommandTag{s: tag}, err)
	// Unsent (ctx ended first), the transaction is still open.
	tx.end(session.IsNotSent(err))
	return CommandTag{s: tag}, err
}

// end releases the connection held by the outermost transaction. open
// says the server may be in the transaction still: a ROLLBACK is queued
// first, ahead of every other goroutine's statements. When one of the
// transaction's COPYs holds the connection, the COPY's release ends it.
func (tx *Tx) end(open bool) {
	tx.c.s.ReleaseBlock(&tx.h, open)
	if tx.onEnd != nil {
		tx.onEnd()
	}
}
