package pgline

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

// result reads the reply to one run of a statement, by the request's turn
// holder: up to each DataRow (readRow) and to the reply's end, the
// ReadyForQuery of its Sync group (the COMMIT's CommandComplete of a run
// that gave its Sync away; in an all-or-nothing batch, stopAtComplete,
// the statement's CommandComplete or ErrorResponse). It validates every
// message against the statement's description, keeps the command tag,
// and classifies the statement's ErrorResponse (session.classify): what
// the caller gets as err. Rows (rows.go) embeds it and decodes the rows.
type result struct {
	sd  *stmtDesc
	req *request // this run's place in the connection's queue

	row wire.DataRow // the current row; its bytes are in the read buffer
	tag string       // the command tag, once read
	err error        // the first error of the reply, or of its reader
	// txStatus is the transaction status of the ReadyForQuery that ended
	// the reply, 0 before it: whether the statement ran in a transaction
	// (see resendable). Not the connection's status, which may be a later
	// request's by the time the reply is done with.
	txStatus byte

	done bool // the reply was read to its end
	// pending: the first row was read by start and not yet handed out.
	pending bool
	seen    bool // a message of the reply was read (see readRow)
	// bound: BindComplete was read: the statement's name was found.
	bound bool
	// big is set while the current row is larger than the read buffer:
	// its columns are read from the socket by Scan, once (see stream.go).
	big        bool
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
	// inBatch: the statement is one of a batch, whose turn it is read in.
	// stopAtComplete: an all-or-nothing batch's, whose reply ends at its
	// CommandComplete or ErrorResponse.
	inBatch, stopAtComplete bool
	// watched: the request's ctx is watched (req.watch; see
	// session.watch), until end.
	watched bool
}

// watch returns the watch of the request's ctx, nil when it has none.
func (r *result) watch() *ctxWatch {
	if !r.watched {
		return nil
	}
	return &r.req.watch
}

// end hands the turn on once the reply is done with: to the next request
// when it was read to its end, or to the connection's drain when its
// caller gave it up (abandoned). The reply's error then wraps the ctx's
// when the ctx ended (ctxWatch.end).
func (r *result) end(c *session) {
	if r.abandoned {
		c.abandon(r.req)
	} else {
		r.err = r.watch().end(r.err)
		c.handoff(r.req)
	}
	r.req, r.watched = nil, false
}

// start reads the reply up to its first row (then pending) or its end,
// so that an error reported before any row is returned by the call that
// ran the statement.
func (r *result) start(c *session) error {
	if r.readRow(c) {
		r.pending = true
		return nil
	}
	return r.err
}

// readRow reads messages until a DataRow (true) or the end of the reply
// (false, with done set and err holding the statement's error).
func (r *result) readRow(c *session) bool {
	r.big = false
	for {
		typ, body, _, err := c.next(r.req, readHeader)
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
			if err := r.startBigRow(c); err != nil {
				if c.stoppedByCtx(r.req, err) {
					return r.readFailed(errInterrupted)
				}
				return r.fatal(c, err)
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
				return r.fatal(c, protocolErr(err))
			}
			if row.NumColumns() != len(r.sd.fields) {
				return r.fatal(c, apiErrors.protocol(fmt.Sprintf("DataRow has %d columns, RowDescription %d", row.NumColumns(), len(r.sd.fields))))
			}
			r.row = row
			return true
		case wire.MsgRowDescription:
			if err := r.portalDescribed(c, body); err != nil {
				return r.fatal(c, err)
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
				return r.fatal(c, protocolErr(err))
			}
			// Runs of a statement mostly end with the same tag ("SELECT 1"):
			// reuse its string rather than allocate one per run.
			if string(tag) != r.sd.lastTag {
				r.sd.lastTag = string(tag)
			}
			r.tag = r.sd.lastTag
			if r.stopAtComplete {
				r.done = true
				return false
			}
			c.completed(r.req)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return r.fatal(c, err)
			}
			// A named BEGIN or COMMIT after the statement missing on the
			// server session, or the statement itself at its Bind, shows
			// a transaction pooler: the statement's implicit transaction
			// failed, nothing of it persisted.
			site := errSite{pooler: c.failed(r.req, &pgErr) || !r.bound && !r.req.inCommit() && c.poolerSign(r.sd, &pgErr)}
			if first && !r.inBatch {
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
			r.txStatus = body[0] // checked by session.next
			r.done = true
			return false
		default:
			return r.fatal(c, apiErrors.protocol(fmt.Sprintf("unexpected message %q in the reply to a query", typ)))
		}
	}
}

// startBigRow begins a DataRow larger than the read buffer: it reads the
// column count; Scan reads the columns (see stream.go).
func (r *result) startBigRow(c *session) error {
	n, err := c.rd.ReadColumnCount()
	if err != nil {
		return readErr(err)
	}
	if n != len(r.sd.fields) {
		return apiErrors.protocol(fmt.Sprintf("DataRow has %d columns, RowDescription %d", n, len(r.sd.fields)))
	}
	r.big, r.bigScanned = true, false
	return nil
}

// A row larger than the read buffer (big) is read from the socket column
// by column, by Scan (stream.go), through the methods below: each reads
// the session's reader, the request's turn holder's, and gives an I/O
// error as readErr does; bigFail then ends the reply.

// scratchSize is the size of the buffer small columns of a big row are
// read into before decoding.
const scratchSize = 64 << 10

// bigColumnLength reads the length of column i of a big row (-1: NULL).
func (r *result) bigColumnLength(c *session, i int) (int, error) {
	l, err := c.rd.ReadColumnLength(i)
	if err != nil {
		return 0, readErr(err)
	}
	return l, nil
}

// bigDiscard skips n bytes of a big row.
func (r *result) bigDiscard(c *session, n int) error {
	if err := c.rd.Discard(n); err != nil {
		return readErr(err)
	}
	return nil
}

// bigCopy copies the next n bytes of a big row to w, through the read
// buffer. readFailed is the reader's error (a read deadline leaves the
// rest of the value unread); writeFailed is w's, after which the value
// was consumed all the same.
func (r *result) bigCopy(c *session, w io.Writer, n int) (readFailed, writeFailed error) {
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

// bigScratch reads the next n bytes (at most scratchSize) of a big row
// into the session's scratch buffer, valid until the next read.
func (r *result) bigScratch(c *session, n int) ([]byte, error) {
	if c.scratch == nil {
		c.scratch = make([]byte, scratchSize)
	}
	b := c.scratch[:n]
	if err := c.rd.ReadFull(b); err != nil {
		return nil, readErr(err)
	}
	return b, nil
}

// bigValue reads the next n bytes of a big row into a new slice of that
// size. A value over the maximum message size is skipped instead, and
// tooBig is that maximum.
func (r *result) bigValue(c *session, n int) (b []byte, tooBig int, err error) {
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

// bigFail closes the connection after an I/O or protocol error in a big
// row; Next then returns false and Err the error. When the request's ctx
// ended (the cancel went unanswered and CancelTimeout closed the
// connection), the error wraps ctx's too, as Err's does.
func (r *result) bigFail(c *session, err error) error {
	if c.stoppedByCtx(r.req, err) {
		r.readFailed(errInterrupted)
		return r.err
	}
	err = r.watch().wrap(c.fail(err))
	r.setErr(err)
	return err
}

// materialize reads the rest of a row larger than the read buffer whole,
// so that it can be decoded like any other (a row in the read buffer is
// whole already: its caller checks its column lengths). A malformed row
// closes the connection.
func (r *result) materialize(c *session) error {
	if !r.big {
		return nil
	}
	if r.bigScanned {
		return errors.New("pgline: a row larger than the read buffer can be read once; it was scanned")
	}
	rd := c.rd
	rest := rd.Remaining()
	if max := rd.MaxMessageSize(); rest+2 > max {
		return fmt.Errorf("pgline: row of %d bytes exceeds max_message_size (%d); scan it with StreamTo", rest+2, max)
	}
	body := make([]byte, 2+rest)
	binary.BigEndian.PutUint16(body, uint16(len(r.sd.fields)))
	if err := rd.ReadFull(body[2:]); err != nil {
		return r.bigFail(c, readErr(err))
	}
	row, err := wire.ParseDataRow(body)
	if err != nil {
		return r.bigFail(c, protocolErr(err))
	}
	r.row, r.big = row, false
	return nil
}

// portalDescribed takes the portal's RowDescription, sent before the rows
// in describe mode: when it differs from the one seen last for this
// statement, the rows are decoded by it (its types and the formats the
// server actually used) and the cache is updated for the next run.
func (r *result) portalDescribed(c *session, body []byte) error {
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
	sd.setFields(fields, c.types) // formats for the next Bind
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
	c.wmu.Lock()
	if r.sd.elem != nil {
		// Still the cached description (not one described for this run
		// alone, nor one dropped meanwhile): the next run binds by sd.
		c.stmts.put(sd)
	}
	c.wmu.Unlock()
	r.sd = sd
	return nil
}

// readFailed ends the reply on an error of its reader: the connection
// failed, or the request's ctx ended (errInterrupted): err then is ctx's
// error, and the rest of the reply is the connection's to drain (see
// session.abandon).
func (r *result) readFailed(err error) bool {
	if err == errInterrupted {
		r.abandoned = true
		err = r.req.watch.ctx.Err()
	}
	r.setErr(err)
	r.done = true
	return false
}

// fatal ends the reply on an error that closes the connection (I/O,
// protocol): the connection is closed, err reports it, readRow returns
// false.
func (r *result) fatal(c *session, err error) bool {
	r.setErr(c.fail(err))
	r.done = true
	return false
}

// setErr keeps err unless an error was kept already.
func (r *result) setErr(err error) {
	if r.err == nil {
		r.err = err
	}
}
