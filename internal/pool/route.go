package pool

import (
	"context"
	"time"
)

// Routing statements to the connections of a Pool's host (Host).
//
// A statement takes a slot on the open connection with the least load
// (loadLocked: the requests in flight, up to pool_max_pipeline per
// connection), where it is pipelined behind them. A connection whose
// queue is held by something else than the server's work on it weighs as
// full: Rows of a Query or SendBatch routed to it and not closed (they go
// to user code, which may read them slowly, or run statements of its own
// through the Pool while it does), or no statement finished for
// stallAfter (a statement waiting for a lock, a slow one, a Row left
// unscanned). A statement is pipelined behind such a connection only when
// no other can take it and none can be opened. While a connection is
// being opened for the Pool (and the last attempt succeeded), a statement
// is not pipelined behind another's at all: it waits for that connection
// or the first slot freed, since a head that has not answered yet may be
// one that never will before a caller of the statements behind it acts
// (a transaction's lock, read through the Pool while it is held).
//
// When no connection can take a statement it waits in a FIFO queue, and
// each slot freed goes to the statement at its head (serveLocked): one
// wake-up per freed slot, in arrival order, however many goroutines wait.
// A statement arriving while others wait queues behind them even if a
// slot is free at that moment. Acquire and Begin wait the same way in a
// second line, for a connection of their own (serveTakersLocked), and the
// connections set aside for them (draining) are chosen by the same load.

// waiter is a call waiting in one of a Host's lines: a statement for
// a slot (route), or an Acquire or Begin for a connection of its own
// (take).
type waiter struct {
	prev, next *waiter
	ctx        context.Context
	ready      chan struct{} // one token (wake) once pc, open or err is set
	pc         *Conn
	check      bool // pc was idle for pool_idle_check: look at it first
	rows       bool // route: a Query's, whose Rows count open from routing
	open       bool // take: a reservation to open a connection (counted in held)
	err        error
}

// newWaiter returns a waiter for ctx: a statement's is recycled
// (putWaiter), so that waiting costs no allocation.
func (p *Host) newWaiter(ctx context.Context) *waiter {
	w, _ := p.waiters.Get().(*waiter)
	if w == nil {
		w = &waiter{ready: make(chan struct{}, 1)}
	}
	w.ctx = ctx
	return w
}

// putWaiter recycles w, whose token, if it was woken, has been taken.
func (p *Host) putWaiter(w *waiter) {
	*w = waiter{ready: w.ready}
	p.waiters.Put(w)
}

// wake ends w's wait; it is called once, under the Host's mu.
func (w *waiter) wake() { w.ready <- struct{}{} }

// waitLine is a Host's line of waiters, first come first served; the
// Host's mu guards it.
type waitLine struct {
	head, tail *waiter
	n          int
}

// push puts w at the end of the line.
func (l *waitLine) push(w *waiter) {
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	l.n++
}

// remove takes w, which is in the line, out of it.
func (l *waitLine) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next = nil, nil
	l.n--
}

// route takes a slot for one statement (see pickLocked); rows reports a
// Query or SendBatch, whose Rows count open on the connection from now
// on. When every connection is busy and the pool is below its maximum,
// another is opened. It waits, in arrival order, when no connection can
// take the statement.
func (p *Host) route(ctx context.Context, rows bool) (pc *Conn, check bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, p.cfg.closedErr()
	}
	if p.stmtLine.head == nil {
		if pc, check := p.pickLocked(); pc != nil {
			if rows {
				pc.openRows++
			}
			p.mu.Unlock()
			return pc, check, nil
		}
		// pickLocked opened a connection if the pool may grow.
	} else {
		p.openForWaitersLocked()
	}
	if err := p.backoffErrLocked(ctx); err != nil {
		p.mu.Unlock()
		return nil, false, err
	}
	w := p.newWaiter(ctx)
	w.rows = rows
	p.stmtLine.push(w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		pc, check, err = w.pc, w.check, w.err
		p.putWaiter(w)
		return pc, check, err
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.ready: // served as ctx ended: the slot goes to the next
		if w.pc != nil {
			w.pc.inflight--
			if rows {
				w.pc.openRows--
			}
			p.serveLocked()
		}
	default:
		p.stmtLine.remove(w)
	}
	p.putWaiter(w)
	return nil, false, p.cfg.connectWaitErr(ctx, p.lastErr)
}

// stallAfter is how long a connection with statements in flight may
// finish none before routing treats it as blocked (see loadLocked): its
// head waits for a lock, runs long, or is a Row its caller has not
// scanned. New statements then go to another connection, or one opened
// for them, when they can; those already queued behind it wait on. It only
// changes where a statement not sent yet goes. libpq has no equivalent.
const stallAfter = 100 * time.Millisecond

// silenceStep: before stallAfter, a connection weighs one request more per
// silenceStep without an answer (see loadLocked). A connection answering
// as usual, pipelined statements finishing every few tens of
// microseconds, weighs its requests only; one whose head has not answered
// for a millisecond or two loses the next statements to those that answer,
// which is where a head that will not answer soon (waiting for a lock) is
// told from one that will, before stallAfter.
const silenceStep = 250 * time.Microsecond

// loadLocked is pc's load for routing and for the choice of a connection
// to drain: its requests in flight, plus pool_max_pipeline when its queue
// is held by something else than the server's work on it (Rows open, or
// routed to be opened, for user code), so that such a connection comes
// after every other. A connection that has finished no statement for a
// while weighs more the longer it waits (one request per silenceStep, up
// to one less than pool_max_pipeline), and counts as held from stallAfter
// on. now is read once per decision, when first needed.
func (p *Host) loadLocked(pc *Conn, now *time.Time) int {
	n := pc.inflight
	if n == 0 {
		return 0
	}
	max := p.st.MaxPipeline
	if pc.openRows > 0 {
		return n + max
	}
	if now.IsZero() {
		*now = time.Now()
	}
	if silent := now.Sub(pc.lastUsed); silent < stallAfter {
		return n + int(min(silent/silenceStep, time.Duration(max-1)))
	}
	return n + max
}

// pickLocked takes a slot for a statement: the routable connection with
// the least load (loadLocked), opening another when every one is busy and
// the pool is below its maximum. It returns nil, and the statement waits,
// when the least loaded is full (pool_max_pipeline), or busy while a
// connection is being opened for the pool (the last attempt succeeded),
// or held (open Rows, stalled) while the pool may still grow.
func (p *Host) pickLocked() (pc *Conn, check bool) {
	var best *Conn
	bestScore := 0
	var now time.Time
	p.pruneClosedLocked()
	for _, pc := range p.conns {
		if pc.retiring || pc.draining {
			continue
		}
		score := p.loadLocked(pc, &now)
		if best == nil || score < bestScore {
			best, bestScore = pc, score
		}
	}
	if best == nil || bestScore > 0 {
		p.growLocked()
	}
	switch {
	case best == nil || best.inflight >= p.st.MaxPipeline:
		return nil, false
	case bestScore > 0 && p.opening > 0 && p.failures == 0:
		return nil, false // a connection is on its way (or the first slot freed)
	case bestScore >= p.st.MaxPipeline && p.totalLocked() < p.st.MaxConns:
		return nil, false
	}
	if best.inflight == 0 {
		if now.IsZero() {
			now = time.Now()
		}
		check = now.Sub(best.lastUsed) >= p.st.IdleCheck
		best.lastUsed = now // busy from now on: its progress counts from here
	}
	best.inflight++
	return best, check
}

// serveLocked gives free slots to the waiting statements, first come first
// served; it is called whenever a slot may have become free.
func (p *Host) serveLocked() {
	for p.stmtLine.head != nil {
		pc, check := p.pickLocked()
		if pc == nil {
			return
		}
		w := p.stmtLine.head
		p.stmtLine.remove(w)
		if w.rows {
			pc.openRows++
		}
		w.pc, w.check = pc, check
		w.wake()
	}
}

// openForWaitersLocked opens a connection for the waiting statements when
// the pool may grow.
func (p *Host) openForWaitersLocked() {
	if p.stmtLine.head != nil {
		p.growLocked()
	}
}

// growLocked opens a connection when the pool is below its maximum: after
// a failure, one attempt at a time (see openFailedLocked).
func (p *Host) growLocked() {
	if p.totalLocked() < p.st.MaxConns && (p.failures == 0 || p.opening == 0) {
		p.openLocked()
	}
}

// failWaitersLocked ends the wait of the statements that do not wait for
// a host after a failed connection attempt (see waitsForHost), when no
// connection is open to serve them.
func (p *Host) failWaitersLocked(err error) {
	if len(p.conns) > 0 {
		return
	}
	p.failLineLocked(&p.stmtLine, err)
}

// failLineLocked ends, with err (not sent), the waits in l of the calls
// that do not wait for a host after a failed connection attempt (see
// waitsForHost).
func (p *Host) failLineLocked(l *waitLine, err error) {
	for w := l.head; w != nil; {
		next := w.next
		if !p.cfg.waitsForHost(w.ctx, err) {
			l.remove(w)
			w.err = p.cfg.NotSent(err)
			w.wake()
		}
		w = next
	}
}

// closeWaitersLocked ends every wait when the pool closes.
func (p *Host) closeWaitersLocked() {
	for w := p.stmtLine.head; w != nil; w = p.stmtLine.head {
		p.stmtLine.remove(w)
		w.err = p.cfg.closedErr()
		w.wake()
	}
}
