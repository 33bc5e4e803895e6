package session

// The simple query protocol: Exec without arguments, Ping, the
// connect-time checks, BEGIN/SAVEPOINT and a transaction's end all send
// one Query message and read its reply with readSimple.

import (
	"context"
	"fmt"

	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
)

// SimpleQueryUntraced runs sql with the simple protocol for owner (nil, or
// the holder of the gate): onRow, when set, gets each DataRow, and note,
// when set, is called under wmu as the request is queued with the
// statement's traits (see Session.resetNote). It returns the last command
// tag. The API's simpleQuery wraps it with tracing.
func (c *Session) SimpleQueryUntraced(ctx context.Context, owner *Holder, sql string, onRow func(*wire.DataRow) error, note func(SQLTraits)) (string, error) {
	info := sqllex.Scan(sql)
	build := func(buf []byte) ([]byte, error) {
		if note != nil {
			note(traitsOfInfo(info))
		} else {
			c.noteQueuedLocked(traitsOfInfo(info), owner)
		}
		return wire.AppendQuery(buf, sql)
	}
	var status byte // of the reply's last ReadyForQuery (see resendable)
	read := func(req *Request) (string, error) {
		tag, err := c.readSimple(req, onRow, true)
		status = req.status
		return tag, err
	}
	if info.CopyFromStdin {
		h, err := c.HoldForCopy(ctx, owner)
		if err != nil {
			return "", err
		}
		defer h.Release()
		return c.ExchangeHeld(ctx, h, info.Statements <= 1, build, read) // not sent again, as traceCopy
	}
	if owner == nil && sql != "" { // not the empty query settleIdle sends
		if err := c.settleIdle(ctx, false); err != nil {
			return "", NotSent(err)
		}
	}
	// Outside a transaction, with no rows passed on, a text that runs all
	// or nothing is sent again when a CancelRequest meant for another
	// request reached it (see resendable).
	var budget Resends
	for {
		status = 0
		// A text that begins and ends its own block (BEGIN; ...; COMMIT)
		// leaves nobody holding one it failed to end.
		tag, err := c.exchange(ctx, &ReqSpec{
			owner:     owner,
			oneStmt:   info.Statements <= 1,
			endsBlock: owner == nil && info.EndsBlock,
			txControl: owner == nil && info.TransactionControl,
		}, build, read)
		if onRow == nil && Resendable(owner, sql, err, status) && budget.Again(ctx, ResendInterfered) {
			continue
		}
		return tag, err
	}
}

// readSimple reads req's reply to a simple Query; the caller is the head.
// With unsentIfIdle, a FATAL sent only to an idle session (see
// PgError.sentWhileIdle) that comes before any other message of the reply
// marks the text not sent: the server never read it. Any other FATAL may
// have ended the session while the text ran, after part of it committed
// or did what no rollback undoes: the reply has no message that the
// server sends before it runs the text (the simple protocol's
// difference with the extended one's BindComplete), so that only a look
// at the socket before the text is written tells an idle session's end
// (see settleIdle).
func (c *Session) readSimple(req *Request, onRow func(*wire.DataRow) error, unsentIfIdle bool) (string, error) {
	var tag string
	var firstErr error
	mode := readWhole
	seen := false // a message of the reply was read
	cols := -1    // the current statement's RowDescription's column count; -1 before one
	if onRow == nil {
		mode = readDiscarding // rows are thrown away: any size
	}
	for {
		typ, body, _, err := c.next(req, mode)
		if err != nil {
			if firstErr != nil && c.serverFatal.Load() != nil {
				// The server's FATAL, not the end of the socket after it.
				return "", firstErr
			}
			return "", err
		}
		first := !seen
		seen = true
		switch typ {
		case wire.MsgCommandComplete:
			t, err := wire.ParseCommandComplete(body)
			if err != nil {
				return "", c.fail(ProtocolErr(err))
			}
			tag = string(t)
			cols = -1
		case wire.MsgRowDescription:
			if cols, err = wire.CheckRowDescription(body); err != nil {
				return "", c.fail(ProtocolErr(err))
			}
		case wire.MsgDataRow:
			// Checked as Rows check theirs: a row has the columns its
			// description announced, and the column lengths of a row
			// handed on fit its body; a row thrown away is not walked. A
			// row skipped unread (larger than the read buffer, discarded)
			// has no body to check.
			if body == nil {
				continue
			}
			row, err := wire.SplitDataRow(body)
			if err == nil && row.NumColumns() != cols {
				err = fmt.Errorf("DataRow has %d columns, its RowDescription %d", row.NumColumns(), cols)
			}
			handed := onRow != nil && firstErr == nil
			if err == nil && handed {
				err = row.Check()
			}
			if err != nil {
				return "", c.fail(ProtocolErr(err))
			}
			if handed {
				firstErr = onRow(&row)
			}
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return "", c.fail(err)
			}
			if firstErr == nil {
				var site errSite
				if first && unsentIfIdle {
					site.fatal = fatalWhileIdle // an idle session's FATAL: the text was never read
				}
				firstErr = c.classify(req, &pgErr, site)
			}
		case wire.MsgReadyForQuery:
			return tag, firstErr
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(false)
		case wire.MsgEmptyQueryResponse, wire.MsgCopyOutResponse,
			wire.MsgCopyData, wire.MsgCopyDone, wire.MsgCloseComplete:
			// Nothing to keep.
		default:
			return "", c.fail(APIErrors.Protocol(fmt.Sprintf("unexpected message %q in the reply to a simple query", typ)))
		}
	}
}

// refuseCopyIn answers a CopyInResponse that no caller asked for with
// CopyFail; the server then reports the COPY as failed. In the extended
// protocol the server ignored the run's Sync while in copy mode, so one
// is sent after the CopyFail. Statements that may COPY FROM STDIN run
// alone on the connection (see holdForCopy), so nothing else was
// pipelined behind them.
func (c *Session) refuseCopyIn(extended bool) {
	c.Wmu.Lock()
	buf, err := wire.AppendCopyFail(c.Writer.buf(), "COPY FROM STDIN is not supported here")
	if err == nil {
		if extended {
			buf = wire.AppendSync(buf)
		}
		c.Writer.queue(buf)
	}
	// Written past a drain's cancel, which may hold writes for this very
	// statement: the CopyFail is what ends it.
	c.Writer.flushPastHoldUnlock()
}

// ScalarRow returns an onRow function for a simple query that keeps in v
// the text of the first column of the first row that has one ("" when
// that value is NULL or no such row comes).
func ScalarRow(v *string) func(*wire.DataRow) error {
	seen := false
	return func(row *wire.DataRow) error {
		if !seen && row.NumColumns() > 0 {
			b, _ := row.Column(0)
			*v, seen = string(b), true
		}
		return nil
	}
}
