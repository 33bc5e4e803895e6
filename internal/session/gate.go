package session

import (
	"context"
	"sync/atomic"

	"github.com/pgline/pgline/internal/wire"
)

// The gate decides whose requests may be queued on a connection: anyone's
// while it is free; only its holder's while it is held. Two kinds of
// holder take it:
//
//   - a transaction, from Begin to its Commit or Rollback, so that no other
//     goroutine's statement runs inside it;
//   - a COPY FROM STDIN, for its whole run, because in copy mode the server
//     takes any message pipelined behind the COPY as its data. A COPY
//     inside a transaction takes the gate from the transaction and gives
//     it back when it ends.
//
// Every request is sent on behalf of a holder (nil: nobody's, outside a
// transaction) and passes the gate in gateLocked; a holder passes and
// takes it in takeGateLocked.
//
// The gate is fair to those who waited: the goroutines a release wakes
// all look at the gate again before anyone takes it next. Without that, a
// goroutine that runs COPY after COPY (or Begin after Commit) would take
// the gate back each time before the goroutines it woke were scheduled,
// and their statements would wait for as long as it went on.

// gate is the connection's gate. Its fields are guarded by Session.Wmu.
type gate struct {
	holder *Holder // nil when free
	// waking counts the goroutines that a release woke and that have not
	// looked at the gate again yet; takeGateLocked waits for them, on
	// woken (made by the first taker that waits, closed when waking
	// drops to zero).
	waking int
	woken  chan struct{}
}

// Holder is one holder of the gate: a transaction (Tx.h, of the outermost
// Tx) or a COPY (copyHold.h).
type Holder struct {
	// Block is the holder of the transaction the holder's statements run
	// in: the holder itself for a transaction, its transaction's for a
	// COPY in one, nil outside a transaction.
	Block *Holder
	// Doomed, of a transaction's holder: a statement of the transaction
	// was given up when its ctx ended; it may still run, or have run,
	// without its caller knowing. Commit rolls back instead (see Tx.doom).
	Doomed atomic.Bool
	// Of a transaction's holder, guarded by wmu: endOnRelease, the
	// transaction ended while one of its COPYs held the connection (the
	// COPY's release ends it, with a ROLLBACK when rollbackOnRelease is
	// set: see copyHold.releaseNow); pathQueued, a statement that may
	// change search_path was queued in it (see notePathLocked).
	endOnRelease, rollbackOnRelease, pathQueued bool
	// closing: the transaction's COMMIT or ROLLBACK is queued; the gate
	// refuses its statements (ErrTxClosed). Guarded by Session.Wmu.
	closing bool
	// pending counts the holder's requests queued and not yet handed on
	// (see Session.handoff), and settled, when set, is closed once there are
	// none (see Session.Settle). Guarded by Session.Wmu.
	pending int
	settled chan struct{}
	// lastSeq is the seq of the holder's request queued last. Guarded by
	// Session.Wmu.
	lastSeq uint64
	// While the holder holds the gate: free is closed when it lets go,
	// and waiting counts the goroutines blocked on free. Guarded by
	// Session.Wmu.
	free    chan struct{}
	waiting int
}

// notePathLocked records that a statement that may change search_path
// (sqllex.Info.ChangesSearchPath) is queued in the transaction h's
// statements run in, if any: its statements are described for each run
// from now on, and never cached (see Session.notePathLocked). The caller
// holds wmu.
func (h *Holder) notePathLocked() {
	if h != nil && h.Block != nil {
		h.Block.pathQueued = true
	}
}

// pathChanged reports whether notePathLocked was called for the
// transaction h's statements run in. The caller holds wmu.
func (h *Holder) pathChanged() bool {
	return h != nil && h.Block != nil && h.Block.pathQueued
}

// doom dooms the transaction the holder's statements run in, if any (see
// Tx.doom). A nil holder is nobody's.
func (h *Holder) doom() {
	if h != nil && h.Block != nil {
		h.Block.Doomed.Store(true)
	}
}

// releaseLocked gives the gate to prev (nil: everyone), as takeGateLocked
// returned, and wakes the goroutines waiting at it: until each has looked
// at the gate again, no one takes it (see takeGateLocked). The caller
// holds wmu.
func (g *gate) releaseLocked(prev *Holder) {
	h := g.holder
	g.holder = prev
	g.waking += h.waiting
	h.waiting = 0
	close(h.free)
}

// gateLocked waits, with wmu held, until requests of owner may be queued:
// while the gate is held, only its holder's may.
func (c *Session) gateLocked(ctx context.Context, owner *Holder) error {
	return c.passGateLocked(ctx, owner, false)
}

// takeGateLocked waits, as gateLocked, until h may follow owner (nil: no
// transaction) and also until the goroutines the last release woke have
// looked at the gate again; then gives the gate to h. It returns the
// holder h replaces, for h's release to give the gate back to. The caller
// holds wmu; a ctx that ends first leaves the gate untaken.
func (c *Session) takeGateLocked(ctx context.Context, owner, h *Holder) (prev *Holder, err error) {
	if err := c.passGateLocked(ctx, owner, true); err != nil {
		return nil, err
	}
	prev = c.gate.holder
	h.free, h.waiting = make(chan struct{}), 0
	c.gate.holder = h
	return prev, nil
}

// passGateLocked is gateLocked, and takeGateLocked when take is set.
func (c *Session) passGateLocked(ctx context.Context, owner *Holder, take bool) error {
	g := &c.gate
	for !c.closed.Load() {
		var on *Holder // the holder waited for, if any
		var wait chan struct{}
		switch {
		case g.holder != nil && g.holder != owner:
			on, wait = g.holder, g.holder.free
			on.waiting++
		case take && g.waking > 0:
			if g.woken == nil {
				g.woken = make(chan struct{})
			}
			wait = g.woken
		default:
			if owner != nil && owner.closing {
				return APIErrors.TxClosed
			}
			return nil
		}
		c.Wmu.Unlock()
		var err error
		select {
		case <-wait:
		case <-c.dead:
		case <-ctx.Done():
			err = ctx.Err()
		}
		c.Wmu.Lock()
		if on != nil {
			g.lookedLocked(on)
		}
		if err != nil {
			return err
		}
	}
	return c.closedErr()
}

// lookedLocked records that a goroutine that waited for h to let go of
// the gate looks at it again (or gives up). The caller holds wmu.
func (g *gate) lookedLocked(h *Holder) {
	select {
	case <-h.free: // woken by releaseLocked, which counted it in waking
		g.waking--
		if g.waking == 0 && g.woken != nil {
			close(g.woken)
			g.woken = nil
		}
	default:
		h.waiting--
	}
}

// Settle waits until every request sent for h has been handed on (its
// caller has its reply, or gave up and the transaction is doomed), or
// until ctx ends.
func (c *Session) Settle(ctx context.Context, h *Holder) error {
	c.Wmu.Lock()
	if h.pending == 0 {
		c.Wmu.Unlock()
		return nil
	}
	if h.settled == nil {
		h.settled = make(chan struct{})
	}
	ch := h.settled
	c.Wmu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HoldBlock gives the gate to h, the holder of a transaction about to
// begin, once no other holds it: from then on only h's requests are
// queued. Nothing is sent; a ctx that ends first leaves it untaken.
func (c *Session) HoldBlock(ctx context.Context, h *Holder) error {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	if _, err := c.takeGateLocked(ctx, nil, h); err != nil { // nobody held it: nothing to give back
		return NotSent(err)
	}
	return nil
}

// EndBlock sends sql, the COMMIT or ROLLBACK that ends h's transaction
// block, and returns its command tag. From the moment it is queued h is
// closing: the transaction's statements are refused (ErrTxClosed) rather
// than run after it, outside the transaction. Nobody holds the block
// after it (given up, its reply is read after the connection is let go):
// endsBlock.
func (c *Session) EndBlock(ctx context.Context, h *Holder, sql string) (string, error) {
	return c.exchange(ctx, &ReqSpec{owner: h, endsBlock: true}, func(buf []byte) ([]byte, error) {
		h.closing = true // the caller holds wmu
		return wire.AppendQuery(buf, sql)
	}, func(req *Request) (string, error) { return c.readSimple(req, nil, false) })
}

// ReleaseBlock lets the connection go from h, a transaction that ended;
// open says the server may be in its block still: a ROLLBACK is queued
// first, ahead of every other goroutine's statements. When one of the
// transaction's COPYs holds the gate, the COPY's release ends it.
func (c *Session) ReleaseBlock(h *Holder, open bool) {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	h.closing = true
	if c.gate.holder == h {
		c.endTxLocked(open)
	} else {
		h.endOnRelease, h.rollbackOnRelease = true, open
	}
}

// SendWhileHeld sends sql detached from its caller (see
// sendDetachedUnlock) when owner holds the gate and root, the holder of
// its outermost transaction, is not closing: a nested transaction's
// ROLLBACK TO that its ctx left unsent.
func (c *Session) SendWhileHeld(owner, root *Holder, sql string) {
	c.Wmu.Lock()
	if c.gate.holder == owner && !root.closing {
		c.sendDetachedUnlock(sql)
		return
	}
	c.Wmu.Unlock()
}

// RolledBackAfter reports whether a ROLLBACK pgline queued detached from
// any caller (see sendDetachedUnlock) was queued after h's last request.
func (c *Session) RolledBackAfter(h *Holder) bool {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	return c.Block.lastRollback > h.lastSeq
}

// endTxLocked releases the connection from a transaction that ended,
// queuing a ROLLBACK first when the server may be in it still (rollback).
// The caller holds wmu, and holds it again on return.
func (c *Session) endTxLocked(rollback bool) {
	if rollback && !c.closed.Load() {
		c.sendDetachedUnlock("ROLLBACK")
		c.Wmu.Lock()
	}
	c.gate.releaseLocked(nil) // everyone may use the connection again
}
