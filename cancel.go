package pgline

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// defaultCancelTimeout bounds how long a statement may go on after its
// CancelRequest was sent before the connection is closed.
const defaultCancelTimeout = 10 * time.Second

// ctxWatch cancels the running statement when its ctx ends: it sends a
// CancelRequest on a new connection and, if the statement has not ended
// within the cancel timeout, closes the socket so that the waiting read
// fails.
type ctxWatch struct {
	c         *Conn
	ctx       context.Context
	cancelFn  func() // cancel, bound once: requests are reused, and their watch with them
	stopAfter func() bool
	fired     atomic.Bool
	cancelled sync.WaitGroup // done when the cancel attempt has finished
	timer     *time.Timer    // closes the socket after the cancel timeout
}

// watch starts watching ctx for req, the request at the head of the
// queue, in req's own ctxWatch. It returns nil when ctx can never end. The
// watch must be ended (end, or stop and wrap) before req is handed off:
// req is then reused.
func (c *Conn) watch(ctx context.Context, req *request) *ctxWatch {
	if ctx.Done() == nil {
		return nil
	}
	w := &req.watch
	w.c, w.ctx, w.timer = c, ctx, nil
	w.fired.Store(false)
	w.cancelled.Add(1) // Done by cancel, or by stop when cancel will never run
	w.stopAfter = context.AfterFunc(ctx, w.cancelFn)
	return w
}

func (w *ctxWatch) cancel() {
	defer w.cancelled.Done()
	w.fired.Store(true)
	c := w.c // the timer below holds c, not w: it may fire after w's request was reused
	wait := c.cfg.CancelTimeout
	if wait <= 0 {
		wait = defaultCancelTimeout
	}
	w.timer = time.AfterFunc(wait, func() { c.netConn.SetDeadline(time.Unix(1, 0)) })
	// A request that fails with 57014 may have been hit by this cancel,
	// arriving late, if it was queued before the cancel was delivered: it
	// compares this counter, moved before and after the delivery.
	c.cancels.Add(1)
	// An error here leaves the timer to close the connection.
	c.sendCancel(wait)
	c.cancels.Add(1)
}

// stop ends the watch. It waits for a CancelRequest in flight, so that a
// late cancel cannot hit the connection's next statement, and clears a
// deadline the timer may have set. It reports whether ctx ended.
func (w *ctxWatch) stop() bool {
	if w == nil {
		return false
	}
	if w.stopAfter() {
		w.cancelled.Done() // cancel will never run
		return false
	}
	w.cancelled.Wait()
	if !w.timer.Stop() {
		w.c.netConn.SetDeadline(time.Time{})
	}
	return true
}

// end stops the watch and returns err as wrap does.
func (w *ctxWatch) end(err error) error {
	w.stop()
	return w.wrap(err)
}

// wrap returns the error for a request whose ctx may have ended: when it
// did, the result wraps ctx.Err() as well as err (the server's 57014, or
// the I/O error of a closed connection).
func (w *ctxWatch) wrap(err error) error {
	if err == nil || w == nil || !w.fired.Load() {
		return err
	}
	ctxErr := w.ctx.Err()
	if errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("%w: %w", ctxErr, err)
}

// sendCancel sends a CancelRequest for this session on a new connection to
// the same host, with TLS when the session uses TLS, and waits (up to wait)
// for the server to close that connection, which it does once the signal is
// delivered.
func (c *Conn) sendCancel(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	nc, err := dialHost(ctx, c.host)
	if err != nil {
		return err
	}
	defer nc.Close()
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	var conn net.Conn = nc
	if c.tls {
		if _, err := nc.Write(wire.AppendSSLRequest(nil)); err != nil {
			return err
		}
		var b [1]byte
		if _, err := io.ReadFull(nc, b[:]); err != nil {
			return err
		}
		if b[0] != 'S' {
			return errors.New("server refused TLS for the cancel request")
		}
		tc, err := buildTLSConfig(c.cfg, c.host.Host)
		if err != nil {
			return err
		}
		t := tls.Client(nc, tc)
		if err := t.Handshake(); err != nil {
			return err
		}
		conn = t
	}
	if _, err := conn.Write(wire.AppendCancelRequest(nil, c.pid, c.secretKey)); err != nil {
		return err
	}
	// The server answers nothing and closes the connection.
	io.Copy(io.Discard, conn)
	return nil
}
