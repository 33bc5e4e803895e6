package floor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Pipe lets goroutines share one Conn with the least machinery that gives
// each its own reply as soon as it has come, the design pgline's Conn
// uses without its features (contexts, cancels, scanning, resends):
//   - a caller appends its query to a write buffer under a mutex and joins
//     a FIFO of waiters; queries that meet in one write share its Sync,
//     each followed by BEGIN and COMMIT as in Independent, so that each
//     commits on its own;
//   - whoever finds no write under way writes the buffer (Sync appended)
//     until it is empty, first yielding the processor when queries are in
//     flight, so that the goroutines about to append theirs do so first;
//   - the oldest waiter reads its own reply and hands the read turn to the
//     next.
//
// It is the floor for goroutines sharing a connection, as Independent is
// for one goroutine sending batches. An error skips the rest of its
// write's queries: they get the error (the floor does not send them
// again). A broken connection fails every query.
//
// A Pipe made by NewReaderPipe keeps each caller's ctx as well (the
// guarantee pgline gives, without its other features): a goroutine of
// its own reads every reply and hands each to its caller, who waits for
// it or for its ctx, whichever comes first; a reply whose caller left is
// read and thrown away. Its floor is the one for a shared connection
// whose callers' deadlines are kept.
type Pipe struct {
	c             *Conn
	begin, commit []byte // Bind+Execute of the prepared BEGIN and COMMIT

	mu      sync.Mutex
	wb      []byte // queries not yet written, without their Sync
	spare   []byte
	writing bool
	queue   []*waiter // queries written or buffered, oldest first
	head    int
	last    *waiter // the last query in wb, nil when wb is empty
	bad     error
	pool    sync.Pool
	reader  bool // replies are read by readLoop (NewReaderPipe)
}

type waiter struct {
	turn    chan struct{} // the read turn, the end of a skipped query, or (reader) the reply's end
	err     error         // set before turn when the query was skipped (reader: its reply's error)
	rows    int           // reader: set before turn
	chained bool          // followed by BEGIN and COMMIT in the same Sync group
	state   atomic.Int32  // reader: waiting, done (turn sent) or abandoned (its caller left)
}

// waiter states (NewReaderPipe).
const (
	waiting int32 = iota
	answered
	abandoned
)

// NewPipe shares c, whose prepared statements begin and commit run BEGIN
// and COMMIT. c must not be used otherwise until the Pipe is closed.
func NewPipe(c *Conn, begin, commit string) *Pipe {
	p := &Pipe{c: c,
		begin:  appendBindExecute(nil, begin, nil, nil),
		commit: appendBindExecute(nil, commit, nil, nil),
	}
	p.pool.New = func() any { return &waiter{turn: make(chan struct{}, 1)} }
	return p
}

// NewReaderPipe is NewPipe for a Pipe whose replies are read by a
// goroutine of its own, so that ExecContext keeps each caller's ctx (see
// Pipe). c's reply buffer must be empty.
func NewReaderPipe(c *Conn, begin, commit string) *Pipe {
	p := NewPipe(c, begin, commit)
	p.reader = true
	go p.readLoop()
	return p
}

// Exec runs the prepared statement stmt with params (see Conn.Exec) and
// returns the number of rows its reply held.
func (p *Pipe) Exec(stmt string, params [][]byte, formats []int16) (int, error) {
	return p.ExecContext(context.Background(), stmt, params, formats)
}

// ExecContext is Exec. On a Pipe made by NewReaderPipe, a caller whose ctx
// ends before its reply has come gets ctx's error at once, and the reply
// is thrown away when it comes; on the others, ctx is not looked at.
func (p *Pipe) ExecContext(ctx context.Context, stmt string, params [][]byte, formats []int16) (int, error) {
	w := p.pool.Get().(*waiter)
	w.err, w.chained, w.rows = nil, false, 0
	w.state.Store(waiting)
	p.mu.Lock()
	if p.bad != nil {
		err := p.bad
		p.mu.Unlock()
		p.pool.Put(w)
		return 0, err
	}
	if p.last != nil {
		p.last.chained = true
		p.wb = append(append(p.wb, p.begin...), p.commit...)
	}
	p.wb = appendBindExecute(p.wb, stmt, params, formats)
	p.last = w
	p.queue = append(p.queue, w)
	if !p.reader && len(p.queue)-p.head == 1 {
		w.turn <- struct{}{}
	}
	if !p.writing {
		p.writing = true
		if len(p.queue)-p.head > 1 {
			p.mu.Unlock()
			runtime.Gosched()
			p.mu.Lock()
		}
		for len(p.wb) > 0 && p.bad == nil {
			buf := append(p.wb, 'S', 0, 0, 0, 4)
			p.wb, p.spare, p.last = p.spare[:0], nil, nil
			p.mu.Unlock()
			_, err := p.c.nc.Write(buf)
			p.mu.Lock()
			p.spare = buf[:0]
			if err != nil {
				p.failLocked(fmt.Errorf("floor: write: %w", err))
			}
		}
		p.writing = false
	}
	p.mu.Unlock()
	if p.reader {
		return p.awaitReply(ctx, w)
	}
	<-w.turn
	if err := w.err; err != nil {
		p.pool.Put(w)
		return 0, err
	}
	rows, err, _ := p.readReply(w)
	p.pool.Put(w)
	return rows, err
}

// awaitReply waits for w's reply, read by readLoop, or for ctx's end.
func (p *Pipe) awaitReply(ctx context.Context, w *waiter) (int, error) {
	if done := ctx.Done(); done == nil {
		<-w.turn
	} else {
		select {
		case <-w.turn:
		case <-done:
			if w.state.CompareAndSwap(waiting, abandoned) {
				return 0, ctx.Err() // w is readLoop's now
			}
			<-w.turn // answered meanwhile
		}
	}
	rows, err := w.rows, w.err
	p.pool.Put(w)
	return rows, err
}

// readLoop reads every reply, for the oldest query waiting, until the
// connection fails.
func (p *Pipe) readLoop() {
	for {
		// Nothing comes before a query was written, and queries are
		// queued before they are written.
		if _, err := p.c.r.Peek(1); err != nil {
			p.mu.Lock()
			p.failLocked(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
			p.mu.Unlock()
			return
		}
		p.mu.Lock()
		if p.head == len(p.queue) {
			p.failLocked(errors.New("floor: protocol error: a reply to no query"))
			p.mu.Unlock()
			return
		}
		w := p.queue[p.head]
		p.mu.Unlock()
		if _, _, broken := p.readReply(w); broken {
			return
		}
	}
}

// wakeLocked ends w's wait: its turn, or its skip with err; on a reader
// Pipe, its reply (rows and err), unless its caller left: w is then
// recycled. A waiter already answered is left alone.
func (p *Pipe) wakeLocked(w *waiter, rows int, err error) {
	if !p.reader {
		w.err = err
		w.turn <- struct{}{}
		return
	}
	switch {
	case w.state.CompareAndSwap(waiting, answered):
		w.rows, w.err = rows, err
		w.turn <- struct{}{}
	case w.state.CompareAndSwap(abandoned, answered) && p.bad == nil:
		// (After a failure, readLoop may still be reading w.)
		p.pool.Put(w)
	}
}

// readReply reads w's reply, w having the read turn, and hands the turn
// on: its rows up to CommandComplete, then the BEGIN's and COMMIT's
// replies or the ReadyForQuery that ends the group. After an error, the
// rest of the group is skipped: its queries get the error. On a reader
// Pipe, w is answered. broken: the connection failed.
func (p *Pipe) readReply(w *waiter) (int, error, bool) {
	rows, skip, done := 0, -1, false // skip: CommandCompletes still to come after ours
	var srvErr error
	for {
		typ, body, err := p.next()
		if err != nil {
			p.mu.Lock()
			p.failLocked(err)
			p.mu.Unlock()
			return 0, err, true
		}
		switch typ {
		case 'D':
			rows++
			continue
		case 'E':
			srvErr = parseError(body)
			done = true
			// The server skips to the Sync; so does the reader.
			continue
		case 'Z':
		case 'C':
			if done {
				continue
			}
			if skip < 0 {
				p.mu.Lock()
				chained := w.chained
				p.mu.Unlock()
				if !chained {
					continue // ReadyForQuery comes next
				}
				skip = 3 // ours, the BEGIN's, the COMMIT's
			}
			if skip--; skip > 0 {
				continue
			}
		default:
			continue
		}
		break
	}
	p.mu.Lock()
	p.popLocked() // w
	if srvErr != nil {
		// The queries after w in its group were skipped.
		for chained := w.chained; chained; {
			s := p.popLocked()
			if s == nil {
				break
			}
			chained = s.chained
			p.wakeLocked(s, 0, srvErr)
		}
	}
	if p.reader {
		p.wakeLocked(w, rows, srvErr)
	} else if p.head < len(p.queue) {
		p.queue[p.head].turn <- struct{}{}
	}
	p.mu.Unlock()
	return rows, srvErr, false
}

// Close closes the connection.
func (p *Pipe) Close() error {
	p.mu.Lock()
	p.failLocked(ErrBroken)
	p.mu.Unlock()
	return p.c.Close()
}

// failLocked fails every waiting query and every later one.
func (p *Pipe) failLocked(err error) {
	if p.bad == nil {
		p.bad = err
	}
	for _, w := range p.queue[p.head:] {
		if p.reader {
			p.wakeLocked(w, 0, p.bad)
			continue
		}
		w.err = p.bad
		select {
		case w.turn <- struct{}{}:
		default: // the head, which holds the turn: it fails reading
		}
	}
	p.queue, p.head, p.last, p.wb = p.queue[:0], 0, nil, p.wb[:0]
}

// popLocked takes the oldest query, or nil.
func (p *Pipe) popLocked() *waiter {
	if p.head == len(p.queue) {
		return nil
	}
	w := p.queue[p.head]
	p.queue[p.head] = nil
	if p.head++; p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	}
	return w
}

// next reads one message; the body is valid until the next call and kept
// only for ErrorResponse.
func (p *Pipe) next() (byte, []byte, error) {
	typ, n, err := p.c.header()
	if err != nil {
		return 0, nil, err
	}
	if typ == 'E' {
		if n-4 > 1<<20 {
			return 0, nil, fmt.Errorf("floor: protocol error: ErrorResponse of %d bytes", n-4)
		}
		buf := make([]byte, n-4)
		if _, err := io.ReadFull(p.c.r, buf); err != nil {
			return 0, nil, fmt.Errorf("floor: read: %w", eofToUnexpected(err))
		}
		return typ, buf, nil
	}
	if _, err := p.c.r.Discard(n - 4); err != nil {
		return 0, nil, fmt.Errorf("floor: read: %w", eofToUnexpected(err))
	}
	return typ, nil, nil
}
