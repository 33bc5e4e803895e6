package pgline

import "context"

// A COPY holds the connection alone: no request but its own is queued
// until it ends (copyHold).

// copyHold is the connection held alone for one COPY: no request but the
// COPY's own is queued until release, not even from the transaction the
// COPY runs in (its other goroutines wait too).
type copyHold struct {
	c        *session
	h        holder  // the COPY's hold; its requests are sent for it
	prev     *holder // the holder before (its transaction's), restored by release
	prevFree chan struct{}
	// kept: the COPY's request was abandoned while it waited for its
	// turn; whoever drains its reply releases the hold (see waitTurn).
	kept bool
}

// spec is the reqSpec of a request of the COPY: when its ctx ends
// before its turn, the COPY was sent all the same: the server may switch
// to copy mode, in which any message behind it would be taken as its
// data. The hold then lasts until the goroutine that drains the reply has
// refused the COPY (refuseCopyIn), instead of ending with the caller
// (onDrained; see waitTurn).
func (h *copyHold) spec() *reqSpec {
	return &reqSpec{owner: &h.h, onDrained: h.releaseNow}
}

// waitTurn is Conn.waitTurn for a request of the COPY (submitted with
// spec): when ctx ends first, the hold is kept for the drain.
func (h *copyHold) waitTurn(ctx context.Context, req *request) error {
	if err := h.c.waitTurn(ctx, req); err != nil {
		h.kept = true
		return err
	}
	return nil
}

// holdForCopy waits until owner may use the connection (nil: no
// transaction holds it) and takes it for a COPY. Every COPY FROM STDIN
// runs under one, whether from CopyFrom or a statement given to Exec,
// Query or a simple query: in copy mode the server takes any message
// pipelined behind the COPY as its own, so the COPY must be alone.
func (c *session) holdForCopy(ctx context.Context, owner *holder) (*copyHold, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.gateLocked(ctx, owner); err != nil {
		return nil, notSent(err)
	}
	h := &copyHold{c: c}
	if owner != nil {
		h.h.block = owner.block // a given-up COPY dooms its transaction
	}
	h.prev, h.prevFree = c.gate.takeLocked(&h.h)
	return h, nil
}

// release gives the connection back to its previous holder (a
// transaction, or everyone) and wakes those waiting.
func (h *copyHold) release() {
	if !h.kept {
		h.releaseNow()
	}
}

// releaseNow ends the hold.
func (h *copyHold) releaseNow() {
	c := h.c
	c.wmu.Lock()
	c.gate.releaseLocked(h.prev, h.prevFree)
	if h.prev != nil && h.prev.endOnRelease {
		// The transaction ended while its COPY ran (Tx.end): end it on
		// the server too before anyone else may use the connection.
		c.endTxLocked(h.prev.rollbackOnRelease)
	}
	c.wmu.Unlock()
}
