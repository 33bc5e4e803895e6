package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// The defaults of Config.CancelTimeout and Config.CancelGrace.
const (
	defaultCancelTimeout = 10 * time.Second
	defaultCancelGrace   = 100 * time.Millisecond
)

// cancelTimeout is Config.CancelTimeout or its default.
func (c *Session) cancelTimeout() time.Duration {
	if d := c.opts.CancelTimeout; d > 0 {
		return d
	}
	return defaultCancelTimeout
}

// cancelGrace is Config.CancelGrace or its default.
func (c *Session) cancelGrace() time.Duration {
	if d := c.opts.CancelGrace; d > 0 {
		return d
	}
	return defaultCancelGrace
}

// ctxWatch watches the ctx of the request at the head of the queue. In
// the pipeline's mode (interrupts) the end of ctx only interrupts the
// caller's read with a past read deadline: the caller is answered at once
// and the rest of the reply goes to Session.abandon, which decides whether a
// CancelRequest may be sent (see drainAbandoned). A COPY, which holds the
// connection alone, cancels at once instead: a CancelRequest is sent, and
// the socket closed if the statement has not ended within the cancel
// timeout.
type ctxWatch struct {
	c          *Session
	Ctx        context.Context // the request's
	cancelFn   func()          // fire, bound once: requests are reused, and their watch with them
	stopAfter  func() bool
	Interrupts bool      // the pipeline's mode (see above); false for a COPY
	start      time.Time // when the watch was armed: the reply's first wait on the socket
	fired      atomic.Bool
	cancelled  sync.WaitGroup // done when fire has finished
	timer      *time.Timer    // a COPY's: closes the socket after the cancel timeout
}

// Watch starts watching ctx for req, the request at the head of the
// queue, in req's own ctxWatch, in the pipeline's mode. It returns nil
// when ctx can never end. The watch must be ended (end, or stop and
// wrap, or Session.abandon) before req is handed off: req is then reused.
//
// In the pipeline's mode the watch is armed (context.AfterFunc) only when
// the reader is about to block on the socket (see socketReader): a reply
// already in the read buffer, as most are when requests are pipelined, is
// read with no registration on ctx, and Session.next checks ctx before each
// message instead.
func (c *Session) Watch(ctx context.Context, req *Request) *ctxWatch {
	return c.startWatch(ctx, req, true)
}

// watchCopy is watch for a COPY: a CancelRequest is sent as soon as ctx
// ends (nothing else is queued while a COPY holds the connection).
func (c *Session) watchCopy(ctx context.Context, req *Request) *ctxWatch {
	return c.startWatch(ctx, req, false)
}

func (c *Session) startWatch(ctx context.Context, req *Request, interrupts bool) *ctxWatch {
	w := &req.Watch
	w.c, w.Ctx, w.timer, w.Interrupts = c, ctx, nil, interrupts
	if ctx.Done() == nil {
		return nil
	}
	w.fired.Store(false)
	if interrupts {
		c.unarmed = w // armed by the first read that reaches the socket
	} else {
		w.arm()
	}
	return w
}

// arm registers fire to run when ctx ends.
func (w *ctxWatch) arm() {
	w.start = time.Now()
	w.cancelled.Add(1) // Done by fire, or by stop when fire will never run
	w.stopAfter = context.AfterFunc(w.Ctx, w.cancelFn)
}

// socketReader is what the reply reader reads from: the socket, arming
// first the watch of the request reading (Session.unarmed), whose read may
// now block.
type socketReader struct{ c *Session }

// Read reads the socket (see socketReader).
func (s socketReader) Read(p []byte) (int, error) {
	c := s.c
	if w := c.unarmed; w != nil {
		c.unarmed = nil
		w.arm()
	}
	return c.NetConn.Read(p)
}

// fire runs when ctx ends.
func (w *ctxWatch) fire() {
	defer w.cancelled.Done()
	w.fired.Store(true)
	c := w.c // the timer below holds c, not w: it may fire after w's request was reused
	if w.Interrupts {
		c.NetConn.SetReadDeadline(time.Unix(1, 0))
		return
	}
	wait := c.cancelTimeout()
	w.timer = time.AfterFunc(wait, func() { c.NetConn.SetDeadline(time.Unix(1, 0)) })
	c.cancelSession(wait) // an error leaves the timer to close the connection
}

// stop ends the watch. It waits for fire to finish, so that neither a
// late cancel nor a late deadline reaches the connection's next request,
// and clears the deadline fire set. It reports whether ctx ended.
func (w *ctxWatch) stop() bool {
	if w == nil {
		return false
	}
	if w.c != nil && w.c.unarmed == w {
		w.c.unarmed = nil
	}
	if w.stopAfter == nil {
		return false
	}
	stopped := w.stopAfter()
	w.stopAfter = nil
	if stopped {
		w.cancelled.Done() // fire will never run
		return false
	}
	w.cancelled.Wait()
	if w.Interrupts {
		w.c.NetConn.SetReadDeadline(time.Time{})
	} else if !w.timer.Stop() {
		w.c.NetConn.SetDeadline(time.Time{})
	}
	return true
}

// end stops the watch and returns err as wrap does.
func (w *ctxWatch) end(err error) error {
	w.stop()
	return w.wrap(err)
}

// ended reports whether the watched ctx ended, whether or not the watch
// was armed then (fire runs only after ctx ended).
func (w *ctxWatch) ended() bool {
	return w.Ctx != nil && w.Ctx.Err() != nil
}

// wrap returns the error for a request whose ctx may have ended: when it
// did, the result wraps ctx.Err() as well as err (the server's 57014, or
// the I/O error of a closed connection).
func (w *ctxWatch) wrap(err error) error {
	if err == nil || w == nil || !w.ended() {
		return err
	}
	ctxErr := w.Ctx.Err()
	if errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("%w: %w", ctxErr, err)
}

// cancelSession sends a CancelRequest for this session: the one way
// pgline cancels what the server runs, used by the drain of an abandoned
// head (drainTick, which decides when a cancel may be sent),
// by a COPY's ended ctx (ctxWatch.fire: the COPY holds the connection
// alone) and by a CopyTo whose writer failed (readCopyOut). The cancel
// clock ticks before the request is sent and once it is delivered, so
// that a request queued before the delivery that fails with 57014 knows a
// CancelRequest meant for another may have hit it (strayCancel).
func (c *Session) cancelSession(wait time.Duration) error {
	c.CancelClock.Add(1)
	err := c.sendCancel(wait)
	c.CancelClock.Add(1)
	return err
}

// sendCancel sends a CancelRequest for this session on a new connection to
// the same host, with TLS when the session uses TLS (negotiated as the
// session's own connection was: SessionOpts.CancelTLS), and waits (up to
// wait) for the server to close that connection, which it does once the
// signal is delivered. The request carries the whole key BackendKeyData
// gave: 4 bytes under protocol 3.0, up to 256 under 3.2 (32 from
// PostgreSQL 18).
func (c *Session) sendCancel(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	nc, err := c.opts.DialCancel(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	conn := nc
	if c.TLS {
		if conn, err = c.opts.CancelTLS(nc); err != nil {
			return err
		}
	}
	if _, err := conn.Write(wire.AppendCancelRequest(nil, c.PID, c.SecretKey)); err != nil {
		return err
	}
	// The server answers nothing and closes the connection.
	io.Copy(io.Discard, conn)
	return nil
}
