package pgline

import (
	"context"
	"time"
)

// Routing statements to the connections of a Pool's host (hostPool).
//
// A statement takes a slot on the open connection with the fewest
// requests in flight (up to pool_max_pipeline per connection). When every
// slot is taken it waits in a FIFO queue, and each slot freed goes to the
// statement at its head (serveLocked): one wake-up per freed slot, in
// arrival order, however many goroutines wait. A statement arriving while
// others wait queues behind them even if a slot is free at that moment.
// Acquire and Begin wait the same way in a second line, for a connection
// of their own (serveTakersLocked).

// poolWaiter is a call waiting in one of a hostPool's lines: a statement for
// a slot (route), or an Acquire or Begin for a connection of its own
// (take).
type poolWaiter struct {
	prev, next *poolWaiter
	ctx        context.Context
	ready      chan struct{} // one token (wake) once pc, open or err is set
	pc         *poolConn
	check      bool // pc was idle for pool_idle_check: look at it first
	open       bool // take: a reservation to open a connection (counted in held)
	err        error
}

// newWaiter returns a waiter for ctx: a statement's is recycled
// (putWaiter), so that waiting costs no allocation.
func (p *hostPool) newWaiter(ctx context.Context) *poolWaiter {
	w, _ := p.waiters.Get().(*poolWaiter)
	if w == nil {
		w = &poolWaiter{ready: make(chan struct{}, 1)}
	}
	w.ctx = ctx
	return w
}

// putWaiter recycles w, whose token, if it was woken, has been taken.
func (p *hostPool) putWaiter(w *poolWaiter) {
	*w = poolWaiter{ready: w.ready}
	p.waiters.Put(w)
}

// wake ends w's wait; it is called once, under the hostPool's mu.
func (w *poolWaiter) wake() { w.ready <- struct{}{} }

// waitLine is a hostPool's line of waiters, first come first served; the
// hostPool's mu guards it.
type waitLine struct {
	head, tail *poolWaiter
	n          int
}

func (l *waitLine) push(w *poolWaiter) {
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	l.n++
}

func (l *waitLine) remove(w *poolWaiter) {
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

// route takes a slot for one statement: the open connection with the
// fewest requests in flight, avoiding those whose queue waits behind open
// Rows. When every connection is busy and the pool is below its maximum,
// another is opened (this statement does not wait for it when a busy one
// can take it pipelined). It waits, in arrival order, when every
// connection has pool_max_pipeline requests in flight.
func (p *hostPool) route(ctx context.Context) (pc *poolConn, check bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, notSent(ErrPoolClosed)
	}
	if p.stmtLine.head == nil {
		if pc, check := p.pickLocked(); pc != nil {
			p.mu.Unlock()
			return pc, check, nil
		}
		// pickLocked opened a connection if the pool may grow.
	} else {
		p.openForWaitersLocked()
	}
	w := p.newWaiter(ctx)
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
			p.serveLocked()
		}
	default:
		p.stmtLine.remove(w)
	}
	p.putWaiter(w)
	return nil, false, connectWaitErr(ctx, p.lastErr)
}

// pickLocked takes a slot for a statement, opening a connection when every
// one is busy and the pool is below its maximum; nil when none is free.
func (p *hostPool) pickLocked() (pc *poolConn, check bool) {
	var best *poolConn
	bestScore := 0
	p.pruneClosedLocked()
	for _, pc := range p.conns {
		if pc.retiring || pc.draining {
			continue
		}
		score := pc.inflight
		if pc.openRows > 0 {
			score += p.pc.maxPipeline
		}
		if best == nil || score < bestScore {
			best, bestScore = pc, score
		}
	}
	if best == nil || bestScore > 0 {
		p.growLocked()
	}
	if best == nil || bestScore > 0 && (best.inflight >= p.pc.maxPipeline || bestScore >= p.pc.maxPipeline && p.totalLocked() < p.pc.maxConns) {
		return nil, false
	}
	check = best.inflight == 0 && time.Since(best.lastUsed) >= p.pc.idleCheck
	best.inflight++
	return best, check
}

// serveLocked gives free slots to the waiting statements, first come first
// served; it is called whenever a slot may have become free.
func (p *hostPool) serveLocked() {
	for p.stmtLine.head != nil {
		pc, check := p.pickLocked()
		if pc == nil {
			return
		}
		w := p.stmtLine.head
		p.stmtLine.remove(w)
		w.pc, w.check = pc, check
		w.wake()
	}
}

// openForWaitersLocked opens a connection for the waiting statements when
// the pool may grow.
func (p *hostPool) openForWaitersLocked() {
	if p.stmtLine.head != nil {
		p.growLocked()
	}
}

// growLocked opens a connection when the pool is below its maximum: after
// a failure, one attempt at a time (see openFailedLocked).
func (p *hostPool) growLocked() {
	if p.totalLocked() < p.pc.maxConns && (p.failures == 0 || p.opening == 0) {
		p.openLocked()
	}
}

// failWaitersLocked ends the wait of the statements that do not wait for
// a host after a failed connection attempt (see waitsForHost), when no
// connection is open to serve them.
func (p *hostPool) failWaitersLocked(err error) {
	if len(p.conns) > 0 {
		return
	}
	for w := p.stmtLine.head; w != nil; {
		next := w.next
		if !waitsForHost(w.ctx, err) {
			p.stmtLine.remove(w)
			w.err = notSent(err)
			w.wake()
		}
		w = next
	}
}

// closeWaitersLocked ends every wait when the pool closes.
func (p *hostPool) closeWaitersLocked() {
	for w := p.stmtLine.head; w != nil; w = p.stmtLine.head {
		p.stmtLine.remove(w)
		w.err = notSent(ErrPoolClosed)
		w.wake()
	}
}
