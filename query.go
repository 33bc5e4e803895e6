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
		return CommandTag{s: r.tag}, r.err
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
		*r = Rows{c: c, result: result{sd: sd, req: req}, resends: *budget}
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
		if c.dropOutdated(sd, pgErr.Code, pgErr.Message) {
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
			*holes = append(*holes, hole{pos: len(buf), r: rv.r, n: rv.n})
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
