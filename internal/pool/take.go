package pool

import (
	"context"
	"fmt"
	"time"
)

// Taking a connection of a Host for one caller's exclusive use: Acquire
// and Begin.
//
// A take gets an idle connection, or opens one when the pool may grow;
// otherwise it waits in the Host's second line (takeLine), served in
// arrival order as connections free (serveTakersLocked). While callers
// wait, as many busy connections as callers are marked draining
// (balanceDrainingLocked): they take no more statements and become idle.
// A held connection goes back with GiveBack, or Release (AfterRelease).

// Take removes an idle connection from routing (or opens one) for
// exclusive use, traced by Config.TraceTake; with reset (Acquire), a
// connection a Pool transaction ran on has its session reset first (see
// takeChecked). The connection goes back with Conn.GiveBack or
// Conn.Release.
func (p *Host) Take(ctx context.Context, reset bool) (*Conn, error) {
	if p.cfg.TraceTake == nil {
		return p.takeChecked(ctx, reset)
	}
	tctx, end := p.cfg.TraceTake(ctx, p.label)
	// tctx: a connection opened for the acquisition is traced under it.
	pc, err := p.takeChecked(tctx, reset)
	var b Backend
	if pc != nil {
		b = pc.b
	}
	end(b, err)
	return pc, err
}

// takeChecked is takeUntraced, with the connection checked when it was
// idle for pool_idle_check (see Backend.UsableAfterIdle), then by
// Config.Prepare.
func (p *Host) takeChecked(ctx context.Context, reset bool) (*Conn, error) {
	for refused := 0; ; {
		pc, check, err := p.takeUntraced(ctx)
		if err != nil {
			return nil, err
		}
		if check && !pc.b.UsableAfterIdle(ctx) {
			p.giveBack(pc) // closed: dropped
			continue
		}
		// Before PrepareConn, so that what it sets is not reset.
		if reset && pc.txRan.Load() && !pc.resetTaken(ctx) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		if p.cfg.Prepare != nil {
			ok, err := p.prepareConn(ctx, pc)
			if err != nil || !ok {
				pc.b.Close()
				p.giveBack(pc) // closed: dropped
				if err != nil {
					return nil, fmt.Errorf("pgline: PrepareConn: %w", err)
				}
				// As many as the pool holds, and a few new ones.
				if refused++; refused > p.st.MaxConns+2 {
					return nil, fmt.Errorf("pgline: PrepareConn refused %d connections in a row", refused)
				}
				continue
			}
		}
		return pc, nil
	}
}

// Release returns a connection the caller held (PoolConn.Release, a
// transaction's end), closed when Config.AfterRelease says so (or
// panics: the panic goes on once the connection is back).
func (pc *Conn) Release() {
	p := pc.p
	if after := p.cfg.AfterRelease; after != nil && !pc.b.IsClosed() {
		keep := false
		defer func() {
			if !keep {
				pc.b.Close() // false, or a panic: it goes on after the connection is back
			}
			p.giveBack(pc)
		}()
		keep = after(pc.b)
		return
	}
	p.giveBack(pc)
}

// prepareConn runs Config.Prepare on a held connection; when it panics, the
// connection is closed and given back before the panic goes on, so that
// the pool does not count it held for ever.
func (p *Host) prepareConn(ctx context.Context, pc *Conn) (ok bool, err error) {
	done := false
	defer func() {
		if !done {
			pc.b.Close()
			p.giveBack(pc)
		}
	}()
	ok, err = p.cfg.Prepare(ctx, pc.b)
	done = true
	return ok, err
}

// takeUntraced takes a connection: an idle one when nobody waits before
// the call, or one it opens, or one served to it in takeLine; check
// reports one idle for pool_idle_check.
func (p *Host) takeUntraced(ctx context.Context) (pc *Conn, check bool, err error) {
	var failed error // the last connection attempt of this call
	p.mu.Lock()
	p.takers++
	defer func() {
		p.takers--
		p.balanceDrainingLocked()
		p.serveLocked() // statements held back by the draining marks may go on
		p.signalLocked()
		p.mu.Unlock()
	}()
	reserved := false // a connection is counted in held for this call to open
	for {
		if p.closed {
			if reserved {
				p.held--
			}
			return nil, false, p.cfg.closedErr()
		}
		p.pruneClosedLocked()
		if !reserved {
			first := p.takeLine.head == nil // nobody waits before this call
			if first {
				if pc := p.idleForTakeLocked(); pc != nil {
					// Always looked at: nothing can send the holder's
					// statements elsewhere (a look costs a system call).
					return pc, p.st.IdleCheck != NoLimit, nil
				}
			}
			if err := p.backoffErrLocked(ctx); err != nil {
				return nil, false, err
			}
			if first {
				reserved = p.reserveOpenLocked()
			}
		}
		if reserved {
			wait := time.Until(p.nextOpen)
			p.takeOpens++
			p.mu.Unlock()
			c, err := p.connectHeld(ctx, wait)
			p.mu.Lock()
			p.takeOpens--
			if err == nil && p.closed {
				c.Close()
				err = p.cfg.ErrClosed
			}
			if err == nil {
				p.failures, p.lastErr = 0, nil
				p.upAgainLocked()
				now := time.Now()
				return &Conn{p: p, b: c, created: now, lastUsed: now}, false, nil
			}
			p.held--
			reserved = false
			if c == nil && ctxEnded(ctx) == nil && !p.closed {
				p.openFailedLocked(err)
				p.failWaitersLocked(err)
				p.failTakersLocked(err)
				p.openForWaitersLocked()
			}
			if p.closed {
				return nil, false, p.cfg.closedErr()
			}
			if p.multi && c == nil && ctxEnded(ctx) == nil {
				// The host is down (hostDownLocked): choose another.
				return nil, false, p.cfg.NotSent(&rerouteError{err})
			}
			if !p.cfg.waitsForHost(ctx, err) {
				if failed != nil && ctx.Err() != nil {
					return nil, false, p.cfg.connectWaitErr(ctx, failed)
				}
				return nil, false, p.cfg.NotSent(err)
			}
			failed = err // waits for the next attempt, or a connection freed meanwhile
		}
		// Wait in line. Every connection is busy with statements, which
		// would keep it busy for ever under load: stop routing statements
		// to one of them per waiting caller, so that it becomes idle.
		w := &waiter{ctx: ctx, ready: make(chan struct{}, 1)}
		p.takeLine.push(w)
		p.balanceDrainingLocked()
		// Served at once when it may open a connection now (after a
		// failed attempt: the next, after the backoff).
		p.serveTakersLocked()
		p.mu.Unlock()
		select {
		case <-w.ready:
			p.mu.Lock()
		case <-ctx.Done():
			p.mu.Lock()
			select {
			case <-w.ready: // served as ctx ended: what it got goes to the next
				if w.pc != nil {
					p.held--
					p.conns = append(p.conns, w.pc)
				} else if w.open {
					p.held--
				}
			default:
				p.takeLine.remove(w)
			}
			if w.err != nil {
				return nil, false, w.err
			}
			return nil, false, p.cfg.connectWaitErr(ctx, failed)
		}
		switch {
		case w.err != nil:
			return nil, false, w.err
		case w.pc != nil:
			return w.pc, p.st.IdleCheck != NoLimit, nil
		}
		reserved = w.open
	}
}

// idleForTakeLocked removes an idle connection from routing and counts it
// held; nil when none is idle.
func (p *Host) idleForTakeLocked() *Conn {
	for i, pc := range p.conns {
		if pc.inflight == 0 && !pc.retiring && !pc.b.IsClosed() {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			pc.draining = false
			p.held++
			return pc
		}
	}
	return nil
}

// reserveOpenLocked counts in held a connection that a take is to open,
// when the pool may grow: after a failure, one attempt at a time.
func (p *Host) reserveOpenLocked() bool {
	if p.totalLocked() >= p.st.MaxConns || p.failures > 0 && p.opening+p.takeOpens > 0 {
		return false
	}
	p.held++
	return true
}

// serveTakersLocked hands idle connections, or reservations to open one,
// to the waiting Acquire and Begin calls, first come first served: one
// wake-up each, however many wait. Statements are served first where a
// connection frees (serveLocked): they are short and pipelined, and the
// connections marked draining for the callers still waiting here
// (balanceDrainingLocked) take no more of them, so both lines move.
func (p *Host) serveTakersLocked() {
	for w := p.takeLine.head; w != nil; w = p.takeLine.head {
		if p.closed {
			p.takeLine.remove(w)
			w.err = p.cfg.closedErr()
		} else if pc := p.idleForTakeLocked(); pc != nil {
			p.takeLine.remove(w)
			w.pc = pc
		} else if p.reserveOpenLocked() {
			p.takeLine.remove(w)
			w.open = true
		} else {
			p.balanceDrainingLocked()
			return
		}
		w.wake()
	}
}

// failTakersLocked ends the wait of the Acquire and Begin calls that do not
// wait for a host (see waitsForHost) after a failed connection attempt,
// when they would have made an attempt of their own.
func (p *Host) failTakersLocked(err error) {
	if p.totalLocked() >= p.st.MaxConns {
		return // they wait for a connection to be freed
	}
	p.failLineLocked(&p.takeLine, err)
}

// connectHeld opens a connection for take, after waiting out the backoff;
// Close, which waits for held connections, ends the attempt.
func (p *Host) connectHeld(ctx context.Context, wait time.Duration) (Backend, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.closing, cancel)
	defer stop()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-cctx.Done():
			t.Stop()
			return nil, cctx.Err()
		}
	}
	return p.connect(cctx)
}

// balanceDrainingLocked keeps as many connections draining as callers wait
// in take: those that will drain soonest, by the routing's measure of
// their load (loadLocked), so never one held by open Rows or stalled
// while another is not. A mark on a held connection moves to one that is
// not; marks no longer needed are cleared, held ones first.
func (p *Host) balanceDrainingLocked() {
	n := 0
	for _, pc := range p.conns {
		if pc.draining {
			n++
		}
	}
	if n == 0 && p.takers == 0 {
		return
	}
	var now time.Time
	// marked returns the draining connection with the most load, unmarked
	// the other with the least.
	marked := func() (worst *Conn, load int) {
		for _, pc := range p.conns {
			if l := p.loadLocked(pc, &now); pc.draining && (worst == nil || l > load) {
				worst, load = pc, l
			}
		}
		return worst, load
	}
	unmarked := func() (best *Conn, load int) {
		for _, pc := range p.conns {
			if l := p.loadLocked(pc, &now); !pc.draining && !pc.retiring && (best == nil || l < load) {
				best, load = pc, l
			}
		}
		return best, load
	}
	for ; n > p.takers; n-- {
		pc, _ := marked()
		pc.draining = false
	}
	for ; n < p.takers; n++ {
		pc, _ := unmarked()
		if pc == nil {
			return
		}
		pc.draining = true
	}
	for {
		worst, wl := marked()
		best, bl := unmarked()
		if worst == nil || best == nil || wl < p.st.MaxPipeline || bl >= p.st.MaxPipeline {
			return
		}
		worst.draining, best.draining = false, true
	}
}

// GiveBack returns the held connection to routing (see giveBack), with
// no AfterRelease.
func (pc *Conn) GiveBack() { pc.p.giveBack(pc) }

// Reset resets the session of a connection held (Config.Reset), for the
// next holder: a Pool transaction's session state is then gone (see
// MarkTxRan).
func (pc *Conn) Reset(ctx context.Context) {
	pc.p.cfg.Reset(ctx, pc.b)
	pc.txRan.Store(false)
}

// resetTaken resets the session of a connection taken for Acquire (see
// Reset) and reports whether it is still open; when the reset closed it
// (or Config.Reset panicked), it is given back.
func (pc *Conn) resetTaken(ctx context.Context) bool {
	defer func() {
		if pc.b.IsClosed() {
			pc.p.giveBack(pc)
		}
	}()
	pc.Reset(ctx)
	return !pc.b.IsClosed()
}

// giveBack returns a held connection to routing, or closes it when it is
// broken, inside a transaction, or past its lifetime.
func (p *Host) giveBack(pc *Conn) {
	bad := pc.b.IsClosed() || pc.b.TxStatus() != 'I'
	p.mu.Lock()
	p.held--
	pc.draining = false
	pc.lastUsed = time.Now()
	if bad || p.closed || time.Since(pc.created) > p.st.MaxLifetime {
		p.lostLocked(pc) // before Close: was it closed by its failure?
		pc.b.Close()
		p.fillMinLocked()
	} else {
		p.conns = append(p.conns, pc)
	}
	p.serveLocked()
	p.signalLocked()
	p.mu.Unlock()
}
