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

	"github.com/pgline/pgline/internal/pool"
	"github.com/pgline/pgline/internal/strblock"
	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// ErrNoRows is returned by Row.Scan when the query returned no row. It
// wraps sql.ErrNoRows: errors.Is(err, sql.ErrNoRows) holds for it too.
var ErrNoRows error = &noRowsError{}

// noRowsError is the type of ErrNoRows.
type noRowsError struct{}

func (*noRowsError) Error() string { return "pgline: no rows in result set" }
func (*noRowsError) Unwrap() error { return sql.ErrNoRows }

// errCopyOutRows is the error of a COPY ... TO STDOUT run as a query: its
// data is no rows (it is read, and thrown away).
var errCopyOutRows = errors.New("pgline: COPY ... TO STDOUT sends no rows: run it with CopyTo")

// Rows is the result of Query. It holds the connection until it is closed;
// Next returning false closes it. A Rows is used by one goroutine at a
// time. The Rows of a transaction's query are closed by its Commit or
// Rollback if still open (see Tx); Err then reports why.
type Rows struct {
	c     *Conn
	sd    *stmtDesc
	req   *request // this run's place in the connection's queue
	watch *ctxWatch
	// batch is set for the result of one statement of a batch: the batch
	// owns the turn, and in an all-or-nothing batch (stopAtComplete,
	// below) the statement's reply ends at its CommandComplete or
	// ErrorResponse.
	batch    *BatchResults
	pooled   *pool.Conn // the pool connection these rows count against, if any
	trace    *TraceEvent
	traceCtx context.Context

	row     wire.DataRow // the current row; its bytes are in the read buffer
	pending bool         // the first row was read by start and not yet returned by Next
	done    bool         // the reply was read up to ReadyForQuery
	use     atomic.Int32 // rows of a transaction (tx): a rows* state (see closeForTx)
	tag     CommandTag
	err     error
	raw     [][]byte // reused by RawValues
	// short holds the short strings Scan has handed out (see scanOne).
	short strblock.Block

	// big is set while the current row is larger than the read buffer:
	// its columns are read from the socket by Scan, once (see stream.go).
	big        bool
	seen       bool // a message of the reply was read (see readRow)
	bound      bool // BindComplete was read: the statement's name was found
	bigScanned bool
	// unreadable is set when the portal's description (describe mode)
	// shows a column whose type changed, since the statement was
	// described, to one pgline reads in text only, while this run asked
	// for binary: its rows are skipped and the run fails (see
	// portalDescribed).
	unreadable bool
	// abandoned: the ctx ended while the reply was read; the rest of it
	// is the connection's to drain.
	abandoned bool
	// txStatus is the transaction status of the ReadyForQuery that ended
	// the reply, 0 before it: whether the statement ran in a transaction
	// (see Conn.resendable). Not Conn.TxStatus, which may be a later
	// request's by the time the rows are closed.
	txStatus byte
	// resends is the retry budget of the call that made the rows,
	// carried across its attempts (see retry.go).
	resends resends

	// gaveUp: closeForTxEnd gave the rows up before the end of their
	// reply. Written before use becomes rowsClosed.
	gaveUp bool
	// stopAtComplete: see batch. Kept with the flags above, so that the
	// struct stays in its allocation size class.
	stopAtComplete bool
	// tx is the transaction whose Query made the rows, nil for rows of
	// no transaction (and for a Row's). Set before the rows reach their
	// caller (Tx.track), not changed afterwards.
	tx *Tx
}

// States of a transaction's Rows (Rows.use). A call of the rows' user
// goes from rowsIdle to rowsInCall and back (enter, leave). The
// transaction's end (closeForTx) takes idle rows (rowsClosing) and
// closes them; rows in a call it marks rowsCloseWanted, and the call
// closes them as it returns. Closed, they are rowsClosed, after which
// nothing writes their fields.
const (
	rowsIdle        = iota // no call on the rows under way
	rowsInCall             // a call of the rows' user is under way
	rowsCloseWanted        // a call is under way, and closes the rows as it returns
	rowsClosing            // the transaction's end closes them
	rowsClosed             // closed for the transaction's end
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
		case rowsClosed:
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
			return r.gaveUp, nil
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
// doomed), and their Err is errRowsClosedByTx; it reports that (gaveUp).
func (r *Rows) closeForTxEnd() (gaveUp bool) {
	if r.c != nil {
		r.pending = false
		if !r.done {
			r.setErr(errRowsClosedByTx)
			r.abandoned, gaveUp = true, true
		}
		r.finish()
	}
	r.gaveUp = r.gaveUp || gaveUp
	r.use.Store(rowsClosed)
	return gaveUp
}

// start reads the reply up to the first row or the end of the statement,
// so that errors reported before any row are returned by Query.
func (r *Rows) start() error {
	if r.readRow() {
		r.pending = true
		return nil
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

// readRow reads messages until a DataRow (true) or the end of the reply
// (false, with r.done set and r.err holding the statement's error).
func (r *Rows) readRow() bool {
	c := r.c
	r.big = false
	for {
		typ, body, err := r.nextMessage()
		if err != nil {
			return r.readFailed(err)
		}
		if typ == wire.MsgDataRow && r.unreadable {
			r.seen = true
			continue // skipped (a larger one's body too, by the next read)
		}
		if typ == wire.MsgDataRow && body == nil {
			// Larger than the read buffer: read column by column from
			// the socket by Scan (see stream.go).
			r.seen = true
			if err := r.startBigRow(); err != nil {
				if c.stoppedByCtx(r.req, err) {
					return r.readFailed(errInterrupted)
				}
				return r.fatal(err)
			}
			return true
		}
		first := !r.seen
		r.seen = true
		switch typ {
		case wire.MsgDataRow:
			// Its column lengths are checked by the walk that takes its
			// values for Scan, or before any other use (materialize).
			row, err := wire.SplitDataRow(body)
			if err != nil {
				return r.fatal(protocolErr(err))
			}
			if row.NumColumns() != len(r.sd.fields) {
				return r.fatal(&ProtocolError{Msg: fmt.Sprintf("DataRow has %d columns, RowDescription %d", row.NumColumns(), len(r.sd.fields))})
			}
			r.row = row
			return true
		case wire.MsgRowDescription:
			if err := r.portalDescribed(body); err != nil {
				return r.fatal(err)
			}
		case wire.MsgParseComplete:
			c.parsed(r.req)
		case wire.MsgBindComplete:
			r.bound = true
		case wire.MsgCloseComplete, wire.MsgPortalSuspended, wire.MsgNoData:
		case wire.MsgEmptyQueryResponse:
			if r.stopAtComplete || c.completed(r.req) {
				r.done = true
				return false
			}
		case wire.MsgCommandComplete:
			if r.req.inCommit() {
				// BEGIN's or COMMIT's, after a statement that gave its
				// Sync to the next (see pipeline.go).
				if c.completed(r.req) {
					r.done = true
					return false
				}
				continue
			}
			tag, err := wire.ParseCommandComplete(body)
			if err != nil {
				return r.fatal(protocolErr(err))
			}
			// Runs of a statement mostly end with the same tag ("SELECT 1"):
			// reuse its string rather than allocate one per run.
			if string(tag) != r.sd.lastTag {
				r.sd.lastTag = string(tag)
			}
			r.tag = CommandTag{s: r.sd.lastTag}
			if r.stopAtComplete {
				r.done = true
				return false
			}
			c.completed(r.req)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return r.fatal(err)
			}
			// A named BEGIN or COMMIT after the statement missing on the
			// server session, or the statement itself at its Bind, shows
			// a transaction pooler: the statement's implicit transaction
			// failed, nothing of it persisted.
			// A named BEGIN or COMMIT after the statement missing on the
			// server session, or the statement itself at its Bind, shows
			// a transaction pooler: the statement's implicit transaction
			// failed, nothing of it persisted.
			site := errSite{pooler: c.failed(r.req, &pgErr) || !r.bound && !r.req.inCommit() && c.poolerSign(r.sd, &pgErr)}
			if first && r.batch == nil {
				// Before a run's ParseComplete or BindComplete: a FATAL
				// (pg_terminate_backend, a restart,
				// idle_session_timeout) came before anything of it ran,
				// and it may be sent again on another connection
				// (SafeToRetry).
				site.fatal = fatalBeforeRun
			}
			r.setErr(c.classify(r.req, &pgErr, site))
			if r.stopAtComplete {
				r.done = true
				return false
			}
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(true)
		case wire.MsgCopyOutResponse:
			r.setErr(errCopyOutRows) // its data is skipped
		case wire.MsgCopyData, wire.MsgCopyDone:
		case wire.MsgReadyForQuery:
			r.txStatus = body[0] // checked by Conn.next
			r.done = true
			return false
		default:
			return r.fatal(&ProtocolError{Msg: fmt.Sprintf("unexpected message %q in the reply to a query", typ)})
		}
	}
}

// portalDescribed takes the portal's RowDescription, sent before the rows
// in describe mode: when it differs from the one seen last for this
// statement, the rows are decoded by it (its types and the formats the
// server actually used) and the cache is updated for the next run.
func (r *Rows) portalDescribed(body []byte) error {
	if bytes.Equal(body, r.sd.portalDesc) {
		return nil
	}
	fields, err := parseFields(body)
	if err != nil {
		return err
	}
	used := make([]int16, len(fields))
	for i := range fields {
		used[i] = fields[i].Format
	}
	sd := &stmtDesc{sql: r.sd.sql, name: r.sd.name, paramOIDs: r.sd.paramOIDs, ready: r.sd.ready, traits: r.sd.traits,
		deallocs: r.sd.deallocs, paths: r.sd.paths}
	sd.setFields(fields, r.c.types) // formats for the next Bind
	for i := range fields {
		if used[i] == 1 && sd.formats[i] == 0 && !r.unreadable {
			// Bound for the type the column had when described: the
			// values came in a binary format pgline does not read for
			// the type it has now. Never handed out as bytes.
			r.unreadable = true
			r.setErr(fmt.Errorf("pgline: column %q changed type (now OID %d) since the statement was described, and this run's values came in a binary format pgline does not read for that type; the description is updated: run the statement again", fields[i].Name, fields[i].DataTypeOID))
		}
		sd.fields[i].Format = used[i] // what this run's rows hold
	}
	// When the next Bind asks for other formats, the raw description
	// differs once more and is taken again.
	sd.portalDesc = append([]byte(nil), body...)
	if r.sd.cached != nil {
		// A copy (a one-off unnamed run): the connection's own
		// description stays cached.
		sd.cached = r.sd.origin()
		r.sd = sd
		return nil
	}
	r.c.wmu.Lock()
	if r.sd.elem != nil {
		// Still the cached description (not one described for this run
		// alone, nor one dropped meanwhile): the next run binds by sd.
		r.c.stmts.put(sd)
	}
	r.c.wmu.Unlock()
	r.sd = sd
	return nil
}

// nextMessage returns the next message of the reply (Conn.next; the body
// of a DataRow larger than the read buffer is left to Scan, and nil).
func (r *Rows) nextMessage() (typ byte, body []byte, err error) {
	typ, body, _, err = r.c.next(r.req, readHeader)
	return typ, body, err
}

// readFailed ends the rows on an error of the reply reader: the
// connection failed, or the rows' ctx ended (errInterrupted): Err then
// reports ctx's error, and finish gives the rest of the reply to the
// connection to drain (see Conn.abandon).
func (r *Rows) readFailed(err error) bool {
	if err == errInterrupted {
		r.abandoned = true
		err = r.req.watch.ctx.Err()
	}
	r.setErr(err)
	r.done = true
	return false
}

// fatal ends the rows on an error that closes the connection (I/O,
// protocol): the connection is closed, Err reports err, readRow returns
// false.
func (r *Rows) fatal(err error) bool {
	r.setErr(r.c.fail(err))
	r.done = true
	return false
}

func (r *Rows) setErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Next advances to the next row and reports whether there is one. When it
// returns false the rows are closed; check Err.
func (r *Rows) Next() bool {
	if r.tx != nil && r.enter() {
		defer r.leave()
	}
	if r.c == nil {
		return false
	}
	if r.done {
		r.finish()
		return false
	}
	if r.pending {
		r.pending = false
		if w := &r.req.watch; !w.interrupts || w.ctx.Err() == nil {
			return true
		}
		// Its ctx ended since the row was read (see Conn.next): the
		// caller is answered with its ctx's error, as by a read.
		r.readFailed(errInterrupted)
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
		r.err = r.batch.watch.wrap(r.err)
		r.batch.abandoned = r.batch.abandoned || r.abandoned
		r.c = nil // the batch goes on reading
		return
	}
	if r.abandoned {
		r.c.abandon(r.req)
	} else {
		r.err = r.watch.end(r.err)
		r.c.handoff(r.req)
	}
	r.watch = nil
	r.req = nil
	if r.trace != nil {
		traceEnd(r.traceCtx, r.c.cfg, r.trace, r.tag, r.err)
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
	r.pending = false
	for !r.done {
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
	return r.err
}

// CommandTag returns the command tag of the statement, once the rows are
// closed.
func (r *Rows) CommandTag() CommandTag { return r.tag }

// FieldDescriptions describes the result columns.
func (r *Rows) FieldDescriptions() []FieldDescription {
	if r.sd == nil {
		return nil
	}
	return r.sd.fields
}

// Scan decodes the current row's columns into dest, one destination per
// column (nil skips a column). Values are copied: nothing refers to the
// connection's buffers after Scan returns, except a *sql.RawBytes
// destination, which aliases the row until the next call to Next or
// Close, as database/sql documents (Row.Scan copies it). A column that
// does not fit its destination gives an error naming the column; the row
// can then still be scanned into other destinations.
func (r *Rows) Scan(dest ...any) error {
	if r.tx != nil {
		if !r.enter() {
			return errRowsClosedByTx
		}
		defer r.leave()
	}
	if r.c == nil || r.pending || r.done {
		return errors.New("pgline: Scan called without a current row (call Next first)")
	}
	if len(dest) != len(r.sd.fields) {
		return fmt.Errorf("pgline: Scan got %d destinations for %d columns", len(dest), len(r.sd.fields))
	}
	if r.big {
		return r.scanBig(dest)
	}
	// The row's column lengths are checked by this walk (see readRow).
	row := r.row
	row.Reset()
	plans := r.sd.plans[:len(dest)]
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
	r.row = row
	return nil
}

// malformedRow ends the rows and closes the connection on the current
// row's malformed column lengths, and returns the protocol error.
func (r *Rows) malformedRow() error {
	err := r.row.Check()
	if err == nil {
		err = errors.New("DataRow: malformed") // not reached: Check finds what Scan's walk did
	}
	r.fatal(protocolErr(err))
	return r.err
}

// scanOne decodes column i's value (nil for NULL) into d through cp, the
// column's cached plan (made again when d's type is not the one it was
// made for), with two shortcuts past the call through the plan: a common
// binary value the plan's Inline decodes (an int4 into an *int32...), and
// a short text value bound for a *string, copied into the rows' shared
// block (one allocation for many values and rows; a string kept keeps at
// most 1 KiB alive).
func (r *Rows) scanOne(cp *columnPlan, i int, v []byte, d any) error {
	if cp.dst != typeWord(d) || cp.plan == nil {
		if err := r.replan(cp, i, d); err != nil {
			return err
		}
	}
	if v != nil {
		if cp.inline.Scan(v, d) {
			return nil
		}
		if cp.short && len(v) <= strblock.MaxLen {
			if p, _ := d.(*string); p != nil {
				*p = r.short.String(v)
				return nil
			}
		}
	}
	if err := cp.plan.Scan(v, d); err != nil {
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
	if r.c == nil || r.pending || r.done {
		return errors.New("pgline: ScanColumn called without a current row (call Next first)")
	}
	if i < 0 || i >= len(r.sd.fields) {
		return fmt.Errorf("pgline: ScanColumn: no column %d of %d", i, len(r.sd.fields))
	}
	if err := r.materialize(); err != nil {
		return err
	}
	v, isNull := r.row.Column(i)
	if isNull {
		v = nil
	}
	return r.scanOne(&r.sd.plans[i], i, v, dest)
}

// replan makes cp, column i's plan, for d's type.
func (r *Rows) replan(cp *columnPlan, i int, d any) error {
	plan, err := r.planScan(i, d)
	if err != nil {
		return err
	}
	*cp = columnPlan{dst: typeWord(d), plan: plan, inline: pgtype.InlineOf(plan), short: pgtype.CopiesToString(plan)}
	return nil
}

// planScan makes the scan plan of column i for destinations of d's type.
func (r *Rows) planScan(i int, d any) (pgtype.ScanPlan, error) {
	f := &r.sd.fields[i]
	if _, ok := d.(*StreamDest); ok {
		return newStreamPlan(f)
	}
	plan, err := r.c.types.PlanScan(f.DataTypeOID, f.Format, d)
	if err != nil {
		return nil, r.columnErr(i, err)
	}
	return plan, nil
}

// columnErr names column i in err.
func (r *Rows) columnErr(i int, err error) error {
	return fmt.Errorf("pgline: column %d (%s): %w", i, r.sd.fields[i].Name, err)
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
	if r.c == nil || r.pending || r.done || r.materialize() != nil {
		return nil
	}
	r.raw = r.row.Values(r.raw[:0])
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
	if r.c == nil || r.pending || r.done {
		return nil, errors.New("pgline: Values called without a current row (call Next first)")
	}
	if err := r.materialize(); err != nil {
		return nil, err
	}
	fields := r.sd.fields
	vals := make([]any, len(fields))
	row := r.row
	row.Reset()
	for i := range fields {
		v, isNull, _ := row.Next()
		if isNull {
			continue
		}
		val, err := r.c.types.DecodeValue(fields[i].DataTypeOID, fields[i].Format, v)
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
	owner *holder
	sql   string
	args  []any
}

// Scan scans the first row into dest and closes the rows. It returns
// ErrNoRows when there is no row.
func (r *Row) Scan(dest ...any) error {
	for {
		err := r.scan(dest)
		// The row reached dest only: when a cancel meant for another
		// statement hit the statement, it is run again, and dest
		// overwritten, unless a destination streamed it elsewhere.
		if r.c == nil || streams(dest) || !resendable(r.owner, r.sql, err, r.rows.txStatus) || !r.rows.resends.again(r.ctx, resendInterfered) {
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
	err := rows.Scan(dest...)
	if err == nil {
		ownRawBytes(dest)
	}
	rows.Close()
	if err != nil {
		return err
	}
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
