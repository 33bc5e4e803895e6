package pgline

// Protocol flow of a query (extended protocol):
//
//	first use of an SQL text (statement_cache_mode=prepare):
//	  client: Parse(name, sql) Describe(S, name) Sync
//	  server: ParseComplete ParameterDescription (RowDescription | NoData) ReadyForQuery
//	every run:
//	  client: Bind(name, args, result formats) Execute Sync
//	  server: BindComplete DataRow* (CommandComplete | EmptyQueryResponse | ErrorResponse) ReadyForQuery
//
// In describe mode the unnamed statement is used and each run starts with
// Parse(unnamed, sql, parameter types), in the same round trip.

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
)

// Query runs sql with args and returns its rows. The rows hold the
// connection's reader until they are closed (by Close, or by Next
// returning false): always close them; statements queued behind them wait.
// Errors that the server reports before the first row (syntax, bad
// arguments, a failing first row) are returned by Query itself.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	r := &Rows{}
	if err := c.query(ctx, nil, r, sql, args); err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRow runs sql with args and returns its first row; the error, if
// any, is returned by Row.Scan (ErrNoRows when there is no row). Scan must
// be called: until then the reply holds the connection, as open Rows do.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{} // QueryRow stays inlinable: the Row on the caller's stack
	row.err = c.queryRow(ctx, row, sql, args)
	return row
}

// queryRow runs QueryRow's statement into row, noting what it ran so that
// Scan may send it again (see Row). It is not inlined, so that QueryRow
// is, and the Row stays on its caller's stack.
//
//go:noinline
func (c *Conn) queryRow(ctx context.Context, row *Row, sql string, args []any) error {
	row.c, row.ctx, row.sql, row.args = c, ctx, sql, args
	return c.query(ctx, nil, &row.rows, sql, args)
}

// Exec runs sql and returns the command tag of its last statement. Without
// arguments sql may hold several statements separated by semicolons (they
// run with the simple protocol, in one implicit transaction unless they
// manage their own); with arguments it is one statement, prepared and
// cached like a query.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	return c.exec(ctx, nil, sql, args)
}

func (c *Conn) exec(ctx context.Context, owner *holder, sql string, args []any) (CommandTag, error) {
	if len(args) == 0 {
		return c.simpleQuery(ctx, owner, sql, nil)
	}
	var r Rows
	for {
		r = Rows{resends: r.resends} // one budget for the call
		if err := c.query(ctx, owner, &r, sql, args); err != nil {
			return CommandTag{}, err
		}
		r.Close()
		// Its rows went nowhere: hit by a cancel meant for another
		// statement, it is sent again.
		if resendable(owner, sql, r.err, r.txStatus) && r.resends.again(ctx, resendInterfered) {
			continue
		}
		return r.tag, r.err
	}
}

// query runs sql for owner (nil, or the transaction holding the
// connection) and leaves r positioned before its first row, at the head of
// the queue. A run refused because its cached statement went stale (its
// result type changed, or it was deallocated) is sent again once, and one
// hit before its first row by a CancelRequest aimed at another request
// up to maxCancelRetries times, when it cannot have had an effect. One
// described before another statement that may change search_path was
// queued, and so never sent (errPathChanged), is described again and
// sent, up to maxPathRetries times: a budget of its own.
//
// Every statement with arguments enters here (Query, QueryRow, and Exec
// with arguments, of a Conn, a Tx or a Pool): NamedArgs are rewritten
// here, and what is traced and sent is the rewritten text.
func (c *Conn) query(ctx context.Context, owner *holder, r *Rows, sql string, args []any) error {
	if len(args) == 1 && isNamedArgs(args[0]) {
		var err error
		if sql, args, err = rewriteNamedArgs(sql, args[0]); err != nil {
			return notSent(err)
		}
	}
	if len(args) > maxParams {
		return tooManyParams(len(args), "arguments")
	}
	if c.cfg.Tracer == nil {
		return c.run(ctx, owner, r, sql, args)
	}
	return c.runTraced(ctx, owner, r, sql, args)
}

// runTraced is run with the statement traced. Kept out of query, whose
// frame is on the stack of every statement: a smaller stack there spares
// goroutines that park between statements (a Pool's waiting line) a
// stack copy each time they run one.
//
//go:noinline
func (c *Conn) runTraced(ctx context.Context, owner *holder, r *Rows, sql string, args []any) error {
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceStatement, SQL: sql, Args: args})
	err := c.run(ctx, owner, r, sql, args)
	if err != nil {
		traceEnd(tctx, c.cfg, ev, CommandTag{}, err)
		return err
	}
	r.trace, r.traceCtx = ev, tctx
	return nil
}

// run is query without tracing.
func (c *Conn) run(ctx context.Context, owner *holder, r *Rows, sql string, args []any) error {
	streamed := hasReaderArg(args)
	// A run sent again after its Sync group failed does not join a group
	// again, so that a run of failures cannot hold it back for ever.
	share := !streamed
	budget := &r.resends // the call's, kept in r across attempts (see Row.Scan)
	var hold *copyHold   // the connection is held for a COPY FROM STDIN
	for {
		sd, err := c.prepare(ctx, owner, sql)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				// The ctx ended while the statement was being prepared:
				// it was never sent, and the error says so.
				return notSent(err)
			}
			if redescribe(err) && owner == nil && budget.again(ctx, resendInterfered) {
				continue // prepared again (in describe mode, after a pooler)
			}
			return err
		}
		if sd.traits.copyIn && hold == nil {
			// COPY FROM STDIN runs alone (see holdForCopy), even among
			// its transaction's goroutines.
			hold, err = c.holdForCopy(ctx, owner)
			if err != nil {
				c.unpin(sd)
				return err
			}
			defer hold.release() // once: held from now on
			owner = &hold.h
		}
		if len(args) != len(sd.paramOIDs) {
			c.unpin(sd)
			return notSent(fmt.Errorf("pgline: statement has %d parameters, but %d arguments were given", len(sd.paramOIDs), len(args)))
		}
		// Unpinned as its Bind is queued (build runs under wmu), or after
		// a send that failed before.
		pinned := true
		build := func(buf []byte, holes *[]hole) ([]byte, error) {
			if pinned {
				sd.pins--
				pinned = false
			}
			var err error
			if sd, err = c.boundLocked(sd, owner); err != nil { // the Rows read sd
				return nil, err
			}
			return c.appendRun(buf, sd, args, true, holes)
		}
		spec := reqSpec{
			owner: owner, extended: true, oneStmt: true,
			endsBlock: owner == nil && sd.traits.endsBlock, // a COMMIT given to Query: see blockTraits.leavesStranded
			txControl: owner == nil && sd.traits.txControl,
		}
		if hold != nil {
			spec.onDrained = hold.releaseNow // see copyHold.spec
		}
		var req *request
		if streamed {
			req, err = c.sendStreamed(ctx, &spec, build)
		} else {
			req, err = c.sendRun(ctx, &spec, func(buf []byte) ([]byte, error) { return build(buf, nil) }, share && sd.traits.shareable)
		}
		if pinned {
			c.unpin(sd)
		}
		if errors.Is(err, errPathChanged) && budget.again(ctx, resendPathChanged) {
			continue // nothing sent: described again under the new search_path
		}
		if err != nil {
			return err
		}
		if hold != nil {
			err = hold.waitTurn(ctx, req)
		} else {
			err = c.waitTurn(ctx, req)
		}
		if err != nil {
			return err
		}
		if req.skipped {
			// A statement before it in its Sync group failed: the server
			// skipped it (see pipeline.go).
			inBlock := req.skippedInBlock
			c.handoff(req)
			if inBlock {
				return errSkippedInBlock
			}
			share = false
			continue
		}
		*r = Rows{c: c, sd: sd, req: req, resends: *budget}
		if hold != nil {
			r.watch = c.watchCopy(ctx, req) // alone on the connection
		} else {
			r.watch = c.watch(ctx, req)
		}
		err = r.start()
		if err == nil {
			return nil
		}
		r.finish()
		err = r.err
		var pgErr *PgError
		if !errors.As(err, &pgErr) {
			return err
		}
		if c.dropOutdated(sd, pgErr) {
			// Nothing ran: prepare again and retry, outside a
			// transaction (inside one, the error aborted it).
			if r.txStatus == 'I' && budget.again(ctx, resendStale) {
				continue
			}
			return err
		}
		if resendable(owner, sql, err, r.txStatus) && budget.again(ctx, resendInterfered) {
			continue // a cancel meant for another request
		}
		return err
	}
}

// prepare returns the description of sql, from the cache or by asking the
// server (Parse, Describe, Sync). A statement counts as prepared when its
// Parse is queued: a concurrent use of the same SQL waits for that
// description instead of sending a second Parse, and gets the original
// error when the Parse fails (the entry is then dropped, so the next use
// prepares again). The description returned is pinned (the cache does not
// evict it, see stmtDesc.pins): the caller unpins it once its Bind is
// queued, so that no Close of the statement goes out before the Bind.
func (c *Conn) prepare(ctx context.Context, owner *holder, sql string) (*stmtDesc, error) {
	c.wmu.Lock()
	c.followPoolerLocked()
	if sd := c.cachedLocked(owner, sql); sd != nil {
		sd.pins++
		c.wmu.Unlock()
		ready, err := waitReady(ctx, sd)
		if err == nil {
			return sd, nil
		}
		c.unpin(sd)
		// Not ready: sd.err may yet be set by whoever reads the reply.
		if !ready || !describeAgain(sd, owner) || redescribe(err) {
			return nil, err // redescribe: the caller's run describes again
		}
		// Another's describe failed, maybe for its transaction's state:
		// the caller describes the statement itself (the failed
		// description has left the cache).
		c.wmu.Lock()
		c.followPoolerLocked()
	}
	sds, err := c.prepareAllUnlock(ctx, owner, []string{sql}, true)
	if err != nil {
		return nil, err
	}
	if err := sds[0].err; err != nil {
		c.unpin(sds[0])
		return nil, err
	}
	return sds[0], nil
}

// unpin undoes a pin of sd (see prepare).
func (c *Conn) unpin(sd *stmtDesc) {
	c.wmu.Lock()
	sd.pins--
	c.wmu.Unlock()
}

// prepareAllUnlock returns the descriptions of sqls, describing those not cached
// in one round trip (one Sync each, so that one failing Parse does not
// affect the others). A statement the server could not describe has its
// error in its err; the error returned is ctx's or the connection's. The
// caller holds wmu; it is released.
func (c *Conn) prepareAllUnlock(ctx context.Context, owner *holder, sqls []string, pin bool) ([]*stmtDesc, error) {
	sds := make([]*stmtDesc, len(sqls))
	var req *request
	err := c.gateLocked(ctx, owner)
	if err == nil {
		buf := c.appendClosesLocked(c.writer.buf())
		var describes []*stmtDesc
		uncached := owner.pathChanged()
		for i, sql := range sqls {
			if sds[i] = c.cachedLocked(owner, sql); sds[i] != nil {
				if pin {
					sds[i].pins++
				}
				continue
			}
			if n := sqllex.HighestParam(sql, maxParams); n > 0 {
				err = tooManyParams(n, "parameters")
				break
			}
			sd := c.stmts.newDesc(sql, uncached)
			sd.owner = owner
			if buf, err = wire.AppendParse(buf, sd.name, sql, nil); err == nil {
				buf, err = wire.AppendDescribe(buf, 'S', sd.name)
			}
			if err != nil {
				break
			}
			buf = wire.AppendSync(buf)
			if pin {
				sd.pins++
			}
			if !uncached {
				c.stmts.put(sd) // now, so that the same SQL later in sqls finds it
			}
			sds[i] = sd
			describes = append(describes, sd)
		}
		if err != nil {
			for _, sd := range describes {
				c.stmts.remove(sd)
			}
			if pin {
				unpinLocked(sds)
			}
		} else if len(describes) > 0 {
			c.writer.queue(buf)
			c.closesQueuedLocked()
			req = c.submitLocked(&reqSpec{owner: owner, describes: describes, syncs: len(describes)})
		}
	}
	if err != nil {
		c.wmu.Unlock()
		return nil, notSent(err)
	}
	fail := func(err error) ([]*stmtDesc, error) {
		if pin {
			c.wmu.Lock()
			unpinLocked(sds)
			c.wmu.Unlock()
		}
		return nil, err
	}
	if req != nil {
		c.writer.flushUnlock(req, ctx.Done() == nil)
		if _, err := c.readReply(ctx, req, c.readDescribeReply); err != nil {
			return fail(err) // whoever drains the reply completes the statements
		}
	} else {
		c.wmu.Unlock()
	}
	for _, sd := range sds {
		if ready, err := waitReady(ctx, sd); !ready {
			return fail(err)
		}
	}
	return sds, nil
}

// cachedLocked returns the cached description of sql for owner, nil when
// there is none or owner runs in a transaction that may have changed
// search_path (holder.pathChanged), whose statements are described for
// each run. The caller holds wmu.
func (c *Conn) cachedLocked(owner *holder, sql string) *stmtDesc {
	if owner.pathChanged() {
		return nil
	}
	return c.stmts.get(sql)
}

// unpinLocked undoes prepareAllUnlock's pins (the caller holds wmu).
func unpinLocked(sds []*stmtDesc) {
	for _, sd := range sds {
		if sd != nil {
			sd.pins--
		}
	}
}

// waitReady waits until sd is described (ready) and returns why it could
// not be, if it could not; or ctx's error when ctx ends first, with sd
// not ready: its err is not to be read then (whoever reads its reply
// may be setting it).
func waitReady(ctx context.Context, sd *stmtDesc) (ready bool, err error) {
	select {
	case <-sd.ready:
	default:
		select {
		case <-sd.ready:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return true, sd.err
}

// readDescribes reads the reply of a describe request: for each statement,
// ParseComplete, ParameterDescription, RowDescription or NoData, then
// ReadyForQuery, or an ErrorResponse. Each statement is completed (ready
// closed) whatever happens; a failed one leaves the cache. It goes on
// from the statement where an interrupted read left off (see
// request.described), and returns errInterrupted when interrupted.
func (c *Conn) readDescribes(req *request) error {
	var failure error // an I/O or protocol error: every statement left fails
	for ; req.described < len(req.describes); req.described++ {
		sd := req.describes[req.described]
		if failure == nil {
			if failure = c.readDescribe(req, sd); failure == errInterrupted {
				return failure
			}
		}
		if failure != nil && sd.err == nil {
			// A describe runs nothing, and the statement waiting for it
			// was not sent: it may be sent again elsewhere.
			sd.err = notSent(failure)
		}
		if sd.err != nil {
			c.wmu.Lock()
			c.stmts.remove(sd)
			c.wmu.Unlock()
		}
		close(sd.ready)
	}
	return nil
}

// readDescribe reads one statement's describe reply up to ReadyForQuery.
// It returns an I/O or protocol error, or errInterrupted; the server's
// error goes to sd.err.
func (c *Conn) readDescribe(req *request, sd *stmtDesc) error {
	for {
		typ, body, _, err := c.next(req, readWhole)
		if err != nil {
			return err
		}
		switch typ {
		case wire.MsgParseComplete, wire.MsgCloseComplete, wire.MsgNoData:
		case wire.MsgParameterDescription:
			pd, err := wire.ParseParameterDescription(body)
			if err != nil {
				return c.fail(protocolErr(err))
			}
			sd.paramOIDs = append([]uint32(nil), pd.OIDs...)
		case wire.MsgRowDescription:
			fields, err := parseFields(body)
			if err != nil {
				return c.fail(err)
			}
			sd.setFields(fields, c.types)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return c.fail(err)
			}
			if sd.err == nil {
				// A describe runs nothing, and every user of the
				// statement waits for it (shared): an error that is not
				// the statement's own means it was not sent, and whoever
				// waits for it describes again (see Conn.run).
				err := c.classify(req, pgErr, errSite{fatal: fatalBeforeRun, pooler: c.poolerSign(sd, pgErr), shared: true})
				if err != error(pgErr) && !isNotSent(err) {
					err = notSent(err)
				}
				sd.err = err
			}
		case wire.MsgReadyForQuery:
			if sd.plans == nil {
				sd.setFields(nil, c.types)
			}
			return nil
		default:
			return c.fail(&ProtocolError{Msg: fmt.Sprintf("unexpected message %q in the reply to a describe", typ)})
		}
	}
}

// appendClosesLocked appends Close messages for statements evicted from
// the cache. They stay listed until the caller's messages are queued
// (closesQueuedLocked): a request that fails to build leaves them to the
// next, or a statement left on the server would be prepared again under
// its name (42P05, taken for a pooler's sign). The caller holds wmu.
func (c *Conn) appendClosesLocked(buf []byte) []byte {
	for _, name := range c.stmts.closing {
		var err error
		if buf, err = wire.AppendClose(buf, 'S', name); err != nil {
			break // cannot happen: the name is ours
		}
	}
	c.stmts.appended = len(c.stmts.closing)
	return buf
}

// closesQueuedLocked notes that the Close messages appendClosesLocked
// appended are in the write buffer; statements evicted since (by the
// caller's own describes) stay listed. The caller holds wmu.
func (c *Conn) closesQueuedLocked() {
	sc := c.stmts
	sc.closing = append(sc.closing[:0], sc.closing[sc.appended:]...)
	sc.appended = 0
}

// errPathChanged is the error of a statement described before a statement
// that may change search_path was queued on its connection (see
// Conn.boundLocked): nothing of it was sent. Conn.run and SendBatch
// describe it again and send it (see maxPathRetries), unless the change
// is a statement of the same batch.
var errPathChanged = errors.New("pgline: a statement that may change search_path was queued after this statement was described (its parameter and result types may differ now); nothing was sent")

// boundLocked returns the description a run of sd for owner binds: sd,
// or, when a statement that may deallocate prepared statements was queued
// since sd's named statement was prepared (its Parse queued), a copy of
// sd parsed unnamed with the Bind (stmtDesc.unnamed), whose portal's
// description says what its rows hold: the Bind would find the name gone
// (26000), and inside a transaction that would abort it; the statement
// is noted as queued (noteQueuedLocked). A description
// made before a statement that may change search_path was queued fails
// with errPathChanged: under another search_path the same text may take
// parameters of other types, and a value encoded for the old one would be
// read as the new one (a timestamp cut to a date), a wrong answer. The
// counts compared change only under wmu, as requests are queued, so they
// follow the order of the wire. The caller holds wmu (it builds the
// request).
func (c *Conn) boundLocked(sd *stmtDesc, owner *holder) (*stmtDesc, error) {
	if sd.paths != c.stmts.paths {
		return nil, errPathChanged
	}
	run := sd
	if sd.name != "" && sd.deallocs != c.stmts.deallocs {
		run = sd.unnamed()
	}
	c.noteQueuedLocked(sd.traits, owner)
	return run, nil
}

// noteQueuedLocked records what a statement with traits t, queued now for
// owner, does to the statements cached and queued after it: one that may
// deallocate prepared statements (noteDeallocateLocked), one that may
// change search_path (notePathLocked); and one that may prepare a
// statement with SQL PREPARE, which the Pool's next reset of the session
// deallocates (see stmtCache.sqlPrepared). Called as the statement is
// queued, under wmu, so that the counts follow the order of the wire: for
// a run, by boundLocked; for a simple query, by its build.
func (c *Conn) noteQueuedLocked(t sqlTraits, owner *holder) {
	if t.deallocates {
		c.noteDeallocateLocked()
	}
	if t.prepares {
		c.stmts.sqlPrepared = true
	}
	if t.changesPath {
		c.notePathLocked(owner)
	}
}

// notePathLocked records that a statement that may change search_path
// (sqllex.Info.ChangesSearchPath) is queued for owner: every cached
// description is dropped (the statements after it are described anew,
// under the search_path they run with), descriptions made before it fail
// to bind (boundLocked), and in a transaction, its statements from now
// on are described for each run and never cached (see
// holder.pathChanged): a SET LOCAL ends with the transaction. The caller
// holds wmu.
func (c *Conn) notePathLocked(owner *holder) {
	c.stmts.paths++
	c.stmts.pathTouched = true
	c.stmts.removeAll()
	owner.notePathLocked()
}

// appendRun appends [Parse] Bind [Describe] Execute Sync for sd with args
// encoded for the described parameter types. Without a named statement
// (describe and none modes) the unnamed statement is parsed again first:
// another request may have replaced it since it was described. The caller
// holds wmu (it builds a request) and has bound sd (boundLocked), which
// notes what queuing it does to the cache.
func (c *Conn) appendRun(buf []byte, sd *stmtDesc, args []any, sync bool, holes *[]hole) ([]byte, error) {
	var err error
	if sd.name == "" {
		if buf, err = wire.AppendParse(buf, "", sd.sql, sd.paramOIDs); err != nil {
			return nil, err
		}
	}
	if buf, err = c.appendBind(buf, sd, args, holes); err != nil {
		return nil, err
	}
	if sd.name == "" {
		// The unnamed statement is parsed afresh on every run, so its
		// result columns may differ from the cached description (ALTER
		// TABLE): the portal's description, read before the rows, says
		// what the rows hold.
		if buf, err = wire.AppendDescribe(buf, 'P', ""); err != nil {
			return nil, err
		}
	}
	if buf, err = wire.AppendExecute(buf, "", 0); err != nil {
		return nil, err
	}
	if sync {
		buf = wire.AppendSync(buf)
	}
	return buf, nil
}

// maxParams is the most parameters a statement may have: Parse, Bind and
// ParameterDescription carry their count in 16 bits.
const maxParams = math.MaxUint16

// tooManyParams is the refusal of a statement with n parameters or
// arguments (what), more than the protocol can carry (maxParams). It is
// checked where the count is first known, before anything is sent: the
// arguments' as a statement enters (Conn.query), the text's highest $n
// before its Parse is queued (Conn.prepareAllUnlock). Sent, such a statement
// would be answered with a ParameterDescription whose count wrapped
// around (a protocol error that closes the connection). The refusal
// leaves the connection usable, and is not SafeToRetry: the same call
// fails again (see unsendable).
func tooManyParams(n int, what string) error {
	return unsendable(fmt.Errorf("pgline: statement has %d %s; PostgreSQL's protocol allows at most %d parameters", n, what, maxParams))
}

// appendBind appends a Bind message, encoding each argument in place:
// formats and lengths are patched in once each value is written (see
// wire.BindBuilder). A ReaderArg's bytes are left out and its hole
// recorded; the message length counts them.
func (c *Conn) appendBind(buf []byte, sd *stmtDesc, args []any, holes *[]hole) ([]byte, error) {
	if len(args) > maxParams {
		return buf, tooManyParams(len(args), "arguments") // refused before (Conn.query, Conn.prepareAllUnlock)
	}
	if len(sd.formats) > math.MaxUint16 {
		return buf, errors.New("pgline: too many result columns")
	}
	// The statement's name is pgline's own ("" or pgline_N), the portal
	// unnamed: Begin cannot fail.
	var b wire.BindBuilder
	buf, err := b.Begin(buf, "", sd.name, len(args))
	if err != nil {
		return buf, err
	}
	for i, arg := range args {
		buf = b.BeginParam(buf)
		if rv, ok := arg.(*ReaderValue); ok {
			format, err := rv.format(sd.paramOIDs[i], holes != nil)
			if err == nil {
				buf, err = b.DeferParam(buf, format, rv.n)
			}
			if err != nil {
				return b.Abort(buf), fmt.Errorf("pgline: argument $%d: %w", i+1, err)
			}
			*holes = append(*holes, hole{pos: len(buf), v: rv})
			continue
		}
		out, format, null, err := c.types.Encode(sd.paramOIDs[i], arg, buf)
		if err != nil {
			return b.Abort(buf), fmt.Errorf("pgline: argument $%d: %w", i+1, err)
		}
		if buf, err = b.FinishParam(out, format, null); err != nil {
			return buf, fmt.Errorf("pgline: argument $%d: value too large", i+1)
		}
	}
	return b.Finish(buf, sd.formats)
}

// parseFields decodes a RowDescription.
func parseFields(body []byte) ([]FieldDescription, error) {
	fds, err := wire.ParseRowDescription(body, nil)
	if err != nil {
		return nil, protocolErr(err)
	}
	fields := make([]FieldDescription, len(fds))
	for i, f := range fds {
		fields[i] = FieldDescription{
			Name:                 f.Name,
			TableOID:             f.TableOID,
			TableAttributeNumber: f.TableAttributeNumber,
			DataTypeOID:          f.DataTypeOID,
			DataTypeSize:         f.DataTypeSize,
			TypeModifier:         f.TypeModifier,
			Format:               f.Format,
		}
	}
	return fields, nil
}

// StatementDescription describes a prepared statement: the types of its
// parameters and its result columns.
type StatementDescription struct {
	SQL       string
	ParamOIDs []uint32
	Fields    []FieldDescription
}

// Prepare prepares sql on the connection (or finds it in the statement
// cache) and describes it. Query, QueryRow and Exec with the same SQL text
// then reuse the prepared statement; there is no need to call Prepare
// before them.
func (c *Conn) Prepare(ctx context.Context, sql string) (*StatementDescription, error) {
	return c.describeStatement(ctx, nil, sql)
}

// Prepare prepares sql inside the transaction (see Conn.Prepare).
func (tx *Tx) Prepare(ctx context.Context, sql string) (*StatementDescription, error) {
	if tx.closed() {
		return nil, ErrTxClosed
	}
	return tx.c.describeStatement(ctx, tx.owner(), sql)
}

func (c *Conn) describeStatement(ctx context.Context, owner *holder, sql string) (*StatementDescription, error) {
	sd, err := c.prepare(ctx, owner, sql)
	if err != nil {
		return nil, err
	}
	c.unpin(sd)
	return &StatementDescription{
		SQL:       sql,
		ParamOIDs: append([]uint32(nil), sd.paramOIDs...),
		Fields:    append([]FieldDescription(nil), sd.fields...),
	}, nil
}
