package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/pgline/pgline/internal/wire"
)

// errCopyOutRows is the error of a COPY ... TO STDOUT run as a query: its
// data is no rows (it is read, and thrown away).
var errCopyOutRows = errors.New("pgline: COPY ... TO STDOUT sends no rows: run it with CopyTo")

// Result reads the reply to one run of a statement, by the request's turn
// holder: up to each DataRow (readRow) and to the reply's end, the
// ReadyForQuery of its Sync group (the COMMIT's CommandComplete of a run
// that gave its Sync away; in an all-or-nothing batch, stopAtComplete,
// the statement's CommandComplete or ErrorResponse). It validates every
// message against the statement's description, keeps the command tag,
// and classifies the statement's ErrorResponse (session.classify): what
// the caller gets as err. Rows (rows.go) embeds it and decodes the rows.
type Result struct {
	Sd  *StmtDesc // the statement's description, as bound for this run
	Req *Request  // this run's place in the connection's queue

	Row wire.DataRow // the current row; its bytes are in the read buffer
	Tag string       // the command tag, once read
	Err error        // the first error of the reply, or of its reader
	// TxStatus is the transaction status of the ReadyForQuery that ended
	// the reply, 0 before it: whether the statement ran in a transaction
	// (see resendable). Not the connection's status, which may be a later
	// request's by the time the reply is done with.
	TxStatus byte

	Done bool // the reply was read to its end
	// Pending: the first row was read by start and not yet handed out.
	Pending bool
	seen    bool // a message of the reply was read (see readRow)
	// bound: BindComplete was read: the statement's name was found.
	bound bool
	// Big is set while the current row is larger than the read buffer:
	// its columns are read from the socket by Scan, once (see stream.go).
	Big        bool
	BigScanned bool // a big row was scanned: it cannot be read again
	// unreadable is set when the portal's description (describe mode)
	// shows a column whose type changed, since the statement was
	// described, to one pgline reads in text only, while this run asked
	// for binary: its rows are skipped and the run fails (see
	// portalDescribed).
	unreadable bool
	// Abandoned: the ctx ended while the reply was read; the rest of it
	// is the connection's to drain.
	Abandoned bool
	// inBatch: the statement is one of a batch, whose turn it is read in.
	// stopAtComplete: an all-or-nothing batch's, whose reply ends at its
	// CommandComplete or ErrorResponse.
	inBatch, stopAtComplete bool
	// watched: the request's ctx is watched (req.watch; see
	// session.watch), until end.
	watched bool
}

// watch returns the watch of the request's ctx, nil when it has none.
func (r *Result) watch() *ctxWatch {
	if !r.watched {
		return nil
	}
	return &r.Req.Watch
}

// End hands the turn on once the reply is done with: to the next request
// when it was read to its end, or to the connection's drain when its
// caller gave it up (abandoned). The reply's error then wraps the ctx's
// when the ctx ended (ctxWatch.end).
func (r *Result) End(c *Session) {
	if r.Abandoned {
		c.abandon(r.Req)
	} else {
		r.Err = r.watch().end(r.Err)
		c.handoff(r.Req)
	}
	r.Req, r.watched = nil, false
}

// Start reads the reply up to its first row (then pending) or its end,
// so that an error reported before any row is returned by the call that
// ran the statement.
func (r *Result) Start(c *Session) error {
	if r.ReadRow(c) {
		r.Pending = true
		return nil
	}
	return r.Err
}

// ReadRow reads messages until a DataRow (true) or the end of the reply
// (false, with done set and err holding the statement's error).
func (r *Result) ReadRow(c *Session) bool {
	r.Big = false
	for {
		typ, body, _, err := c.next(r.Req, readHeader)
		if err != nil {
			return r.ReadFailed(err)
		}
		if typ == wire.MsgDataRow && r.unreadable {
			r.seen = true
			continue // skipped (a larger one's body too, by the next read)
		}
		if typ == wire.MsgDataRow && body == nil {
			// Larger than the read buffer: read column by column from
			// the socket by Scan (see stream.go).
			r.seen = true
			if err := r.startBigRow(c); err != nil {
				if c.stoppedByCtx(r.Req, err) {
					return r.ReadFailed(ErrInterrupted)
				}
				return r.Fatal(c, err)
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
				return r.Fatal(c, ProtocolErr(err))
			}
			if row.NumColumns() != len(r.Sd.Fields) {
				return r.Fatal(c, APIErrors.Protocol(fmt.Sprintf("DataRow has %d columns, RowDescription %d", row.NumColumns(), len(r.Sd.Fields))))
			}
			r.Row = row
			return true
		case wire.MsgRowDescription:
			if err := r.portalDescribed(c, body); err != nil {
				return r.Fatal(c, err)
			}
		case wire.MsgParseComplete:
			c.parsed(r.Req)
		case wire.MsgBindComplete:
			r.bound = true
		case wire.MsgCloseComplete, wire.MsgPortalSuspended, wire.MsgNoData:
		case wire.MsgEmptyQueryResponse:
			if r.stopAtComplete || c.completed(r.Req) {
				r.Done = true
				return false
			}
		case wire.MsgCommandComplete:
			if r.Req.inCommit() {
				// BEGIN's or COMMIT's, after a statement that gave its
				// Sync to the next (see pipeline.go).
				if c.completed(r.Req) {
					r.Done = true
					return false
				}
				continue
			}
			tag, err := wire.ParseCommandComplete(body)
			if err != nil {
				return r.Fatal(c, ProtocolErr(err))
			}
			// Runs of a statement mostly end with the same tag ("SELECT 1"):
			// reuse its string rather than allocate one per run.
			if string(tag) != r.Sd.lastTag {
				r.Sd.lastTag = string(tag)
			}
			r.Tag = r.Sd.lastTag
			if r.stopAtComplete {
				r.Done = true
				return false
			}
			c.completed(r.Req)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return r.Fatal(c, err)
			}
			// A named BEGIN or COMMIT after the statement missing on the
			// server session, or the statement itself at its Bind, shows
			// a transaction pooler: the statement's implicit transaction
			// failed, nothing of it persisted.
			site := errSite{pooler: c.failed(r.Req, &pgErr) || !r.bound && !r.Req.inCommit() && c.poolerSign(r.Sd, &pgErr)}
			if first && !r.inBatch {
				// Before a run's ParseComplete or BindComplete: a FATAL
				// (pg_terminate_backend, a restart,
				// idle_session_timeout) came before anything of it ran,
				// and it may be sent again on another connection
				// (SafeToRetry).
				site.fatal = fatalBeforeRun
			}
			r.SetErr(c.classify(r.Req, &pgErr, site))
			if r.stopAtComplete {
				r.Done = true
				return false
			}
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(true)
		case wire.MsgCopyOutResponse:
			r.SetErr(errCopyOutRows) // its data is skipped
		case wire.MsgCopyData, wire.MsgCopyDone:
		case wire.MsgReadyForQuery:
			r.TxStatus = body[0] // checked by session.next
			r.Done = true
			return false
		default:
			return r.Fatal(c, APIErrors.Protocol(fmt.Sprintf("unexpected message %q in the reply to a query", typ)))
		}
	}
}

// startBigRow begins a DataRow larger than the read buffer: it reads the
// column count; Scan reads the columns (see stream.go).
func (r *Result) startBigRow(c *Session) error {
	n, err := c.rd.ReadColumnCount()
	if err != nil {
		return readErr(err)
	}
	if n != len(r.Sd.Fields) {
		return APIErrors.Protocol(fmt.Sprintf("DataRow has %d columns, RowDescription %d", n, len(r.Sd.Fields)))
	}
	r.Big, r.BigScanned = true, false
	return nil
}

// A row larger than the read buffer (big) is read from the socket column
// by column, by Scan (stream.go), through the methods below: each reads
// the session's reader, the request's turn holder's, and gives an I/O
// error as readErr does; bigFail then ends the reply.

// ScratchSize is the size of the buffer small columns of a big row are
// read into before decoding.
const ScratchSize = 64 << 10

// BigColumnLength reads the length of column i of a big row (-1: NULL).
func (r *Result) BigColumnLength(c *Session, i int) (int, error) {
	l, err := c.rd.ReadColumnLength(i)
	if err != nil {
		return 0, readErr(err)
	}
	return l, nil
}

// BigDiscard skips n bytes of a big row.
func (r *Result) BigDiscard(c *Session, n int) error {
	if err := c.rd.Discard(n); err != nil {
		return readErr(err)
	}
	return nil
}

// BigCopy copies the next n bytes of a big row to w, through the read
// buffer. readFailed is the reader's error (a read deadline leaves the
// rest of the value unread); writeFailed is w's, after which the value
// was consumed all the same.
func (r *Result) BigCopy(c *Session, w io.Writer, n int) (readFailed, writeFailed error) {
	rd := c.rd
	before := rd.Remaining()
	err := rd.CopyN(w, n)
	if err == nil {
		return nil, nil
	}
	if rd.Err() != nil || before-rd.Remaining() < n {
		return readErr(err), nil
	}
	return nil, err
}

// BigScratch reads the next n bytes (at most scratchSize) of a big row
// into the session's scratch buffer, valid until the next read.
func (r *Result) BigScratch(c *Session, n int) ([]byte, error) {
	if c.scratch == nil {
		c.scratch = make([]byte, ScratchSize)
	}
	b := c.scratch[:n]
	if err := c.rd.ReadFull(b); err != nil {
		return nil, readErr(err)
	}
	return b, nil
}

// BigValue reads the next n bytes of a big row into a new slice of that
// size. A value over the maximum message size is skipped instead, and
// tooBig is that maximum.
func (r *Result) BigValue(c *Session, n int) (b []byte, tooBig int, err error) {
	rd := c.rd
	if max := rd.MaxMessageSize(); n > max {
		if err := rd.Discard(n); err != nil {
			return nil, 0, readErr(err)
		}
		return nil, max, nil
	}
	b = make([]byte, n)
	if err := rd.ReadFull(b); err != nil {
		return nil, 0, readErr(err)
	}
	return b, 0, nil
}

// BigFail closes the connection after an I/O or protocol error in a big
// row; Next then returns false and Err the error. When the request's ctx
// ended (the cancel went unanswered and CancelTimeout closed the
// connection), the error wraps ctx's too, as Err's does.
func (r *Result) BigFail(c *Session, err error) error {
	if c.stoppedByCtx(r.Req, err) {
		r.ReadFailed(ErrInterrupted)
		return r.Err
	}
	err = r.watch().wrap(c.fail(err))
	r.SetErr(err)
	return err
}

// Materialize reads the rest of a row larger than the read buffer whole,
// so that it can be decoded like any other (a row in the read buffer is
// whole already: its caller checks its column lengths). A malformed row
// closes the connection.
func (r *Result) Materialize(c *Session) error {
	if !r.Big {
		return nil
	}
	if r.BigScanned {
		return errors.New("pgline: a row larger than the read buffer can be read once; it was scanned")
	}
	rd := c.rd
	rest := rd.Remaining()
	if max := rd.MaxMessageSize(); rest+2 > max {
		return fmt.Errorf("pgline: row of %d bytes exceeds max_message_size (%d); scan it with StreamTo", rest+2, max)
	}
	body := make([]byte, 2+rest)
	binary.BigEndian.PutUint16(body, uint16(len(r.Sd.Fields)))
	if err := rd.ReadFull(body[2:]); err != nil {
		return r.BigFail(c, readErr(err))
	}
	row, err := wire.ParseDataRow(body)
	if err != nil {
		return r.BigFail(c, ProtocolErr(err))
	}
	r.Row, r.Big = row, false
	return nil
}

// portalDescribed takes the portal's RowDescription, sent before the rows
// in describe mode: when it differs from the one seen last for this
// statement, the rows are decoded by it (its types and the formats the
// server actually used) and the cache is updated for the next run.
func (r *Result) portalDescribed(c *Session, body []byte) error {
	if bytes.Equal(body, r.Sd.portalDesc) {
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
	sd := &StmtDesc{sql: r.Sd.sql, Name: r.Sd.Name, ParamOIDs: r.Sd.ParamOIDs, ready: r.Sd.ready, traits: r.Sd.traits,
		deallocs: r.Sd.deallocs, paths: r.Sd.paths}
	sd.SetFields(fields, c.Types) // formats for the next Bind
	for i := range fields {
		if used[i] == 1 && sd.formats[i] == 0 && !r.unreadable {
			// Bound for the type the column had when described: the
			// values came in a binary format pgline does not read for
			// the type it has now. Never handed out as bytes.
			r.unreadable = true
			r.SetErr(fmt.Errorf("pgline: column %q changed type (now OID %d) since the statement was described, and this run's values came in a binary format pgline does not read for that type; the description is updated: run the statement again", fields[i].Name, fields[i].DataTypeOID))
		}
		sd.Fields[i].Format = used[i] // what this run's rows hold
	}
	// When the next Bind asks for other formats, the raw description
	// differs once more and is taken again.
	sd.portalDesc = append([]byte(nil), body...)
	if r.Sd.cached != nil {
		// A copy (a one-off unnamed run): the connection's own
		// description stays cached.
		sd.cached = r.Sd.origin()
		r.Sd = sd
		return nil
	}
	c.Wmu.Lock()
	if r.Sd.elem != nil {
		// Still the cached description (not one described for this run
		// alone, nor one dropped meanwhile): the next run binds by sd.
		c.Stmts.put(sd)
	}
	c.Wmu.Unlock()
	r.Sd = sd
	return nil
}

// ReadFailed ends the reply on an error of its reader: the connection
// failed, or the request's ctx ended (errInterrupted): err then is ctx's
// error, and the rest of the reply is the connection's to drain (see
// session.abandon).
func (r *Result) ReadFailed(err error) bool {
	if err == ErrInterrupted {
		r.Abandoned = true
		err = r.Req.Watch.Ctx.Err()
	}
	r.SetErr(err)
	r.Done = true
	return false
}

// Fatal ends the reply on an error that closes the connection (I/O,
// protocol): the connection is closed, err reports it, readRow returns
// false.
func (r *Result) Fatal(c *Session, err error) bool {
	r.SetErr(c.fail(err))
	r.Done = true
	return false
}

// SetErr keeps err unless an error was kept already.
func (r *Result) SetErr(err error) {
	if r.Err == nil {
		r.Err = err
	}
}
