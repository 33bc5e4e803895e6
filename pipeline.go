package pgline

// Pipelining: how concurrent requests share one connection.
//
// A request is the messages of one statement (or one batch), ending with
// Sync, and the reply to them, ending with ReadyForQuery. Requests are
// appended to the write buffer under wmu and queued in the same order;
// the server answers in that order, so replies are matched FIFO:
//
//	goroutine A: [Bind Execute Sync]──┐            ┌──> A reads its reply, hands the reader to B
//	goroutine B: [Bind Execute Sync]──┼─ 1 write ──┤
//	goroutine C: [Bind Execute Sync]──┘            └──> ... B hands it to C
//
// The request at the head of the queue owns the reader: its own goroutine
// parses its reply (rows are scanned straight from the read buffer), then
// hands the reader to the next request. A request whose caller gave up
// (ctx) before its turn is drained by the goroutine that hands it the turn.
//
// Writes: a request alone on the connection writes its own bytes, one
// syscall, no goroutine switch. When other requests are in flight the
// write is left to a short-lived flusher goroutine, so that a goroutine
// never blocks in Write while its own reply waits to be read (the server
// stops reading when nobody reads its output: that would deadlock).

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// Request states.
const (
	reqWaiting   int32 = iota // queued, not at the head
	reqHead                   // owns the reader
	reqAbandoned              // the caller left; whoever hands it the turn drains its reply
)

// request is one entry of the connection's FIFO of replies.
type request struct {
	turn  chan struct{} // receives one token when the request becomes the head
	state atomic.Int32
	next  *request // the request queued after this one; guarded by Conn.wmu
	// describes lists the statements this request describes, one per
	// Sync (a describe request); nil for a run.
	describes []*stmtDesc
	extended  bool // the request is a run of the extended protocol
	syncs     int  // ReadyForQuery messages its reply ends with
	// cancels is Conn.cancels when the request was queued: a change by
	// the time it fails with 57014 means a CancelRequest aimed at an
	// earlier request may have hit it.
	cancels uint64
}

// requests recycles requests: the owner gives its request up in handoff,
// and the goroutine that drains an abandoned one gives it up after that.
var requests = sync.Pool{New: func() any { return &request{turn: make(chan struct{}, 1)} }}

func newRequest() *request {
	r := requests.Get().(*request)
	r.state.Store(reqWaiting)
	r.syncs = 1
	return r
}

// free returns r to the pool; nothing may use r afterwards.
func (r *request) free() {
	select {
	case <-r.turn: // never left behind, but a stale token must not survive
	default:
	}
	r.next, r.describes, r.extended, r.cancels = nil, nil, false, 0
	requests.Put(r)
}

// gateLocked waits, with wmu held, until requests of owner may be queued:
// while a transaction holds the connection, only its own requests may.
func (c *Conn) gateLocked(ctx context.Context, owner *Tx) error {
	for c.excl != nil && c.excl != owner {
		free := c.exclFree
		c.wmu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			c.wmu.Lock()
			return ctx.Err()
		}
		c.wmu.Lock()
	}
	if c.closed.Load() {
		return c.closedErr()
	}
	return nil
}

// send appends the messages built by build to the write buffer, queues a
// request for their reply and gets them written. Nothing is written when
// ctx is done, the connection is closed, or build fails.
func (c *Conn) send(ctx context.Context, owner *Tx, build func([]byte) ([]byte, error)) (*request, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.wmu.Lock()
	if err := c.gateLocked(ctx, owner); err != nil {
		c.wmu.Unlock()
		return nil, notSent(err)
	}
	start := len(c.wbuf)
	buf, err := build(c.appendClosesLocked(c.wbuf))
	if err != nil {
		c.wbuf = c.wbuf[:start]
		c.wmu.Unlock()
		return nil, notSent(err)
	}
	c.wbuf = buf
	req := newRequest()
	c.enqueueLocked(req)
	c.flushLocked(req)
	return req, nil
}

// enqueueLocked queues req behind the last request, or makes it the head
// when the queue is empty. The caller holds wmu.
func (c *Conn) enqueueLocked(req *request) {
	req.cancels = c.cancels.Load()
	if c.listener != nil {
		// A WaitForNotification is reading while idle: wake it so that
		// it steps aside for this request.
		c.netConn.SetReadDeadline(time.Unix(1, 0))
	}
	if c.tail == nil {
		req.state.Store(reqHead)
		req.turn <- struct{}{}
	} else {
		c.tail.next = req
	}
	c.tail = req
}

// flushLocked gets the write buffer written and releases wmu. When req is
// the only request queued and nobody is writing, this goroutine writes its
// own bytes; otherwise a flusher goroutine writes (see the file comment).
func (c *Conn) flushLocked(req *request) {
	if c.flushing {
		c.wmu.Unlock() // the running flusher writes these bytes too
		return
	}
	c.flushing = true
	if c.tail != req || req.state.Load() != reqHead {
		c.wmu.Unlock()
		go c.flushLoop()
		return
	}
	buf := c.swapBuffersLocked()
	c.wmu.Unlock()
	err := c.write(buf)
	c.wmu.Lock()
	c.spare = buf[:0]
	if err != nil || len(c.wbuf) == 0 {
		c.flushing = false
		c.flushIdle.Broadcast()
		c.wmu.Unlock()
		return
	}
	// Others queued behind while this goroutine wrote: leave their bytes
	// to a flusher.
	c.wmu.Unlock()
	go c.flushLoop()
}

// flushLoop writes the write buffer until it is empty.
func (c *Conn) flushLoop() {
	// Other requests are in flight: let the goroutines about to queue
	// theirs do so first, so that one syscall writes them all
	// (BenchmarkPoolParallel: -16% time per query).
	runtime.Gosched()
	c.wmu.Lock()
	for len(c.wbuf) > 0 {
		buf := c.swapBuffersLocked()
		c.wmu.Unlock()
		err := c.write(buf)
		c.wmu.Lock()
		c.spare = buf[:0]
		if err != nil {
			break
		}
	}
	c.flushing = false
	c.flushIdle.Broadcast()
	c.wmu.Unlock()
}

// swapBuffersLocked takes the filled write buffer and leaves the spare one
// to be appended to.
func (c *Conn) swapBuffersLocked() []byte {
	buf := c.wbuf
	c.wbuf, c.spare = c.spare, nil
	return buf
}

// write writes buf to the socket; a failure closes the connection, and
// every queued request then fails when it reads.
func (c *Conn) write(buf []byte) error {
	if _, err := c.netConn.Write(buf); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// exchange sends the messages build appends, waits for the reply's turn,
// reads it with read while ctx is watched (a CancelRequest when it ends),
// and hands the reader on.
func (c *Conn) exchange(ctx context.Context, owner *Tx, build func([]byte) ([]byte, error), read func() (CommandTag, error)) (CommandTag, error) {
	req, err := c.send(ctx, owner, build)
	if err != nil {
		return CommandTag{}, err
	}
	if err := c.waitTurn(ctx, req); err != nil {
		return CommandTag{}, err
	}
	w := c.watch(ctx)
	tag, err := read()
	w.stop()
	c.handoff(req)
	return tag, w.wrap(err)
}

// waitTurn waits until req is the head. When ctx ends first, req is
// abandoned (its reply will be drained by whoever hands it the turn) and
// ctx's error returned.
func (c *Conn) waitTurn(ctx context.Context, req *request) error {
	select {
	case <-req.turn:
		return nil
	default:
	}
	select {
	case <-req.turn:
		return nil
	case <-ctx.Done():
		if req.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			return ctx.Err()
		}
		<-req.turn // it became the head meanwhile: it reads its own reply
		return nil
	}
}

// handoff ends req's turn: the next request becomes the head, or, when its
// caller left, its reply is drained here first. req (and each drained
// request) is recycled: the caller must not use it afterwards.
func (c *Conn) handoff(req *request) {
	for {
		c.wmu.Lock()
		next := req.next
		if next == nil {
			c.tail = nil
			c.wmu.Unlock()
			req.free()
			return
		}
		c.wmu.Unlock()
		req.free()
		if next.state.CompareAndSwap(reqWaiting, reqHead) {
			next.turn <- struct{}{}
			return
		}
		c.drain(next)
		req = next
	}
}

// drain reads and discards the reply of an abandoned request, still
// recording what a describe learned (others may wait for it).
func (c *Conn) drain(req *request) {
	if req.describes != nil {
		c.readDescribes(req)
		return
	}
	for zs := 0; zs < req.syncs; {
		typ, body, err := c.rd.Next()
		if err != nil {
			c.fail(readErr(err))
			return
		}
		switch typ {
		case wire.MsgReadyForQuery:
			c.txStatus.Store(uint32(body[0]))
			zs++
		case wire.MsgDataRow, wire.MsgErrorResponse, wire.MsgCommandComplete, wire.MsgRowDescription:
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(req.extended)
		default:
			if err := c.handleAsync(typ, body); err != nil {
				c.fail(err)
				return
			}
		}
	}
}

// notSentError marks an error that happened before anything of the
// request reached the server.
type notSentError struct{ err error }

func (e *notSentError) Error() string     { return e.err.Error() }
func (e *notSentError) Unwrap() error     { return e.err }
func (e *notSentError) SafeToRetry() bool { return true }

func notSent(err error) error {
	if err == nil {
		return nil
	}
	return &notSentError{err}
}

// SafeToRetry reports whether err came from a call that sent nothing to
// the server, so that running it again cannot run the statement twice.
func SafeToRetry(err error) bool {
	var s interface{ SafeToRetry() bool }
	return errors.As(err, &s) && s.SafeToRetry()
}
