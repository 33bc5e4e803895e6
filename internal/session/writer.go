package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// writer is a connection's write side: it alone takes the write buffer
// to the socket and writes to the socket (its platform part is sockWriter,
// writer_sock_*.go), once the startup is done. Whoever queues a request
// appends its messages to the write buffer, under wmu, between buf and
// queue, and nothing else; it submits the request before it releases wmu,
// so that no byte is queued without a request in flight (Session.Busy
// relies on it).
//
// The writer's role: at most one goroutine at a time holds it (taken),
// and only that goroutine writes to the socket or swaps the write buffer
// out to write it (swapLocked). The role is taken in one of two ways:
//
//   - takeLocked, by a caller that has just queued (flushUnlock) and by
//     the others that write when they find nobody writing: it fails while
//     another goroutine holds the role or a cancel holds writes;
//   - awaitLocked, by a goroutine that then writes in its own time (a
//     COPY's data: claim; a streamed parameter: streamUnlock): it waits
//     on idle until takeLocked succeeds.
//
// A caller that took the role while others are in flight yields the
// processor before writing (yielding); a caller queueing meanwhile may
// take the role over from it (a takeover: flushUnlock, overdueLocked),
// and the yielder, back, finds takeovers moved and leaves. The holder
// gives the role back with dropLocked, which wakes the goroutines waiting
// in awaitLocked, once the write buffer is empty or a write failed; a
// holder that must not wait for the socket hands the role, with what is
// left to write, to a flusher goroutine (flushLoop, flushRest), which
// gives it back in turn. Terminate (terminate) is written with the role
// too.
//
// A cancel holds writes: from pauseLocked (a drain about to send a
// CancelRequest, see drainTick) to resume (the canceled reply has
// ended), nothing is written and takeLocked fails, so that no statement
// written meanwhile could be hit by the signal. The one exception is a
// CopyFail answering a COPY FROM STDIN nobody asked for
// (flushPastHoldUnlock), which is what ends the canceled statement.
//
// Session.Wmu protects the fields below but c and sock (set once before the
// connection is used) and unsentFrom (atomic). The writer reads the
// queue's fields (Session.Tail, seqNext, queued, syncHolder) under wmu too.
type writer struct {
	c *Session
	// sock writes to the socket without waiting (see writeUnlock); set
	// once the startup is done, when netConn is the socket itself.
	sock sockWriter

	Wbuf  []byte // frontend messages are appended here, then written
	spare []byte // the other write buffer, while wbuf is written
	Taken bool   // a goroutine holds the writer's role
	// Yielding: the holder yields the processor before writing (see
	// flushUnlock); a caller may take its role over, which bumps
	// takeovers so that the yielder, back, knows it has lost the role.
	Yielding  bool
	Takeovers uint64
	// paused: a CancelRequest is in flight, or its target's reply has
	// not ended: nothing is written (see pauseLocked).
	paused bool
	idle   *sync.Cond // on wmu: signalled when taken becomes false or paused ends
	// swappedSeq is the last request whose bytes left the write buffer
	// (see swapLocked).
	swappedSeq uint64
	// writtenSeq is the last request whose bytes have all reached the
	// socket (see wroteLocked): a drain cancels nothing before its
	// request's have (see drainTick).
	writtenSeq uint64
	unsentFrom atomic.Uint64 // requests from this one on were never written (see writeQueued)
}

// init makes w the write side of c, before c is used.
func (w *writer) init(c *Session) {
	w.c = c
	w.idle = sync.NewCond(&c.Wmu)
}

// buf returns the bytes queued and not yet written, for the caller to
// append a request's messages to; the caller holds wmu and gives the
// result to queue (or drops it: nothing is queued then).
func (w *writer) buf() []byte { return w.Wbuf }

// queue makes buf, returned by buf with messages appended, the bytes to
// write; the caller holds wmu.
func (w *writer) queue(buf []byte) { w.Wbuf = buf }

// takeLocked makes the caller the connection's one writer and reports
// whether it did: not while another goroutine holds the role, nor while
// a cancel holds writes (see pauseLocked). The caller holds wmu and gives
// the role back with dropLocked (or hands it to a flusher).
func (w *writer) takeLocked() bool {
	if w.Taken || w.paused {
		return false
	}
	w.Taken = true
	return true
}

// awaitLocked takes the writer's role for a goroutine that then writes in
// its own time (claim, streamUnlock), waiting while another holds it or a
// cancel holds writes. pass, when set, runs before each attempt (waiting
// releases wmu: a transaction may take the connection meanwhile, so the
// gate is passed again); its error, or the connection's end, ends the
// wait without the role. The caller holds wmu.
func (w *writer) awaitLocked(pass func() error) error {
	for {
		if pass != nil {
			if err := pass(); err != nil {
				return err
			}
		}
		if w.takeLocked() {
			return nil
		}
		if w.c.closed.Load() {
			return w.c.closedErr()
		}
		w.idle.Wait() // signalled when a writer stops or a cancel was delivered
	}
}

// dropLocked gives up the writer's role and wakes those waiting for it
// (awaitLocked); the caller holds wmu.
func (w *writer) dropLocked() {
	w.Taken = false
	w.idle.Broadcast()
}

// busyLocked reports whether a goroutine holds the writer's role (it
// writes, or is about to); the caller holds wmu.
func (w *writer) busyLocked() bool { return w.Taken }

// sentLocked reports whether the bytes of the request numbered seq have
// all reached the socket; the caller holds wmu.
func (w *writer) sentLocked(seq uint64) bool { return seq <= w.writtenSeq }

// neverSent reports whether none of the bytes of the request numbered seq
// reached the socket before a write failed (see writeFailed).
func (w *writer) neverSent(seq uint64) bool {
	u := w.unsentFrom.Load()
	return u != 0 && seq >= u
}

// PauseLocked holds writes back from now until resume: a drain is about
// to send a CancelRequest (see drainTick). The caller holds wmu.
func (w *writer) PauseLocked() { w.paused = true }

// Resume ends the hold of pauseLocked: what was queued meanwhile is
// written by a flusher, and the goroutines waiting for the role
// (awaitLocked) try again.
func (w *writer) Resume() {
	w.c.Wmu.Lock()
	w.paused = false
	if len(w.Wbuf) > 0 && w.takeLocked() {
		go w.flushLoop()
	}
	w.idle.Broadcast()
	w.c.Wmu.Unlock()
}

// flushUnlock gets the write buffer written, for a caller that has just
// queued req, and releases wmu. Whoever finds nobody writing writes,
// itself (no goroutine is started, and no idle processor woken to run
// one), but never waits for the socket: what the socket does not take at
// once (the server is not reading: it runs an earlier statement, or waits
// for someone to read its output) is left to a flusher goroutine, so that
// a caller is never held in Write, where its ctx could not end its wait,
// nor blocked writing while its own reply waits to be read (the server
// stops reading when nobody reads its output: that would deadlock). When
// other requests are in flight it first yields the processor: the
// goroutines it handed the reader to, and those about to queue their next
// statement, run first and queue theirs, so that one write carries them
// all. Over TLS, which cannot write without waiting, a caller whose ctx
// cannot end (patient) writes its own request when it is alone (the
// server is then reading, unless it misbehaves), and leaves the rest to a
// flusher; every other write is a flusher's, and the caller waits for its
// reply, where its ctx is watched.
func (w *writer) flushUnlock(req *Request, patient bool) {
	c := w.c
	if !w.takeLocked() {
		if w.Yielding && !w.paused && w.overdueLocked() {
			// The writer is still yielding, and half of what is queued
			// waits for it: take its role over and write now.
			w.Yielding = false
			w.Takeovers++
			w.writeUnlock(false, callerPasses)
			return
		}
		c.Wmu.Unlock() // the writer writes these bytes too, or the cancel's end
		return
	}
	alone := c.Tail == req && req.state.Load() == reqHead
	switch {
	case !w.sock.ok() && alone && patient:
		w.writeUnlock(true, 1) // nothing in flight before it: the server reads
	case !w.sock.ok():
		c.Wmu.Unlock()
		go w.flushLoop()
	case alone:
		w.writeUnlock(false, callerPasses)
	default:
		w.Yielding = true
		takeovers := w.Takeovers
		c.Wmu.Unlock()
		runtime.Gosched()
		c.Wmu.Lock()
		if w.Takeovers != takeovers {
			c.Wmu.Unlock() // a caller took the role over (overdueLocked)
			return
		}
		w.Yielding = false
		w.writeUnlock(false, callerPasses)
	}
}

// overdueLocked says whether the requests waiting to be written are at
// least two and half of those queued: the server then has at most as
// many statements left as wait here, and the writer's yield is not to be
// waited for. A yield ends once the goroutines ready on its processor
// have run, and the heads that read replies already received hand the
// reader on to each other without ever leaving it: a writer yielding
// while forty replies were read would write the forty statements their
// callers queued only after the last, and leave the server idle until
// then (a convoy: the server and the client taking turns, each idle
// while the other works). Written by a caller at half, they keep the
// server busy with one half while the other is read and queued.
func (w *writer) overdueLocked() bool {
	waiting := w.c.SeqNext - w.swappedSeq
	return waiting >= 2 && 2*waiting >= uint64(w.c.Queued)
}

// writeUnlock writes the write buffer until it is empty, as the writer
// (see takeLocked), then gives the role up and releases wmu. With wait,
// it waits for the socket; without (a caller, on a connection that can:
// sockWriter), what the socket does not take at once is left to a
// flusher. After passes writes (none: no limit), what is still queued is
// left to a flusher too, so that a caller goes back to its own reply
// (and its ctx) while others keep queueing.
func (w *writer) writeUnlock(wait bool, passes int) {
	c := w.c
	for pass := 0; len(w.Wbuf) > 0 && !w.paused; pass++ {
		if passes > 0 && pass == passes {
			c.Wmu.Unlock()
			go w.flushLoop()
			return
		}
		if wait {
			if w.writePassLocked() != nil {
				break
			}
			continue
		}
		buf, from, to := w.swapLocked()
		c.Wmu.Unlock()
		n, err := w.sock.writeNoWait(buf)
		if err == nil && n < len(buf) {
			// The rest waits for the socket: a flusher's, with the
			// writer's role.
			go w.flushRest(buf, n, from, to)
			return
		}
		if err != nil {
			w.writeFailed(n, from, err)
		}
		c.Wmu.Lock()
		w.spare = buf[:0]
		if err != nil {
			break
		}
		w.wroteLocked(to)
	}
	w.dropLocked()
	c.Wmu.Unlock()
}

// writePassLocked writes the write buffer once, waiting for the socket,
// as the writer: wmu is released during the write and held again after
// it. A failure has been handled (writeFailed) when it returns.
func (w *writer) writePassLocked() error {
	buf, from, to := w.swapLocked()
	w.c.Wmu.Unlock()
	err := w.writeQueued(buf, 0, from)
	w.c.Wmu.Lock()
	w.spare = buf[:0]
	if err == nil {
		w.wroteLocked(to)
	}
	return err
}

// callerPasses is how many writes a caller makes (see writeUnlock): its
// own bytes and what others queued meanwhile. Under load the buffer
// refills during each write; in a benchmark of 40 goroutines on one Conn,
// 5 % of the callers that wrote found more after the second write, 2 %
// after the seventh.
const callerPasses = 2

// flushLoop writes the write buffer until it is empty, as the writer,
// from a goroutine that waits for no reply.
func (w *writer) flushLoop() {
	// Other requests are in flight: let the goroutines about to queue
	// theirs do so first, so that one syscall writes them all.
	runtime.Gosched()
	w.c.Wmu.Lock()
	w.writeUnlock(true, 0)
}

// flushRest writes buf[off:], the rest of a write a caller began (see
// writeUnlock), then the write buffer until it is empty, as the writer,
// from a goroutine that waits for no reply.
func (w *writer) flushRest(buf []byte, off int, from, to uint64) {
	err := w.writeQueued(buf, off, from)
	w.c.Wmu.Lock()
	w.spare = buf[:0]
	if err != nil {
		w.dropLocked()
		w.c.Wmu.Unlock()
		return
	}
	w.wroteLocked(to)
	w.writeUnlock(true, 0)
}

// swapLocked takes the filled write buffer and leaves the spare one to be
// appended to; the caller holds the role and wmu.
//
// It also returns the sequence numbers of the first request whose bytes
// buf may hold (see writeQueued) and of the last (see wroteLocked).
func (w *writer) swapLocked() (buf []byte, from, to uint64) {
	w.c.syncHolder = nil // its Sync is on its way
	buf = w.Wbuf
	w.Wbuf, w.spare = w.spare, nil
	from = w.swappedSeq + 1
	w.swappedSeq = w.c.SeqNext
	return buf, from, w.swappedSeq
}

// wroteLocked notes that the bytes of the requests up to to (see
// swapLocked) have all reached the socket.
func (w *writer) wroteLocked(to uint64) {
	w.writtenSeq = max(w.writtenSeq, to)
}

// writeQueued writes buf[off:], buf taken by swapLocked with from and its
// first off bytes written already.
func (w *writer) writeQueued(buf []byte, off int, from uint64) error {
	n, err := w.c.NetConn.Write(buf[off:])
	if err != nil {
		w.writeFailed(off+n, from, err)
	}
	return err
}

// writeFailed handles a write of buf (see writeQueued) that failed with
// err, n of its bytes written. When the socket took none of them, the
// requests from from on were never sent, and their errors say so (see
// errFor). When the server had closed the connection (EPIPE, ECONNRESET),
// what it sent before is still to be read, often a FATAL that says why
// and that nothing sent after it ran (pg_terminate_backend, a restart:
// the session ended before the server read the statements written since):
// while requests wait for replies, the request reading fails the
// connection when it reaches the end of what the server sent, with that
// cause (every later write fails the same way, taking nothing). Any other
// failure closes the connection at once.
func (w *writer) writeFailed(n int, from uint64, err error) {
	c := w.c
	if n == 0 {
		w.unsentFrom.CompareAndSwap(0, from)
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		c.Wmu.Lock()
		reading := c.Tail != nil
		c.Wmu.Unlock()
		if reading {
			return
		}
	}
	c.fail(err)
}

// write writes buf to the socket, for the goroutine holding the role
// (claim, streamUnlock); a failure closes the connection, and every
// queued request then fails when it reads.
func (w *writer) write(buf []byte) error {
	if _, err := w.c.NetConn.Write(buf); err != nil {
		w.c.fail(err)
		return err
	}
	return nil
}

// claim makes the calling goroutine the connection's only writer, once a
// flusher still writing earlier requests is done, and writes what was
// queued before; the caller then writes with write, and gives the role
// back with release. The caller holds the connection (copyHold): nobody
// else appends requests meanwhile. On error the role is given back.
func (w *writer) claim() error {
	c := w.c
	c.Wmu.Lock()
	if err := w.awaitLocked(nil); err != nil {
		c.Wmu.Unlock()
		return err
	}
	var pending []byte
	var to uint64
	if len(w.Wbuf) > 0 {
		pending, _, to = w.swapLocked()
	}
	c.Wmu.Unlock()
	if pending == nil {
		return nil
	}
	err := w.write(pending)
	c.Wmu.Lock()
	w.spare = pending[:0]
	if err == nil {
		w.wroteLocked(to)
	}
	c.Wmu.Unlock()
	if err != nil {
		w.release()
		return err
	}
	return nil
}

// release gives up the writer's role taken by claim, writing whatever was
// appended meanwhile (a CopyFail of readSimple refusing a second COPY).
func (w *writer) release() { w.flushLoop() }

// streamUnlock writes the write buffer, whose last request holds ReaderArg
// values, as the writer (taken with awaitLocked), and releases wmu: each
// hole's reader bytes are copied to the socket in place, in the caller's
// goroutine, so that ctx's end stops the write (see writeWithStop).
// Requests queued meanwhile are written after it, by a flusher. On error
// the connection is closed.
func (w *writer) streamUnlock(ctx context.Context, holes []hole) {
	c := w.c
	buf, _, to := w.swapLocked() // written here, piece by piece (not writeQueued)
	c.Wmu.Unlock()

	werr := w.writeWithStop(ctx, func() error { return w.writeWithHoles(buf, holes) })

	c.Wmu.Lock()
	w.spare = buf[:0]
	if werr == nil {
		w.wroteLocked(to)
	}
	if werr == nil && len(w.Wbuf) > 0 {
		c.Wmu.Unlock()
		go w.flushLoop()
	} else {
		w.dropLocked()
		c.Wmu.Unlock()
	}
}

// writeWithStop runs write, which writes to the socket in the caller's
// goroutine, so that ctx's end stops it: a past write deadline makes the
// write fail, and the connection with it (a message half written cannot
// be finished), and the caller's read of its reply returns ctx's error.
// A server that stops reading cannot keep the caller past its deadline.
func (w *writer) writeWithStop(ctx context.Context, write func() error) error {
	if ctx.Done() == nil {
		return write()
	}
	nc := w.c.NetConn
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		nc.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	err := write()
	if !stop() {
		<-fired // the deadline is set: clear it for the writes after
		if err == nil {
			nc.SetWriteDeadline(time.Time{})
		}
	}
	return err
}

// writeWithHoles writes buf with each hole's reader bytes inserted at its
// position.
func (w *writer) writeWithHoles(buf []byte, holes []hole) error {
	c := w.c
	prev := 0
	for _, h := range holes {
		if err := w.write(buf[prev:h.pos]); err != nil {
			return err
		}
		n, err := io.CopyN(c.NetConn, h.r, h.n)
		if err != nil {
			if n < h.n && (err == io.EOF || c.fatal.Load() == nil) {
				err = fmt.Errorf("pgline: ReaderArg gave %d of its %d bytes: %w", n, h.n, err)
			}
			c.fail(err)
			return err
		}
		prev = h.pos
	}
	return w.write(buf[prev:])
}

// flushPastHoldUnlock gets the write buffer written, as flushLoop does,
// and releases wmu; but while a cancel holds writes (pauseLocked) and
// nobody holds the role, it writes at once, past the hold. It is for a
// CopyFail refusing a COPY FROM STDIN nobody asked for (refuseCopyIn): a
// drain's cancel may hold writes for that very statement, which waits in
// copy mode for data. The cancel does not end it (the backend reads from
// the client, and takes no cancel then), the CopyFail does, and no
// statement follows it for a late signal to hit (statements that may
// COPY FROM STDIN run alone on the connection, see holdForCopy). Held
// back, it would wait for the drain, which waits for it, until
// cancel_timeout closed the connection.
func (w *writer) flushPastHoldUnlock() {
	c := w.c
	if w.paused && !w.Taken {
		w.Taken = true
		w.writePassLocked()
		w.dropLocked()
		c.Wmu.Unlock()
		return
	}
	if !w.takeLocked() {
		c.Wmu.Unlock() // written by the writer, or after the cancel (resume)
		return
	}
	c.Wmu.Unlock()
	w.flushLoop()
}

// terminate writes Terminate, for Close, when every byte queued has been
// written, nobody holds the writer's role and no cancel holds writes,
// taking the role for the write: the server then runs what it was sent
// (as it would with the socket closed under it) and ends the session
// cleanly, rather than finding the socket reset (logged as "could not
// receive data from client"): a connect's pooler check still in flight
// (startup_pid.go), a statement given up and being drained. A short
// deadline keeps Close from hanging on a dead peer. Otherwise nothing is
// written: the socket is closed under the requests in flight.
func (w *writer) terminate() {
	c := w.c
	c.Wmu.Lock()
	idle := !w.Taken && !w.paused && len(w.Wbuf) == 0
	w.Taken = w.Taken || idle
	c.Wmu.Unlock()
	if !idle {
		return
	}
	c.NetConn.SetWriteDeadline(time.Now().Add(time.Second))
	c.NetConn.Write(wire.AppendTerminate(nil))
	c.Wmu.Lock()
	w.dropLocked()
	c.Wmu.Unlock()
}

// hole marks where the bytes of a ReaderArg go in a message being written.
type hole struct {
	pos int       // offset in the built bytes
	r   io.Reader // gives exactly n bytes
	n   int64
}
