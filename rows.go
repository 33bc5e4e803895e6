package pgline

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/pool"
	"github.com/pgline/pgline/internal/strblock"
	"github.com/pgline/pgline/pgtype"
)

// ErrNoRows is returned by Row.Scan when the query returned no row. It
// wraps sql.ErrNoRows: errors.Is(err, sql.ErrNoRows) holds for it too.
var ErrNoRows error = &noRowsError{}

// noRowsError is the type of ErrNoRows.
type noRowsError struct{}

func (*noRowsError) Error() string { return "pgline: no rows in result set" }
func (*noRowsError) Unwrap() error { return sql.ErrNoRows }

// Rows is the result of Query. It holds the connection until it is closed;
// Next returning false closes it. A Rows is used by one goroutine at a
// time. The Rows of a transaction's query are closed by its Commit or
// Rollback if still open (see Tx); Err then reports why.
type Rows struct {
	c   *Conn
	res session.Result // the reply, read up to each row (result.go)
	// batch is set for the result of one statement of a batch: the batch
	// owns the turn, and in an all-or-nothing batch (stopAtComplete) the
	// statement's reply ends at its CommandComplete or ErrorResponse.
	batch    *BatchResults
	pooled   *pool.Conn // the pool connection these rows count against, if any
	trace    *TraceEvent
	traceCtx context.Context

	use atomic.Int32 // rows of a transaction (tx): a rows* state (see closeForTx)
	// resends is the retry budget of the call that made the rows,
	// carried across its attempts (see retry.go). Beside use, so that
	// Rows stays in its allocation size class (256 B).
	resends session.Resends
	raw     [][]byte // reused by RawValues
	// short holds the short strings Scan has handed out (see scanOne).
	short strblock.Block
	// tx is the transaction whose Query made the rows, nil for rows of
	// no transaction (and for a Row's). Set before the rows reach their
	// caller (Tx.track), not changed afterwards.
	tx *Tx
}

// States of a transaction's Rows (Rows.use). A call of the rows' user
// goes from rowsIdle to rowsInCall and back (enter, leave). The
// transaction's end (closeForTx) takes idle rows (rowsClosing) and
// closes them; rows in a call it marks rowsCloseWanted, and the call
// closes them as it returns. Closed, they are rowsClosed or rowsGivenUp,
// after which nothing writes their fields.
const (
	rowsIdle        = iota // no call on the rows under way
	rowsInCall             // a call of the rows' user is under way
	rowsCloseWanted        // a call is under way, and closes the rows as it returns
	rowsClosing            // the transaction's end closes them
	rowsClosed             // closed for the transaction's end, their reply read to its end
	rowsGivenUp            // closed for the transaction's end before the end of their reply
)

// enter begins a call on rows of a transaction (r.tx set), and reports
// whether the call must leave when it returns: not when the rows were
// closed for the transaction's end (rowsClosed), which nothing changes
// any more. It waits while the end closes them (that reads no socket,
// and runs no user code but a Tracer's), and while another goroutine's
// call is under way (against the rule that a Rows is used by one
// goroutine at a time: waiting keeps the calls from racing).
func (r *Rows) enter() bool {
	for spins := 0; ; spins++ {
		switch r.use.Load() {
		case rowsIdle:
			if r.use.CompareAndSwap(rowsIdle, rowsInCall) {
				return true
			}
		case rowsClosed, rowsGivenUp:
			return false
		default:
			if spins < 100 {
				runtime.Gosched()
			} else {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
}

// leave ends a call begun by enter. When the transaction's end asked
// for the rows meanwhile (rowsCloseWanted), the call closes them.
func (r *Rows) leave() {
	if !r.use.CompareAndSwap(rowsInCall, rowsIdle) {
		r.closeForTxEnd()
	}
}

// closeForTx closes rows of a transaction for its Commit or Rollback (see
// Tx.closeRows): at once when no call on them is under way; otherwise
// the call closes them as it returns (leave), and closeForTx waits for
// that, while ctx allows (a call of Next or Scan, not the next call of
// the rows' user). It reports whether the rows were given up before the
// end of their reply (closeForTxEnd), and ctx's error if it ended first.
func (r *Rows) closeForTx(ctx context.Context) (gaveUp bool, err error) {
	wait := 10 * time.Microsecond
	for {
		switch r.use.Load() {
		case rowsIdle:
			if r.use.CompareAndSwap(rowsIdle, rowsClosing) {
				return r.closeForTxEnd(), nil
			}
			continue
		case rowsInCall:
			if r.use.CompareAndSwap(rowsInCall, rowsCloseWanted) {
				break
			}
			continue
		case rowsClosed:
			return false, nil
		case rowsGivenUp:
			return true, nil
		}
		// Closed by a call under way, or by a concurrent end of the
		// transaction: soon.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, time.Millisecond)
	}
}

// closeForTxEnd closes rows of a transaction for the transaction's end
// (see closeForTx), and leaves them rowsClosed. Rows whose reply was read
// to its end are closed as by Close. Rows still being sent are given up
// as when their ctx ends (see Conn.abandon: the rest of the reply is
// drained, the statement canceled if it runs on, and the transaction
// doomed), and their Err is errRowsClosedByTx; it reports that (gaveUp),
// and leaves them rowsGivenUp.
func (r *Rows) closeForTxEnd() (gaveUp bool) {
	if r.c != nil {
		r.res.Pending = false
		if !r.res.Done {
			r.res.SetErr(errRowsClosedByTx)
			r.res.Abandoned, gaveUp = true, true
		}
		r.finish()
	}
	if gaveUp {
		r.use.Store(rowsGivenUp)
	} else {
		r.use.Store(rowsClosed)
	}
	return gaveUp
}

// readRow reads the reply up to the next row (see result.readRow).
func (r *Rows) readRow() bool { return r.res.ReadRow(&r.c.s) }

// Next advances to the next row and reports whether there is one. When it
// returns false the rows are closed; check Err.
func (r *Rows) Next() bool {
	if r.tx != nil && r.enter() {
		defer r.leave()
	}
	if r.c == nil {
		return false
	}
	if r.res.Done {
		r.finish()
		return false
	}
	if r.res.Pending {
		r.res.Pending = false
		if w := &r.res.Req.Watch; !w.Interrupts || w.Ctx.Err() == nil {
			return true
		}
		// Its ctx ended since the row was read (see Conn.next): the
		// caller is answered with its ctx's error, as by a read.
		r.res.ReadFailed(session.ErrInterrupted)
	} else if r.readRow() {
		return true
	}
	r.finish()
	return false
}

// finish ends the use of the connection by these rows.
func (r *Rows) finish() {
	if r.c == nil {
		return
	}
	if r.batch != nil {
		r.batch.rep.StatementEnded(&r.res)
		r.c = nil // the batch goes on reading
		return
	}
	r.res.End(&r.c.s)
	if r.trace != nil {
		traceEnd(r.traceCtx, r.c.cfg, r.trace, CommandTag{s: r.res.Tag}, r.res.Err)
		r.trace, r.traceCtx = nil, nil
	}
	r.c = nil
	if pc := r.pooled; pc != nil {
		r.pooled = nil
		pc.Done(true)
	}
	if r.tx != nil {
		r.tx.untrack(r)
	}
}

// Close discards the rows not read yet and releases the connection. It is
// safe to call more than once.
func (r *Rows) Close() {
	if r.tx != nil && r.enter() {
		defer r.leave()
	}
	if r.c == nil {
		return
	}
	r.res.Pending = false
	for !r.res.Done {
		r.readRow()
	}
	r.finish()
}

// Err returns the error that ended the rows, if any: the server's error,
// an I/O error, or a Scan error; for rows of a transaction that its
// Commit or Rollback closed before their end, an error wrapping
// ErrTxClosed.
func (r *Rows) Err() error {
	if r.tx != nil && r.enter() {
		defer r.leave()
	}
	return r.res.Err
}

// CommandTag returns the command tag of the statement, once the rows are
// closed.
func (r *Rows) CommandTag() CommandTag { return CommandTag{s: r.res.Tag} }

// noRowError is the error of call, which needs a current row, when there
// is none: the rows are closed (by Close, or by Next returning false), or
// Next has not been called yet.
func (r *Rows) noRowError(call string) error {
	if r.c == nil {
		return fmt.Errorf("pgline: %s called on closed Rows (after Close, or after Next returned false)", call)
	}
	return fmt.Errorf("pgline: %s called without a current row (call Next first)", call)
}

// FieldDescriptions describes the result columns.
func (r *Rows) FieldDescriptions() []FieldDescription {
	if r.res.Sd == nil {
		return nil
	}
	return fieldsOf(r.res.Sd.Fields)
}

// Scan decodes the current row's columns into dest, one destination per
// column (nil skips a column). Values are copied: nothing refers to the
// connection's buffers after Scan returns, except a *sql.RawBytes
// destination, which aliases the row until the next call to Next or
// Close, as database/sql documents (Row.Scan copies it). A column that
// does not fit its destination gives an error naming the column; the row
// can then still be scanned into other destinations. A column of a type
// the TypeMap does not know (a user type not registered with LoadType),
// scanned into a destination only its codec could fill, gives a
// pgtype.UnknownTypeError naming the type's OID: the rows hold the
// connection, so its name cannot be asked for here (Row.Scan and the
// Collect functions, which close the rows first, ask).
func (r *Rows) Scan(dest ...any) error {
	if r.tx != nil {
		if !r.enter() {
			return errRowsClosedByTx
		}
		defer r.leave()
	}
	if r.c == nil || r.res.Pending || r.res.Done {
		return r.noRowError("Scan")
	}
	if len(dest) != len(r.res.Sd.Fields) {
		return fmt.Errorf("pgline: Scan got %d destinations for %d columns", len(dest), len(r.res.Sd.Fields))
	}
	if r.res.Big {
		return r.scanBig(dest)
	}
	// The row's column lengths are checked by this walk (see readRow).
	row := r.res.Row
	row.Reset()
	plans := r.res.Sd.Plans[:len(dest)]
	for i, d := range dest {
		v, isNull, ok := row.NextChecked()
		if !ok {
			return r.malformedRow()
		}
		if d == nil {
			continue
		}
		if isNull {
			v = nil
		}
		if err := r.scanOne(&plans[i], i, v, d); err != nil {
			return err
		}
	}
	if !row.Finish() {
		return r.malformedRow()
	}
	r.res.Row = row
	return nil
}

// malformedRow ends the rows and closes the connection on the current
// row's malformed column lengths, and returns the protocol error.
func (r *Rows) malformedRow() error {
	err := r.res.Row.Check()
	if err == nil {
		err = errors.New("DataRow: malformed") // not reached: Check finds what Scan's walk did
	}
	r.res.Fatal(&r.c.s, session.ProtocolErr(err))
	return r.res.Err
}

// scanOne decodes column i's value (nil for NULL) into d through cp, the
// column's cached plan (made again when d's type is not the one it was
// made for), with two shortcuts past the call through the plan: a common
// binary value the plan's Inline decodes (an int4 into an *int32...), and
// a short text value bound for a *string, copied into the rows' shared
// block (one allocation for many values and rows; a string kept keeps at
// most 1 KiB alive).
func (r *Rows) scanOne(cp *session.ColumnPlan, i int, v []byte, d any) error {
	if cp.Dst != typeWord(d) || cp.Plan == nil {
		if err := r.replan(cp, i, d); err != nil {
			return err
		}
	}
	if v != nil {
		if cp.Inline.Scan(v, d) {
			return nil
		}
		if cp.Short && len(v) <= strblock.MaxLen {
			if p, _ := d.(*string); p != nil {
				*p = r.short.String(v)
				return nil
			}
		}
	}
	if err := cp.Plan.Scan(v, d); err != nil {
		return r.columnErr(i, err)
	}
	return nil
}

// ScanColumn decodes column i of the current row into dest, as Scan does
// for that column, leaving the other columns alone. Columns may be scanned
// in any order and more than once (a row larger than the read buffer,
// whose columns Scan would read from the socket once, in order, is first
// read whole).
func (r *Rows) ScanColumn(i int, dest any) error {
	if r.tx != nil {
		if !r.enter() {
			return errRowsClosedByTx
		}
		defer r.leave()
	}
	if r.c == nil || r.res.Pending || r.res.Done {
		return r.noRowError("ScanColumn")
	}
	if i < 0 || i >= len(r.res.Sd.Fields) {
		return fmt.Errorf("pgline: ScanColumn: no column %d of %d", i, len(r.res.Sd.Fields))
	}
	if err := r.materialize(); err != nil {
		return err
	}
	v, isNull := r.res.Row.Column(i)
	if isNull {
		v = nil
	}
	return r.scanOne(&r.res.Sd.Plans[i], i, v, dest)
}

// replan makes cp, column i's plan, for d's type.
func (r *Rows) replan(cp *session.ColumnPlan, i int, d any) error {
	plan, err := r.planScan(i, d)
	if err != nil {
		return err
	}
	*cp = session.ColumnPlan{Dst: typeWord(d), Plan: plan, Inline: pgtype.InlineOf(plan), Short: pgtype.CopiesToString(plan)}
	return nil
}

// planScan makes the scan plan of column i for destinations of d's type.
func (r *Rows) planScan(i int, d any) (pgtype.ScanPlan, error) {
	f := (*FieldDescription)(&r.res.Sd.Fields[i])
	if _, ok := d.(*StreamDest); ok {
		return newStreamPlan(f)
	}
	plan, err := r.c.s.Types.PlanScan(f.DataTypeOID, f.Format, d)
	if err != nil {
		return nil, r.columnErr(i, err)
	}
	return plan, nil
}

// RawValues returns the current row's column values as the server sent
// them (nil for NULL), in each column's format (FieldDescription.Format).
// The slices alias the connection's read buffer: they are valid until the
// next call to Next or Close (or, for rows of a transaction, its Commit or
// Rollback, which closes them). It returns nil when there is no current row,
// and for a row larger than the read buffer that cannot be held whole
// (over max_message_size, or already scanned): Values says why; scan
// such a row with StreamTo.
func (r *Rows) RawValues() [][]byte {
	if r.tx != nil && r.enter() {
		defer r.leave()
	}
	if r.c == nil || r.res.Pending || r.res.Done || r.materialize() != nil {
		return nil
	}
	r.raw = r.res.Row.Values(r.raw[:0])
	return r.raw
}

// Values decodes the current row into Go values of each column's default
// type (nil for NULL).
func (r *Rows) Values() ([]any, error) {
	if r.tx != nil {
		if !r.enter() {
			return nil, errRowsClosedByTx
		}
		defer r.leave()
	}
	if r.c == nil || r.res.Pending || r.res.Done {
		return nil, r.noRowError("Values")
	}
	if err := r.materialize(); err != nil {
		return nil, err
	}
	fields := r.res.Sd.Fields
	vals := make([]any, len(fields))
	row := r.res.Row
	row.Reset()
	for i := range fields {
		v, isNull, _ := row.Next()
		if isNull {
			continue
		}
		val, err := r.c.s.Types.DecodeValue(fields[i].DataTypeOID, fields[i].Format, v)
		if err != nil {
			return nil, fmt.Errorf("pgline: column %d (%s): %w", i, fields[i].Name, err)
		}
		vals[i] = val
	}
	return vals, nil
}

// Row is the result of QueryRow.
type Row struct {
	rows Rows
	err  error
	// What QueryRow ran, to send it again (on c, or through pool) when a
	// CancelRequest meant for another statement hit it before Scan
	// returned: nil c for a batch's row.
	c     *Conn
	pool  *Pool
	ctx   context.Context
	owner *session.Holder
	sql   string
	args  []any
}

// Scan scans the first row into dest and closes the rows. It returns
// ErrNoRows when there is no row. Its error for a type the TypeMap does
// not know names the type as the catalog does, looked up once the rows
// are closed, outside a transaction block (see Rows.Scan and
// pgtype.UnknownTypeError).
func (r *Row) Scan(dest ...any) error {
	for {
		err := r.scan(dest)
		// The row reached dest only: when a cancel meant for another
		// statement hit the statement, it is run again, and dest
		// overwritten, unless a destination streamed it elsewhere.
		if r.c == nil || streams(dest) || !session.Resendable(r.owner, r.sql, err, r.rows.res.TxStatus) || !r.rows.resends.Again(r.ctx, session.ResendInterfered) {
			return err
		}
		r.rows = Rows{resends: r.rows.resends} // one budget, with run's
		if r.pool != nil {
			r.pool.runRow(r)
			continue
		}
		r.err = r.c.query(r.ctx, r.owner, &r.rows, r.sql, r.args)
	}
}

func (r *Row) scan(dest []any) error {
	if r.err != nil {
		return r.err
	}
	rows := &r.rows
	defer rows.Close() // already closed, unless a Scanner panicked: the reply is read and the turn handed on
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return rows.closeNaming(err, r.owner)
	}
	ownRawBytes(dest)
	rows.Close()
	return rows.Err()
}

// ownRawBytes copies the values scanned into *sql.RawBytes destinations,
// which alias the row until the next call to Next or Close: Row.Scan
// closes the rows, handing the connection on, whose next reply overwrites
// the buffer they alias.
func ownRawBytes(dest []any) {
	for _, d := range dest {
		if p, ok := d.(*sql.RawBytes); ok && p != nil && *p != nil {
			*p = bytes.Clone(*p)
		}
	}
}

// typeWord returns the type word of d: the identity of its dynamic type,
// equal for two values exactly when reflect.TypeOf would be, without the
// interface comparison (runtime.ifaceeq) that comparing two reflect.Type
// values costs on every column of every row.
func typeWord(d any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&d))[0]
}
