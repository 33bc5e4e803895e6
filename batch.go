package pgline

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/pool"
)

// Batch is a list of statements sent together in one write and answered
// in order: one round trip for all of them. Queue statements, then send
// the batch with Conn.SendBatch and read each statement's result, in
// order, from the BatchResults.
//
// By default the statements are independent: each ends with its own Sync
// and runs in its own implicit transaction, so an error in one does not
// affect the others. With AllOrNothing set they run in one implicit
// transaction: the first error rolls back those before it, and the ones
// after it are not run.
type Batch struct {
	AllOrNothing bool
	items        []session.BatchItem
}

// Queue adds a statement to the batch. NamedArgs are rewritten now; their
// error, if any, is that of SendBatch.
func (b *Batch) Queue(sql string, args ...any) {
	it := session.BatchItem{SQL: sql, Args: sessionArgs(args)}
	if len(args) == 1 && isNamedArgs(args[0]) {
		it.SQL, it.Args, it.Err = rewriteNamedArgs(sql, args[0])
	}
	b.items = append(b.items, it)
}

// Len returns the number of statements queued.
func (b *Batch) Len() int { return len(b.items) }

// ErrBatchAborted is wrapped by the error of a statement of an
// AllOrNothing batch that was not run because an earlier one failed.
var ErrBatchAborted = errors.New("pgline: not run: an earlier statement of the batch failed")

// BatchResults reads the results of a batch, one statement after the
// other. It holds the connection's reader until Close: always close it.
type BatchResults struct {
	c       *Conn
	rep     session.BatchReply // the reply, and what the statements need to be sent again (batchrun.go)
	i       int                // next statement to read
	cur     *Rows              // the statement being read, if any
	err     error              // a failure that ends the batch (sending, I/O)
	aborted error              // AllOrNothing: the error that stopped the batch
	first   error              // first error of any statement, for Close
	firstAt int                // the index of first's statement
	closed  bool
	pooled  *pool.Conn // the pool connection the batch counts against, if any

	trace    *TraceEvent
	traceCtx context.Context
}

// SendBatch sends b. Statements not yet prepared on the connection are
// prepared first (in one round trip), then every statement's Bind and
// Execute go out in one write.
func (c *Conn) SendBatch(ctx context.Context, b *Batch) *BatchResults {
	return c.sendBatch(ctx, nil, b)
}

// SendBatch sends b inside the transaction (see Conn.SendBatch).
func (tx *Tx) SendBatch(ctx context.Context, b *Batch) *BatchResults {
	if tx.closed() {
		return &BatchResults{err: ErrTxClosed, closed: true}
	}
	return tx.c.sendBatch(ctx, tx.owner(), b)
}

func (c *Conn) sendBatch(ctx context.Context, owner *session.Holder, b *Batch) *BatchResults {
	var tctx context.Context
	var ev *TraceEvent
	if c.cfg.Tracer != nil {
		sqls := make([]string, len(b.items))
		for i := range b.items {
			sqls[i] = b.items[i].SQL
		}
		tctx, ev = c.traceStart(ctx, TraceEvent{Kind: TraceBatch, BatchLen: len(b.items), Batch: sqls, BatchFailed: -1})
	}
	br := c.sendBatchUntraced(ctx, owner, b, session.Resends{})
	if ev != nil {
		br.trace, br.traceCtx = ev, tctx
		if br.rep.Req == nil {
			br.end(br.err)
		}
	}
	return br
}

// sendBatchUntraced is sendBatch without tracing; budget is what the
// batch has used of its retry budget (see BatchResults.resendRefused).
func (c *Conn) sendBatchUntraced(ctx context.Context, owner *session.Holder, b *Batch, budget session.Resends) *BatchResults {
	br := &BatchResults{c: c, rep: session.BatchReply{All: b.AllOrNothing, Resends: budget}}
	if len(b.items) == 0 {
		br.closed = true
		return br
	}
	req, run, err := c.s.StartBatch(ctx, owner, b.AllOrNothing, b.items, &br.rep.Resends)
	if req == nil {
		br.err, br.rep.Sds = err, run // without run, each statement gives its own error
		return br
	}
	br.rep.Req, br.rep.Sds, br.rep.Watch = req, run, c.s.Watch(ctx, req)
	br.rep.Ctx, br.rep.Owner, br.rep.Items = ctx, owner, b.items
	return br
}

// Query returns the rows of the next statement of the batch. They must be
// closed (or read to the end) before the next result is read; reading the
// next result closes them. On an error it also returns Rows that carry
// it (see Conn.Query).
func (br *BatchResults) Query() (*Rows, error) {
	r, err := br.query(nil)
	if err != nil {
		return failedRows(err), err
	}
	return r, nil
}

// query is Query with the rows positioned in dst (nil: a new Rows).
func (br *BatchResults) query(dst *Rows) (*Rows, error) {
	if br.err != nil {
		return nil, br.err
	}
	if br.closed {
		return nil, errors.New("pgline: batch results already closed")
	}
	return br.next(dst)
}

// next positions the rows of the next statement in dst (nil: a new Rows).
func (br *BatchResults) next(dst *Rows) (*Rows, error) {
	if br.cur != nil {
		br.cur.Close()
		br.noteErr(br.cur.res.Err)
		br.cur = nil
	}
	if br.i >= len(br.rep.Sds) {
		return nil, fmt.Errorf("pgline: batch has only %d statements", len(br.rep.Sds))
	}
	i := br.i
	br.i++
	if br.aborted != nil {
		return nil, fmt.Errorf("pgline: batch statement %d: %w (%w)", i, ErrBatchAborted, br.aborted)
	}
	sd := br.rep.Sds[i]
	if sd.Err != nil { // not prepared, not sent
		err := fmt.Errorf("pgline: batch statement %d: %w", i, sd.Err)
		br.noteErr(err)
		return nil, err
	}
	r := dst
	if r == nil {
		r = &Rows{}
	}
	*r = Rows{c: br.c, batch: br}
	again, err := br.rep.StartStatement(&br.c.s, i, &r.res)
	if err != nil {
		r.c = nil // the batch goes on reading
	}
	switch {
	case again == session.ResendRest:
		return br.resendRefused(i, err, r)
	case again == session.ResendLast:
		return br.resend(i, err, r)
	case err != nil:
		br.noteErr(err)
		return nil, err
	}
	br.cur = r
	return r, nil
}

// resendRefused sends the batch's statements from i on again, as a batch
// of their own (see mayResendRefused), and positions statement i's rows
// in r. The rest of the refused reply, the refusals of the statements
// after i, is read first and the connection handed on (release); the
// statements are then queued behind every request queued meanwhile, the
// ROLLBACK of the block included. When the rest cannot be read, statement
// i's error (hit) stands.
func (br *BatchResults) resendRefused(i int, hit error, r *Rows) (*Rows, error) {
	if err := br.rep.Release(&br.c.s); err != nil {
		br.noteErr(hit)
		return nil, hit
	}
	if err := br.rep.SendFrom(&br.c.s, i); err != nil {
		br.err = err
		return nil, err
	}
	br.i = i
	return br.next(r)
}

// resend sends statement i, the batch's last, again, on its own, and
// returns its rows. Its reply comes after every request queued behind the
// batch, so the rest of the batch's reply (its last ReadyForQuery) is
// read first and the connection handed on. When the rest cannot be read,
// statement i's error (hit) stands. The statement's rows go to r.
func (br *BatchResults) resend(i int, hit error, r *Rows) (*Rows, error) {
	c := br.c
	if !br.rep.Released {
		if err := br.rep.Release(&c.s); err != nil {
			br.noteErr(hit)
			return nil, hit
		}
	}
	*r = Rows{resends: br.rep.Resends} // the batch's budget
	if err := c.query(br.rep.Ctx, nil, r, br.rep.Items[i].SQL, br.rep.Items[i].Args); err != nil {
		br.noteErr(err)
		return nil, err
	}
	br.cur = r
	return r, nil
}

// Exec returns the command tag of the next statement of the batch.
func (br *BatchResults) Exec() (CommandTag, error) {
	r, err := br.Query()
	if err != nil {
		return CommandTag{}, err
	}
	r.Close()
	br.cur = nil
	br.noteErr(r.res.Err)
	return CommandTag{s: r.res.Tag}, r.res.Err
}

// QueryRow returns the first row of the next statement of the batch.
func (br *BatchResults) QueryRow() *Row {
	row := &Row{}
	if _, err := br.query(&row.rows); err != nil { // br.cur is &row.rows
		row.err = err
	}
	return row
}

// noteErr records a statement's error: the first one is returned by
// Close, and in an AllOrNothing batch it stops the statements after it.
func (br *BatchResults) noteErr(err error) {
	if err == nil {
		return
	}
	if br.first == nil {
		br.first = err
		br.firstAt = br.i - 1 // the statement read last (see next)
	}
	var pgErr *PgError
	if br.rep.All && errors.As(err, &pgErr) {
		br.aborted = err
	}
	if !errors.As(err, &pgErr) && br.c.IsClosed() {
		br.err = err
	}
}

// Close reads (and discards) the results not read yet, releases the
// connection, and returns the first error of the batch, if any.
func (br *BatchResults) Close() error {
	if br.closed {
		return br.err
	}
	br.closed = true
	if br.err != nil && br.rep.Req == nil {
		// Nothing was sent, or the batch's statements, sent again, were
		// not (see resendRefused).
		return br.end(br.err)
	}
	if br.cur != nil {
		br.cur.Close()
		br.noteErr(br.cur.res.Err)
		br.cur = nil
	}
	c := br.c
	// Read the statements not read yet, for their errors.
	for br.i < len(br.rep.Sds) && br.err == nil && !br.rep.Abandoned && !c.IsClosed() {
		r, err := br.next(nil)
		if err != nil {
			continue // noted by Query
		}
		r.Close()
		br.noteErr(r.res.Err)
		br.cur = nil
	}
	err := br.err
	if br.rep.Released { // the rest of the reply was read (see resend)
		if br.first != nil {
			err = br.first
		}
	} else if br.rep.Req == nil { // nothing was sent: every statement failed to prepare
		err = br.first
	} else {
		err = br.rep.EndReply(&c.s, br.first, err)
	}
	return br.end(err)
}

// end ends Close, which returns err: the trace, and the pool connection
// the batch counted against, if any.
func (br *BatchResults) end(err error) error {
	if br.trace != nil && err != nil && br.first != nil && errors.Is(err, br.first) {
		br.trace.BatchFailed = br.firstAt
	}
	traceEnd(br.traceCtx, br.c.cfg, br.trace, CommandTag{}, err)
	br.trace = nil
	if pc := br.pooled; pc != nil {
		br.pooled = nil
		pc.Done(true)
	}
	return err
}
