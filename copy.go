package pgline

// COPY: bulk loading and unloading with the copy sub-protocol.
//
// Protocol flow (simple query protocol; the connection is held alone from
// the first message to ReadyForQuery, since other requests' messages would
// break copy mode):
//
//	CopyFrom: Parse("", SELECT cols FROM table) Describe(S) Sync
//	            → ParseComplete ParameterDescription RowDescription ReadyForQuery
//	          Query(COPY table (cols) FROM STDIN (FORMAT binary)) → CopyInResponse
//	          CopyData* CopyDone → CommandComplete("COPY n") ReadyForQuery
//	          CopyData* CopyFail → ErrorResponse ReadyForQuery (nothing committed)
//	CopyFromReader: as CopyFrom from the Query on, with the caller's SQL and bytes.
//	CopyTo:   Query(COPY ... TO STDOUT) → CopyOutResponse CopyData* CopyDone
//	            CommandComplete ReadyForQuery
//
// While CopyData goes out, a goroutine reads the reply: a server error
// (ErrorResponse, then ReadyForQuery: the server drops the CopyData still
// coming) stops the sending at the next chunk, and the reply is always read
// up to ReadyForQuery, so the connection stays usable.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// copyChunkSize is the CopyData payload size CopyFrom and CopyFromReader
// send: data is written to the socket each time this much is ready.
const copyChunkSize = 64 << 10

// CopyFrom copies the rows of src into the columns of table with COPY FROM
// STDIN in binary format and returns the number of rows copied. Names are
// quoted: pass them as they are spelled in the catalog
// (Identifier{"public", "users"}). Each value is encoded for its column's
// type as a query argument would be; COPY writes the binary form, so a
// value that only has a text form (a Go string for an int4 or numeric
// column, a UUID string, a driver.Valuer's string) is read by the
// column's codec, as the server would read it, and written in binary. Text
// that is no value of the column's type ("abc" for an int4), and array
// text with explicit bounds, are errors naming the column and the Go type
// (TestCopyFromTextOnlyValues).
//
// Rows are encoded into a 64 KiB buffer that is written to the socket
// whenever it fills: memory stays bounded however many rows src gives. The
// first row is encoded before the COPY starts. When src fails (Err), a row
// cannot be encoded, or ctx ends, the COPY is aborted with CopyFail:
// nothing is committed, the connection stays usable, and the error wraps
// src's error or ctx.Err(). A server error (a constraint violation, a bad
// value) is returned as *PgError, with nothing committed either.
//
// The connection is held alone for the whole COPY: statements of other
// goroutines wait and run after it, so src must not use the connection
// itself (it would wait for the COPY it feeds). Outside a transaction the
// COPY is one implicit transaction.
//
// Next and Values of src are called on the calling goroutine; a call that
// blocks is not interrupted by ctx, which is checked between rows.
func (c *Conn) CopyFrom(ctx context.Context, table Identifier, columns []string, src CopyFromSource) (int64, error) {
	tag, err := c.copyFrom(ctx, nil, table, columns, src)
	return tag.RowsAffected(), err
}

// CopyFromReader runs sql, a COPY ... FROM STDIN statement in any format
// (text, csv, binary), sending the bytes of r as its data, read and sent in
// 64 KiB chunks, and returns the command tag ("COPY n"). An error reading
// r, or ctx ending, aborts the COPY with CopyFail: nothing is committed
// and the connection stays usable. A Read of r that blocks is not
// interrupted by ctx. The connection is held alone meanwhile (see
// CopyFrom).
func (c *Conn) CopyFromReader(ctx context.Context, sql string, r io.Reader) (CommandTag, error) {
	return c.copyFromReader(ctx, nil, sql, r)
}

// CopyTo runs sql, a COPY ... TO STDOUT statement in any format, and
// writes the data to w as it arrives, one CopyData message (a row, in
// text and csv formats) per Write; nothing is accumulated. When a Write
// fails, the statement is cancelled, the rest of its data discarded, and
// the error returned; the connection stays usable. The connection is held
// alone meanwhile (see CopyFrom): w must not use it.
func (c *Conn) CopyTo(ctx context.Context, w io.Writer, sql string) (CommandTag, error) {
	return c.copyTo(ctx, nil, w, sql)
}

// CopyFrom copies rows into table inside the transaction (see
// Conn.CopyFrom).
func (tx *Tx) CopyFrom(ctx context.Context, table Identifier, columns []string, src CopyFromSource) (int64, error) {
	if tx.closed() {
		return 0, ErrTxClosed
	}
	tag, err := tx.c.copyFrom(ctx, tx.owner(), table, columns, src)
	return tag.RowsAffected(), err
}

// CopyFromReader runs a COPY FROM STDIN inside the transaction (see
// Conn.CopyFromReader).
func (tx *Tx) CopyFromReader(ctx context.Context, sql string, r io.Reader) (CommandTag, error) {
	if tx.closed() {
		return CommandTag{}, ErrTxClosed
	}
	return tx.c.copyFromReader(ctx, tx.owner(), sql, r)
}

// CopyTo runs a COPY TO STDOUT inside the transaction (see Conn.CopyTo).
func (tx *Tx) CopyTo(ctx context.Context, w io.Writer, sql string) (CommandTag, error) {
	if tx.closed() {
		return CommandTag{}, ErrTxClosed
	}
	return tx.c.copyTo(ctx, tx.owner(), w, sql)
}

// CopyFrom copies rows into table on a connection taken from the pool for
// the COPY alone (see Conn.CopyFrom).
func (p *Pool) CopyFrom(ctx context.Context, table Identifier, columns []string, src CopyFromSource) (int64, error) {
	pc, err := p.take(ctx, false)
	if err != nil {
		return 0, err
	}
	defer p.giveBack(pc)
	return connOf(pc).CopyFrom(ctx, table, columns, src)
}

// CopyFromReader runs a COPY FROM STDIN on a connection taken from the
// pool for it (see Conn.CopyFromReader).
func (p *Pool) CopyFromReader(ctx context.Context, sql string, r io.Reader) (CommandTag, error) {
	pc, err := p.take(ctx, false)
	if err != nil {
		return CommandTag{}, err
	}
	defer p.giveBack(pc)
	return connOf(pc).CopyFromReader(ctx, sql, r)
}

// CopyTo runs a COPY TO STDOUT on a connection taken from the pool for it
// (see Conn.CopyTo).
func (p *Pool) CopyTo(ctx context.Context, w io.Writer, sql string) (CommandTag, error) {
	pc, err := p.take(ctx, false)
	if err != nil {
		return CommandTag{}, err
	}
	defer p.giveBack(pc)
	return connOf(pc).CopyTo(ctx, w, sql)
}

// traceCopy runs op, a COPY, traced when a Tracer is set. The COPY is
// not sent again, whatever its error (its source or writer has been
// used).
func (c *Conn) traceCopy(ctx context.Context, sql string, op func() (CommandTag, error)) (CommandTag, error) {
	if c.cfg.Tracer == nil {
		return op()
	}
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceCopy, SQL: sql})
	tag, err := op()
	traceEnd(tctx, c.cfg, ev, tag, err)
	return tag, err
}

func (c *Conn) copyFrom(ctx context.Context, owner *session.Holder, table Identifier, columns []string, src CopyFromSource) (CommandTag, error) {
	if src == nil {
		return CommandTag{}, errors.New("pgline: CopyFrom: nil row source")
	}
	descSQL, copySQL, err := copyFromSQL(table, columns)
	if err != nil {
		return CommandTag{}, err
	}
	return c.traceCopy(ctx, copySQL, func() (CommandTag, error) {
		h, err := c.s.HoldForCopy(ctx, owner)
		if err != nil {
			return CommandTag{}, err
		}
		defer h.Release()
		oids, err := c.s.DescribeColumns(ctx, &h.H, descSQL)
		if err != nil {
			return CommandTag{}, err
		}
		if len(oids) != len(columns) {
			return CommandTag{}, fmt.Errorf("pgline: CopyFrom: %d columns described for %d names", len(oids), len(columns))
		}
		enc := &copyEncoder{types: c.s.Types, oids: oids, names: columns}
		return c.copyRows(ctx, h, copySQL, enc, src)
	})
}

// copyRows streams the rows of src as binary COPY data.
func (c *Conn) copyRows(ctx context.Context, h *session.CopyHold, copySQL string, enc *copyEncoder, src CopyFromSource) (CommandTag, error) {
	buf := make([]byte, 5, 5+copyChunkSize+copyChunkSize/4)
	buf = append(buf, copyBinaryHeader...)
	var row int64
	// next encodes the next row, if any, into buf; a failure stops the COPY.
	next := func() (bool, error) {
		if !src.Next() {
			if err := src.Err(); err != nil {
				return false, fmt.Errorf("pgline: CopyFrom: row source: %w", err)
			}
			return false, nil
		}
		row++
		vals, err := src.Values()
		if err != nil {
			return false, fmt.Errorf("pgline: CopyFrom: row source: %w", err)
		}
		if buf, err = enc.appendRow(buf, vals); err != nil {
			return false, fmt.Errorf("pgline: CopyFrom: row %d: %w", row, err)
		}
		return true, nil
	}
	// The first row is encoded before the COPY starts, so that a source
	// failing at once, or values of the wrong Go types, send nothing.
	more, failure := next()
	if failure != nil {
		return CommandTag{}, session.NotSent(failure)
	}
	ci, err := c.s.StartCopyIn(ctx, h, copySQL)
	if err != nil {
		return CommandTag{}, err
	}
	defer ci.AbortOnPanic()
	done := ctx.Done()
	for more {
		if len(buf) >= copyChunkSize {
			if !ci.Send(buf) {
				break
			}
			buf = resetCopyBuf(buf)
		}
		select {
		case <-done:
			failure = fmt.Errorf("pgline: CopyFrom: %w", ctx.Err())
			more = false
			continue
		default:
		}
		more, failure = next()
	}
	if failure == nil {
		buf = appendCopyTrailer(buf)
	}
	tag, err := ci.Finish(buf, failure)
	return CommandTag{s: tag}, err
}

// resetCopyBuf empties a CopyData buffer (its 5-byte header kept), giving
// up one that a large row made grow.
func resetCopyBuf(buf []byte) []byte {
	if cap(buf) > 4*copyChunkSize {
		return make([]byte, 5, 5+copyChunkSize+copyChunkSize/4)
	}
	return buf[:5]
}

func (c *Conn) copyFromReader(ctx context.Context, owner *session.Holder, sql string, r io.Reader) (CommandTag, error) {
	if r == nil {
		return CommandTag{}, errors.New("pgline: CopyFromReader: nil reader")
	}
	return c.traceCopy(ctx, sql, func() (CommandTag, error) {
		h, err := c.s.HoldForCopy(ctx, owner)
		if err != nil {
			return CommandTag{}, err
		}
		defer h.Release()
		ci, err := c.s.StartCopyIn(ctx, h, sql)
		if err != nil {
			return CommandTag{}, err
		}
		defer ci.AbortOnPanic()
		buf := make([]byte, 5+copyChunkSize)
		var failure error
		for empty := 0; ; {
			n, rerr := r.Read(buf[5:])
			if n < 0 || n > copyChunkSize {
				failure = errors.New("pgline: CopyFromReader: reader returned an invalid count")
				break
			}
			if n > 0 {
				empty = 0
				if !ci.Send(buf[:5+n]) {
					break
				}
			} else if empty++; empty >= 100 && rerr == nil {
				rerr = io.ErrNoProgress
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				failure = fmt.Errorf("pgline: CopyFromReader: reading: %w", rerr)
				break
			}
			if ctx.Err() != nil {
				failure = fmt.Errorf("pgline: CopyFromReader: %w", ctx.Err())
				break
			}
		}
		tag, err := ci.Finish(buf[:5], failure)
		return CommandTag{s: tag}, err
	})
}

func (c *Conn) copyTo(ctx context.Context, owner *session.Holder, w io.Writer, sql string) (CommandTag, error) {
	if w == nil {
		return CommandTag{}, errors.New("pgline: CopyTo: nil writer")
	}
	return c.traceCopy(ctx, sql, func() (CommandTag, error) {
		h, err := c.s.HoldForCopy(ctx, owner)
		if err != nil {
			return CommandTag{}, err
		}
		defer h.Release()
		return session.WhileRefused(ctx, func() (CommandTag, error) {
			tag, err := c.s.ExchangeHeld(ctx, h, false,
				func(buf []byte) ([]byte, error) { return wire.AppendQuery(buf, sql) },
				func(req *session.Request) (string, error) { return c.s.ReadCopyOut(req, w) })
			return CommandTag{s: tag}, err
		})
	})
}
