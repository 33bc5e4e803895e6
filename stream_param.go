package pgline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// ReaderValue is a query argument whose value is read from a reader while
// the statement is written to the server, never held in memory whole. Make
// one with ReaderArg.
type ReaderValue struct {
	r io.Reader
	n int64
}

// ReaderArg returns an argument that sends exactly n bytes read from r as
// the value of a bytea parameter (raw bytes), or of a text, varchar, json
// or jsonb parameter (the text, UTF-8). The bytes go from r to the socket
// a chunk at a time, without being buffered; meanwhile other goroutines'
// statements on the connection queue behind this one. If r ends before n
// bytes, the message cannot be completed and the connection is closed. r
// is read in the calling goroutine: a Read that blocks is not interrupted
// by the statement's ctx, as with CopyFromReader.
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

// hole marks where the bytes of a ReaderArg go in a message being written.
type hole struct {
	pos int // offset in the built bytes
	v   *ReaderValue
}

func hasReaderArg(args []any) bool {
	for _, a := range args {
		if _, ok := a.(*ReaderValue); ok {
			return true
		}
	}
	return false
}

// sendStreamed is send for messages holding ReaderArg values: this
// goroutine becomes the connection's writer (after the flusher in progress,
// if any), writes what was queued before, then its own messages with each
// reader's bytes copied to the socket in place. Requests queued meanwhile
// are written after it.
func (c *Conn) sendStreamed(ctx context.Context, owner *holder, build func([]byte, *[]hole) ([]byte, error)) (*request, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent(err)
	}
	c.wmu.Lock()
	for {
		if err := c.gateLocked(ctx, owner); err != nil {
			c.wmu.Unlock()
			return nil, notSent(err)
		}
		if c.takeWriterLocked() {
			break
		}
		// Wait releases wmu: a transaction may take the connection
		// meanwhile, so the gate is passed again.
		c.flushIdle.Wait()
	}
	if c.closed.Load() {
		c.dropWriterLocked()
		c.wmu.Unlock()
		return nil, notSent(c.closedErr())
	}
	start := len(c.wbuf)
	var holes []hole
	buf, err := build(c.appendClosesLocked(c.wbuf), &holes)
	if err != nil {
		c.wbuf = c.wbuf[:start]
		c.dropWriterLocked()
		c.wmu.Unlock()
		return nil, notSent(err)
	}
	c.closesQueuedLocked()
	req := newRequest()
	req.owner = owner
	c.enqueueLocked(req)
	c.wbuf, c.spare = c.spare[:0], nil
	c.swappedSeq = c.seqNext // written here, piece by piece (not writeQueued)
	to := c.swappedSeq
	c.wmu.Unlock()

	werr := c.writeWithStop(ctx, func() error { return c.writeWithHoles(buf, holes) })

	c.wmu.Lock()
	c.spare = buf[:0]
	if werr == nil {
		c.wroteLocked(to)
	}
	if werr == nil && len(c.wbuf) > 0 {
		c.wmu.Unlock()
		go c.flushLoop()
	} else {
		c.dropWriterLocked()
		c.wmu.Unlock()
	}
	// On error the connection is closed: req fails when it reads.
	return req, nil
}

// writeWithStop runs write, which writes to the socket in the caller's
// goroutine, so that ctx's end stops it: a past write deadline makes the
// write fail, and the connection with it (a message half written cannot
// be finished), and the caller's read of its reply returns ctx's error.
// A server that stops reading cannot keep the caller past its deadline.
func (c *Conn) writeWithStop(ctx context.Context, write func() error) error {
	if ctx.Done() == nil {
		return write()
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.netConn.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	err := write()
	if !stop() {
		<-fired // the deadline is set: clear it for the writes after
		if err == nil {
			c.netConn.SetWriteDeadline(time.Time{})
		}
	}
	return err
}

// writeWithHoles writes buf with each hole's reader bytes inserted at its
// position.
func (c *Conn) writeWithHoles(buf []byte, holes []hole) error {
	prev := 0
	for _, h := range holes {
		if err := c.write(buf[prev:h.pos]); err != nil {
			return err
		}
		n, err := io.CopyN(c.netConn, h.v.r, h.v.n)
		if err != nil {
			if n < h.v.n && (err == io.EOF || c.fatal.Load() == nil) {
				err = fmt.Errorf("pgline: ReaderArg gave %d of its %d bytes: %w", n, h.v.n, err)
			}
			c.fail(err)
			return err
		}
		prev = h.pos
	}
	return c.write(buf[prev:])
}
