package pgline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pgline/pgline/internal/pool"
	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
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
	items        []batchItem
}

type batchItem struct {
	sql  string
	args []any
	err  error // NamedArgs that could not be rewritten: fails the batch
}

// Queue adds a statement to the batch. NamedArgs are rewritten now; their
// error, if any, is that of SendBatch.
func (b *Batch) Queue(sql string, args ...any) {
	it := batchItem{sql: sql, args: args}
	if len(args) == 1 && isNamedArgs(args[0]) {
		it.sql, it.args, it.err = rewriteNamedArgs(sql, args[0])
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
	req     *request
	watch   *ctxWatch
	sds     []*stmtDesc
	all     bool
	i       int   // next statement to read
	cur     *Rows // the statement being read, if any
	err     error // a failure that ends the batch (sending, I/O)
	aborted error // AllOrNothing: the error that stopped the batch
	first   error // first error of any statement, for Close
	closed  bool
	pooled  *pool.Conn // the pool connection the batch counts against, if any
	// abandoned: the ctx ended while the reply was read; Close gives
	// the rest of it to the connection to drain (see Conn.abandon).
	abandoned bool

	// What was sent, for a statement sent again (see resend): the ctx,
	// the transaction, the statements.
	ctx   context.Context
	owner *holder
	items []batchItem
	// released: the last statement was sent again, the batch's request
	// handed on (see resend).
	released bool
	// resends is the batch's retry budget (see retry.go), carried into
	// the batches and statements it sends again.
	resends resends

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

func (c *Conn) sendBatch(ctx context.Context, owner *holder, b *Batch) *BatchResults {
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceBatch, BatchLen: len(b.items)})
	br := c.sendBatchUntraced(ctx, owner, b, resends{})
	if ev != nil {
		if br.req == nil {
			traceEnd(tctx, c.cfg, ev, CommandTag{}, br.err)
		} else {
			br.trace, br.traceCtx = ev, tctx
		}
	}
	return br
}

// sendBatchUntraced is sendBatch without tracing; budget is what the
// batch has used of its retry budget (see BatchResults.resendRefused).
func (c *Conn) sendBatchUntraced(ctx context.Context, owner *holder, b *Batch, budget resends) *BatchResults {
	br := &BatchResults{c: c, all: b.AllOrNothing, resends: budget}
	if len(b.items) == 0 {
		br.closed = true
		return br
	}
	for i, it := range b.items {
		if it.err != nil {
			br.err = notSent(fmt.Errorf("pgline: batch statement %d: %w", i, it.err))
			return br
		}
		if sqllex.Scan(it.sql).CopyFromStdin {
			br.err = notSent(errors.New("pgline: COPY FROM STDIN cannot run in a batch"))
			return br
		}
	}
	sqls := make([]string, len(b.items))
	for i, it := range b.items {
		sqls[i] = it.sql
	}
	if err := ctx.Err(); err != nil {
		br.err = err
		return br
	}
	for {
		req, run, again, err := c.queueBatch(ctx, owner, b, sqls, &br.resends)
		if again && br.resends.again(ctx, resendPathChanged) {
			continue // nothing sent: described again under the new search_path
		}
		if err != nil || req == nil {
			br.err, br.sds = err, run // no request: each statement gives its own error
			return br
		}
		if err := c.waitTurn(ctx, req); err != nil {
			br.err = err
			return br
		}
		br.req, br.sds, br.watch = req, run, c.watch(ctx, req)
		br.ctx, br.owner, br.items = ctx, owner, b.items
		return br
	}
}

// queueBatch prepares b's statements (their texts, sqls) and queues
// their runs in one request: the request, and what each statement is
// bound as. Without a request or an error, none of the statements could
// be prepared, and each has its own error (run). again reports that
// nothing was sent because a statement that may change search_path,
// queued by another caller, came between the statements' describe and
// their Binds (errPathChanged): the batch may be described again and
// sent, as a single statement is (see maxPathRetries). A change queued
// by a statement of the batch itself, before another of its statements,
// is not retried: that statement would be described under the old
// search_path each time; the batch fails with errPathChanged.
func (c *Conn) queueBatch(ctx context.Context, owner *holder, b *Batch, sqls []string, budget *resends) (req *request, run []*stmtDesc, again bool, err error) {
	c.wmu.Lock()
	c.followPoolerLocked()
	sds, err := c.prepareAllUnlock(ctx, owner, sqls, true)
	if err != nil {
		return nil, nil, false, err
	}
	for slices.ContainsFunc(sds, func(sd *stmtDesc) bool { return describeAgain(sd, owner) }) && budget.again(ctx, resendInterfered) {
		// A Parse showed a transaction pooler, or a CancelRequest meant
		// for another statement failed a describe, or another owner's
		// describe failed (see describeAgain): the statements are
		// described again (in describe mode, after a pooler).
		c.wmu.Lock()
		unpinLocked(sds)
		if sds, err = c.prepareAllUnlock(ctx, owner, sqls, true); err != nil {
			return nil, nil, false, err
		}
	}
	// Pinned until the Binds are queued (after send), so that no Close of
	// them goes out before.
	defer func() {
		c.wmu.Lock()
		unpinLocked(sds)
		c.wmu.Unlock()
	}()
	// A statement the server could not prepare fails alone in an
	// independent batch (it is not sent); it fails the whole batch in an
	// all-or-nothing one.
	sent := 0
	for i, sd := range sds {
		switch {
		case sd.err != nil && b.AllOrNothing:
			return nil, nil, false, notSent(fmt.Errorf("pgline: batch statement %d: %w", i, sd.err))
		case sd.err != nil:
			continue
		case len(b.items[i].args) != len(sd.paramOIDs):
			return nil, nil, false, notSent(fmt.Errorf("pgline: batch statement %d has %d parameters, but %d arguments were given", i, len(sd.paramOIDs), len(b.items[i].args)))
		}
		sent++
	}
	if sent == 0 {
		return nil, sds, false, nil
	}
	// run is what each statement is bound as: sds, or a copy once a
	// statement goes unnamed.
	run = sds
	// An all-or-nothing batch that begins and ends its own block (BEGIN
	// ... COMMIT) and fails before its COMMIT leaves the session in the
	// block, which the server skipped up to the Sync: nobody holds it
	// (see blockTraits.leavesStranded), as after such a text given to Exec.
	// Both need transaction control among the statements, which their
	// cached traits tell without a scan.
	spec := reqSpec{owner: owner, extended: true}
	if !b.AllOrNothing {
		spec.syncs = sent
	}
	spec.txControl = owner == nil && slices.ContainsFunc(sds, func(sd *stmtDesc) bool { return sd.traits.txControl })
	spec.endsBlock = b.AllOrNothing && spec.txControl && endsBlock(sqls)
	req, err = c.send(ctx, &spec, func(buf []byte) ([]byte, error) {
		for i, it := range b.items {
			sd := sds[i]
			if sd.err != nil {
				continue
			}
			u, err := c.boundLocked(sd, owner)
			if err != nil {
				// Sent again unless the change is the batch's own.
				again = errors.Is(err, errPathChanged) && !slices.ContainsFunc(sds[:i], func(sd *stmtDesc) bool {
					return sd.err == nil && sd.traits.changesPath
				})
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			}
			if u != sd { // after a DEALLOCATE, maybe this batch's own
				if &run[0] == &sds[0] {
					run = slices.Clone(sds)
				}
				sd, run[i] = u, u
			}
			if buf, err = c.appendRun(buf, sd, it.args, !b.AllOrNothing, nil); err != nil {
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			}
		}
		if b.AllOrNothing {
			buf = wire.AppendSync(buf)
		}
		return buf, nil
	})
	if err != nil {
		return nil, nil, again, err
	}
	return req, run, false, nil
}

// endsBlock reports whether the statements sqls, run in turn, begin a
// transaction block and end it (sqllex.Info.EndsBlock). Each is one
// statement (the extended protocol runs no more), which a line break
// ends should it end with a comment.
func endsBlock(sqls []string) bool {
	return sqllex.Scan(strings.Join(sqls, "\n;\n")).EndsBlock
}

// Query returns the rows of the next statement of the batch. They must be
// closed (or read to the end) before the next result is read; reading the
// next result closes them.
func (br *BatchResults) Query() (*Rows, error) {
	return br.query(nil)
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
		br.noteErr(br.cur.err)
		br.cur = nil
	}
	if br.i >= len(br.sds) {
		return nil, fmt.Errorf("pgline: batch has only %d statements", len(br.sds))
	}
	i := br.i
	br.i++
	if br.aborted != nil {
		return nil, fmt.Errorf("pgline: batch statement %d: %w (%w)", i, ErrBatchAborted, br.aborted)
	}
	sd := br.sds[i]
	if sd.err != nil { // not prepared, not sent
		err := fmt.Errorf("pgline: batch statement %d: %w", i, sd.err)
		br.noteErr(err)
		return nil, err
	}
	r := dst
	if r == nil {
		r = &Rows{}
	}
	*r = Rows{c: br.c, result: result{sd: sd, req: br.req, inBatch: true, stopAtComplete: br.all}, batch: br}
	if err := r.start(); err != nil {
		r.finish()
		sent := br.sent()
		if sent.mayResendRefused(i, r.err) && br.resends.again(br.ctx, resendInterfered) {
			return br.resendRefused(i, r.err, r)
		}
		if sent.mayResend(i, r.err, r.txStatus) && br.resends.again(br.ctx, resendInterfered) {
			return br.resend(i, r.err, r)
		}
		br.noteErr(r.err)
		var pgErr *PgError
		if errors.As(r.err, &pgErr) {
			br.c.dropOutdated(sd, pgErr.Code, pgErr.Message) // the next use prepares it again
		}
		return nil, r.err
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
	if err := br.release(); err != nil {
		br.noteErr(hit)
		return nil, hit
	}
	again := br.c.sendBatchUntraced(br.ctx, br.owner, &Batch{AllOrNothing: br.all, items: br.items[i:]}, br.resends)
	br.resends = again.resends
	if again.err != nil {
		br.err = again.err
		return nil, again.err
	}
	br.req, br.watch, br.released = again.req, again.watch, false
	br.sds = append(br.sds[:i:i], again.sds...)
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
	if !br.released {
		if err := br.release(); err != nil {
			br.noteErr(hit)
			return nil, hit
		}
	}
	*r = Rows{resends: br.resends} // the batch's budget
	if err := c.query(br.ctx, nil, r, br.items[i].sql, br.items[i].args); err != nil {
		br.noteErr(err)
		return nil, err
	}
	br.cur = r
	return r, nil
}

// release reads the rest of the batch's reply and hands the connection
// on; it fails when the rest cannot be read.
func (br *BatchResults) release() error {
	c := br.c
	if err := c.drainReply(br.req); err != nil {
		if err == errInterrupted {
			br.abandoned = true // Close drains what is left
		}
		return err
	}
	br.watch.stop()
	c.handoff(br.req) // br.req and its watch are reused from here on
	br.req, br.watch, br.released = nil, nil, true
	return nil
}

// Exec returns the command tag of the next statement of the batch.
func (br *BatchResults) Exec() (CommandTag, error) {
	r, err := br.Query()
	if err != nil {
		return CommandTag{}, err
	}
	r.Close()
	br.cur = nil
	br.noteErr(r.err)
	return CommandTag{s: r.tag}, r.err
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
	}
	var pgErr *PgError
	if br.all && errors.As(err, &pgErr) {
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
	if br.err != nil && br.req == nil {
		// Nothing was sent, or the batch's statements, sent again, were
		// not (see resendRefused).
		return br.end(br.err)
	}
	if br.cur != nil {
		br.cur.Close()
		br.noteErr(br.cur.err)
		br.cur = nil
	}
	c := br.c
	// Read the statements not read yet, for their errors.
	for br.i < len(br.sds) && br.err == nil && !br.abandoned && !c.IsClosed() {
		r, err := br.next(nil)
		if err != nil {
			continue // noted by Query
		}
		r.Close()
		br.noteErr(r.err)
		br.cur = nil
	}
	err := br.err
	if br.released { // the rest of the reply was read (see resend)
		if br.first != nil {
			err = br.first
		}
	} else if br.req == nil { // nothing was sent: every statement failed to prepare
		err = br.first
	} else {
		if br.all && !br.abandoned && c.drainReply(br.req) == errInterrupted {
			// The end of the reply: the batch's one ReadyForQuery.
			br.abandoned = true
		}
		if br.abandoned {
			err = c.abandon(br.req)
			if br.first != nil {
				err = br.first
			}
		} else {
			br.watch.stop()
			if br.first != nil {
				err = br.watch.wrap(br.first)
			}
			c.handoff(br.req) // br.req and its watch are reused from here on
		}
		br.watch = nil
		br.req = nil
	}
	return br.end(err)
}

// end ends Close, which returns err: the trace, and the pool connection
// the batch counted against, if any.
func (br *BatchResults) end(err error) error {
	traceEnd(br.traceCtx, br.c.cfg, br.trace, CommandTag{}, err)
	br.trace = nil
	if pc := br.pooled; pc != nil {
		br.pooled = nil
		pc.Done(true)
	}
	return err
}

// sent is what the retry policy asks of the batch (see batchSent).
func (br *BatchResults) sent() batchSent {
	return batchSent{owner: br.owner, all: br.all, abandoned: br.abandoned, n: len(br.items), sql: func(i int) string { return br.items[i].sql }, sds: br.sds}
}
