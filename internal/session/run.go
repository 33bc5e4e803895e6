package session

// Protocol flow of a statement's run (extended protocol):
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
	"io"
	"math"

	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// Run runs sql with args for owner (nil, or the transaction or COPY
// holding the connection) and leaves res at the head of the queue, its
// reply read up to the first row (see result.start). A run refused
// because its cached statement went stale (its result type changed, or
// it was deallocated) is sent again once, and one hit before its first
// row by a CancelRequest aimed at another request up to
// maxCancelRetries times, when it cannot have had an effect. One
// described before another statement that may change search_path was
// queued, and so never sent (errPathChanged), is described again and
// sent, up to maxPathRetries times: a budget of its own. budget is the
// call's (see retry.go), kept by its caller across attempts.
func (c *Session) Run(ctx context.Context, owner *Holder, res *Result, budget *Resends, sql string, args []any) error {
	streamed := hasReaderArg(args)
	// A run sent again after its Sync group failed does not join a group
	// again, so that a run of failures cannot hold it back for ever.
	share := !streamed
	var hold *CopyHold // the connection is held for a COPY FROM STDIN
	for {
		sd, err := c.Prepare(ctx, owner, sql)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				// The ctx ended while the statement was being prepared:
				// it was never sent, and the error says so.
				return NotSent(err)
			}
			if redescribe(err) && owner == nil && budget.Again(ctx, ResendInterfered) {
				continue // prepared again (in describe mode, after a pooler)
			}
			return err
		}
		if sd.traits.copyIn && hold == nil {
			// COPY FROM STDIN runs alone (see holdForCopy), even among
			// its transaction's goroutines.
			hold, err = c.HoldForCopy(ctx, owner)
			if err != nil {
				c.Unpin(sd)
				return err
			}
			defer hold.Release() // once: held from now on
			owner = &hold.H
		}
		if len(args) != len(sd.ParamOIDs) {
			c.Unpin(sd)
			return NotSent(fmt.Errorf("pgline: statement has %d parameters, but %d arguments were given", len(sd.ParamOIDs), len(args)))
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
		spec := ReqSpec{
			owner: owner, extended: true, oneStmt: true,
			endsBlock: owner == nil && sd.traits.endsBlock, // a COMMIT given to Query: see blockTraits.leavesStranded
			txControl: owner == nil && sd.traits.txControl,
		}
		if hold != nil {
			spec.onDrained = hold.releaseNow // see copyHold.spec
		}
		var req *Request
		if streamed {
			req, err = c.sendStreamed(ctx, &spec, build)
		} else {
			req, err = c.sendRun(ctx, &spec, func(buf []byte) ([]byte, error) { return build(buf, nil) }, share && sd.traits.shareable)
		}
		if pinned {
			c.Unpin(sd)
		}
		if errors.Is(err, ErrPathChanged) && budget.Again(ctx, resendPathChanged) {
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
				return ErrSkippedInBlock
			}
			share = false
			continue
		}
		*res = Result{Sd: sd, Req: req}
		if hold != nil {
			res.watched = c.watchCopy(ctx, req) != nil // alone on the connection
		} else {
			res.watched = c.Watch(ctx, req) != nil
		}
		err = res.Start(c)
		if err == nil {
			return nil
		}
		res.End(c)
		err = res.Err
		code, message, ok := APIErrors.ServerCode(err)
		if !ok {
			return err
		}
		if c.dropOutdated(sd, code, message) {
			// Nothing ran: prepare again and retry, outside a
			// transaction (inside one, the error aborted it).
			if res.TxStatus == 'I' && budget.Again(ctx, resendStale) {
				continue
			}
			return err
		}
		if Resendable(owner, sql, err, res.TxStatus) && budget.Again(ctx, ResendInterfered) {
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
func (c *Session) appendRun(buf []byte, sd *StmtDesc, args []any, sync bool, holes *[]hole) ([]byte, error) {
	var err error
	if sd.Name == "" {
		if buf, err = wire.AppendParse(buf, "", sd.sql, sd.ParamOIDs); err != nil {
			return nil, err
		}
	}
	if buf, err = c.appendBind(buf, sd, args, holes); err != nil {
		return nil, err
	}
	if sd.Name == "" {
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
func (c *Session) appendBind(buf []byte, sd *StmtDesc, args []any, holes *[]hole) ([]byte, error) {
	if len(args) > MaxParams {
		return buf, TooManyParams(len(args), "arguments") // refused before (Conn.query, Session.prepareAllUnlock)
	}
	if len(sd.formats) > math.MaxUint16 {
		return buf, errors.New("pgline: too many result columns")
	}
	// The statement's name is pgline's own ("" or pgline_N), the portal
	// unnamed: Begin cannot fail.
	var b wire.BindBuilder
	buf, err := b.Begin(buf, "", sd.Name, len(args))
	if err != nil {
		return buf, err
	}
	for i, arg := range args {
		buf = b.BeginParam(buf)
		if rv, ok := arg.(*ReaderValue); ok {
			format, err := rv.format(sd.ParamOIDs[i], holes != nil)
			if err == nil {
				buf, err = b.DeferParam(buf, format, rv.n)
			}
			if err != nil {
				return b.Abort(buf), fmt.Errorf("pgline: argument $%d: %w", i+1, err)
			}
			*holes = append(*holes, hole{pos: len(buf), r: rv.r, n: rv.n})
			continue
		}
		out, format, null, err := c.Types.Encode(sd.ParamOIDs[i], arg, buf)
		if err != nil {
			return b.Abort(buf), fmt.Errorf("pgline: argument $%d: %w", i+1, err)
		}
		if buf, err = b.FinishParam(out, format, null); err != nil {
			return buf, fmt.Errorf("pgline: argument $%d: value too large", i+1)
		}
	}
	return b.Finish(buf, sd.formats)
}

// ReaderValue is a query argument read from a reader while the
// statement is written (see appendBind): what pgline.ReaderValue holds,
// and what the API gives the session in its place.
type ReaderValue struct {
	r io.Reader
	n int64
}

// ReaderArg is pgline.ReaderArg.
func ReaderArg(r io.Reader, n int64) *ReaderValue { return &ReaderValue{r: r, n: n} }

// format returns the format the value is sent in for a parameter of type
// oid: binary for bytea, text for the text types.
func (v *ReaderValue) format(oid uint32, streaming bool) (int16, error) {
	if !streaming {
		return 0, errors.New("ReaderArg cannot be used in a Batch")
	}
	if v.n < 0 || v.n > math.MaxInt32 {
		return 0, fmt.Errorf("ReaderArg length %d out of range", v.n)
	}
	switch oid {
	case pgtype.ByteaOID:
		return 1, nil
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.UnknownOID:
		return 0, nil
	}
	return 0, fmt.Errorf("ReaderArg takes bytea and text parameters, not type OID %d", oid)
}

func hasReaderArg(args []any) bool {
	for _, a := range args {
		if _, ok := a.(*ReaderValue); ok {
			return true
		}
	}
	return false
}
