package session

// The session's transaction block, as pgline knows it: the one place
// that keeps it (txBlock), fed only by what the server said
// (each ReadyForQuery's status) and the traits of the request whose
// reply it ends (blockTraits).
//
// Stranded blocks. A cancel's signal (pg_cancel_backend from anyone, or
// pgline's own for an ended ctx) that lands after a BEGIN began a block
// and before the COMMIT or ROLLBACK ending it has ended it aborts the
// block: the session stays in it, and the server refuses every statement
// but ROLLBACK or COMMIT (25P02). Nobody holds the connection after the
// BEGIN and COMMIT that replace a shared Sync (see pipeline.go), the
// ROLLBACK queued when a transaction ends, a Tx's COMMIT or ROLLBACK,
// nor a caller's text that ends the block it may begin (BEGIN; ...;
// COMMIT, or a COMMIT given to Exec: the same happens when its own
// statement fails before the COMMIT, which the server then skips). When
// the ReadyForQuery after one of them says that the session is still in
// a block, the block is stranded: a ROLLBACK is queued at once, past the
// gate (Session.rollBackStranded); the requests queued before it are
// refused, nothing of them runs, and they fail with errRefused, which the
// retry policy sends again. A Tx whose BEGIN, COMMIT or ROLLBACK fails
// with the session in its block rolls it back before it lets the
// connection go (see Tx.end).
//
// Between finding a block stranded and reading its ROLLBACK's reply, the
// reader keeps a strandState. Its transitions (the table is strandNext;
// every other event leaves the state as it is):
//
//	from                 event                                      to
//	none, open           stranded (a ROLLBACK of its own, or one    open
//	                     queued after the request)
//	foreign, open-f.     stranded, a ROLLBACK of its own            open
//	foreign, open-f.     stranded, a ROLLBACK queued before         open-foreign
//	none                 a request nobody holds left the session    foreign
//	                     in a block (evStaysOwnerless, evEndsOwnerless)
//	open                 the block ended, and no caller's block     none
//	                     began (evEnds)
//	open                 the block ended, and a request nobody      foreign
//	                     holds left a block (evEndsOwnerless)
//	open-foreign         the block ended                            foreign
//	any                  the ROLLBACK's own reply (evRolledBack)    none
//
// Only in strandOpen is a 25P02 for a request queued before the
// ROLLBACK a refusal (refused). In the foreign states a caller's raw
// BEGIN began a block that the ROLLBACK will end: a run the server
// skipped in it fails instead of being sent again (skipsInBlock), and
// when the ROLLBACK's reply is read with the session in a block the
// connection is closed (errForeignRolledBack), since that block's
// statements may have been reported as done.

import (
	"errors"
	"sync/atomic"
)

// strandState is where the reader stands between finding a transaction
// block stranded (see the file comment) and reading the reply of the
// ROLLBACK that ends it. The state is set and read by the reader only.
type strandState uint8

const (
	// strandNone: no block found stranded is known to be open, and no
	// caller's block began after one ended.
	strandNone strandState = iota
	// StrandOpen: the block last found stranded has not ended by the
	// last ReadyForQuery before its ROLLBACK: a 25P02 for a request
	// queued before the ROLLBACK is its refusal.
	StrandOpen
	// strandForeign: the stranded block ended before its ROLLBACK (a
	// caller's raw ROLLBACK or COMMIT), and a request nobody holds left
	// the session in a block again: a caller's raw BEGIN (not a Tx's,
	// which begins again: see Session.RolledBackAfter), which the ROLLBACK
	// would end.
	strandForeign
	// strandOpenForeign: a block was found stranded in strandForeign,
	// and the ROLLBACK that ends it was queued before (a ROLLBACK of its
	// own would have made it strandOpen): its 25P02s are no refusals, and
	// the ROLLBACK's reply still closes the connection.
	strandOpenForeign
)

// String names the state, for tests' messages.
func (s strandState) String() string {
	switch s {
	case strandNone:
		return "none"
	case StrandOpen:
		return "open"
	case strandForeign:
		return "foreign"
	case strandOpenForeign:
		return "open-foreign"
	}
	return "invalid"
}

// open reports whether the stranded block is taken to be open.
func (s strandState) open() bool { return s == StrandOpen || s == strandOpenForeign }

// foreign reports whether a caller's block began after the stranded one
// ended, before its ROLLBACK.
func (s strandState) foreign() bool { return s == strandForeign || s == strandOpenForeign }

// strandEvent is what a ReadyForQuery says about the stranded block
// (see txBlock.event).
type strandEvent uint8

const (
	// evAfterEnd: the ReadyForQuery of a request queued after the
	// ROLLBACK of the last stranded block (or when none was found); it
	// says nothing about that block.
	evAfterEnd strandEvent = iota
	// evStays: before the ROLLBACK, and the block may still be open; the
	// session is idle or in a block somebody holds.
	evStays
	// evStaysOwnerless: as evStays, with the session in a block after a
	// request nobody holds.
	evStaysOwnerless
	// evEnds: before the ROLLBACK, the block has ended (the status says
	// idle, or a live block after an aborted one: an aborted block is
	// never live again, or a statement of transaction control of a
	// request nobody holds ran), and the session is idle or in a block
	// somebody holds.
	evEnds
	// evEndsOwnerless: as evEnds, with the session in a block after a
	// request nobody holds: a caller's raw BEGIN.
	evEndsOwnerless
	// evRolledBack: the reply of the ROLLBACK queued for the stranded
	// block.
	evRolledBack
	// evStrandedOwn: the ReadyForQuery leaves the session in a block
	// nobody holds (blockTraits.leavesStranded), and a ROLLBACK of its
	// own is queued.
	evStrandedOwn
	// evStrandedShared: as evStrandedOwn, and a ROLLBACK queued after
	// the request ends the block already.
	evStrandedShared
	numStrandEvents // the number of events, for tables indexed by them
)

// strandNext is the transition table: strandNext[from][event] is the
// state after event. Every state and event has an entry.
var strandNext = [...][numStrandEvents]strandState{
	strandNone: {
		evAfterEnd: strandNone, evStays: strandNone, evStaysOwnerless: strandForeign,
		evEnds: strandNone, evEndsOwnerless: strandForeign, evRolledBack: strandNone,
		evStrandedOwn: StrandOpen, evStrandedShared: StrandOpen,
	},
	StrandOpen: {
		evAfterEnd: StrandOpen, evStays: StrandOpen, evStaysOwnerless: StrandOpen,
		evEnds: strandNone, evEndsOwnerless: strandForeign, evRolledBack: strandNone,
		evStrandedOwn: StrandOpen, evStrandedShared: StrandOpen,
	},
	strandForeign: {
		evAfterEnd: strandForeign, evStays: strandForeign, evStaysOwnerless: strandForeign,
		evEnds: strandForeign, evEndsOwnerless: strandForeign, evRolledBack: strandNone,
		evStrandedOwn: StrandOpen, evStrandedShared: strandOpenForeign,
	},
	strandOpenForeign: {
		evAfterEnd: strandOpenForeign, evStays: strandOpenForeign, evStaysOwnerless: strandOpenForeign,
		evEnds: strandForeign, evEndsOwnerless: strandForeign, evRolledBack: strandNone,
		evStrandedOwn: StrandOpen, evStrandedShared: strandOpenForeign,
	},
}

// blockTraits are what the transaction-block state needs to know of the
// request whose reply a ReadyForQuery ends: all fixed when it was
// queued, but ran and chainedFailed, which its reply told.
type blockTraits struct {
	seq uint64
	// detached: a request no caller waits for (a ROLLBACK pgline queued).
	detached bool
	// endsBlock: after it nobody holds the session's block (a detached
	// ROLLBACK, a transaction's COMMIT or ROLLBACK, a text that ends the
	// block it may begin).
	endsBlock bool
	// ownerless: sent for no transaction or COPY holding the connection.
	ownerless bool
	// txControl and ran: a request nobody holds with a statement of
	// transaction control, and one of its statements completed.
	txControl, ran bool
	// chainedFailed: a run that gave its Sync away failed once its
	// statement completed (in the BEGIN or COMMIT after it).
	chainedFailed bool
}

func (r *Request) blockTraits() blockTraits {
	return blockTraits{
		seq:           r.seq,
		detached:      r.detached,
		endsBlock:     r.endsBlock,
		ownerless:     r.owner == nil,
		txControl:     r.txControl,
		ran:           r.ran,
		chainedFailed: r.chained.Load() && r.step < 0 && r.failedAt > 0,
	}
}

// leavesStranded reports whether a ReadyForQuery of status after a
// request of traits t leaves the session in a transaction block that
// nobody holds: after a chained run whose error came once its statement
// completed, or after a request that ends the block, after which nobody
// holds it.
func (t blockTraits) leavesStranded(status byte) bool {
	return status != 'I' && (t.endsBlock || t.chainedFailed)
}

// txBlock is the session's transaction-block state: the status each
// ReadyForQuery reports, the ROLLBACKs pgline queued detached from any
// caller, and the stranded block (see the file comment).
//
// Who touches what: status and rollbacks are atomics that any goroutine
// reads (Conn.TxStatus); the reader stores status (readyForQuery) and
// takes rollbacks back, the writer adds to rollbacks under wmu.
// lastRollback is under Session.Wmu. strand, end and endStatus are the
// reader's alone: it keeps them from each ReadyForQuery (readyForQuery)
// and from the ROLLBACK it queues for a stranded block (stranded).
type txBlock struct {
	status atomic.Uint32 // of the last ReadyForQuery: 'I', 'T' or 'E'
	// Rollbacks counts the ROLLBACKs pgline queued detached (a stranded
	// block's, a transaction's that ended unsent) whose ReadyForQuery has
	// not been read: the session's block ends with them, before anything
	// queued after them (see Conn.TxStatus).
	Rollbacks atomic.Int32
	// Strands counts the blocks found stranded.
	Strands atomic.Uint64

	// lastRollback is the seq of the last ROLLBACK queued detached: a
	// block found stranded by a request queued before it ends with it.
	// Under Session.Wmu.
	lastRollback uint64

	Strand strandState
	// End is the seq of the ROLLBACK that ends the last block found
	// stranded; endStatus the status that found it.
	End       uint64
	endStatus byte
}

// errForeignRolledBack closes the connection when the ROLLBACK queued
// for a stranded block is read in strandForeign or strandOpenForeign
// with the session in a block.
var errForeignRolledBack = errors.New("pgline: the ROLLBACK queued for a transaction block nobody held may have ended a block that a statement queued before it began once that one had ended (a raw ROLLBACK or COMMIT, then BEGIN); the connection is closed, since that block's statements may have been reported as done")

// event classifies a ReadyForQuery of status after a request of traits
// t, before any block it leaves stranded is handled.
func (b *txBlock) event(t blockTraits, status byte) strandEvent {
	switch {
	case t.detached && t.endsBlock && t.seq == b.End:
		return evRolledBack
	case t.seq >= b.End:
		return evAfterEnd
	}
	ends := status == 'I' || status == 'T' && b.endStatus == 'E' || t.txControl && t.ran
	ownerless := status != 'I' && t.ownerless
	switch {
	case ends && ownerless:
		return evEndsOwnerless
	case ends:
		return evEnds
	case ownerless:
		return evStaysOwnerless
	}
	return evStays
}

// readyForQuery applies a ReadyForQuery of status read after a request
// of traits t: the stranded block's transition, then status is stored.
// It returns errForeignRolledBack when the connection must close, and
// whether the session is left in a block nobody holds, which the caller
// must hand to stranded before anything else is read.
func (b *txBlock) readyForQuery(t blockTraits, status byte) (leavesStranded bool, err error) {
	ev := b.event(t, status)
	if ev == evRolledBack && b.Strand.foreign() && b.status.Load() != 'I' {
		err = errForeignRolledBack
	}
	b.Strand = strandNext[b.Strand][ev]
	if err != nil {
		return false, err
	}
	leavesStranded = t.leavesStranded(status)
	if leavesStranded {
		b.endStatus = status
	}
	return leavesStranded, nil
}

// stored records status as the session's, after readyForQuery and any
// stranded; a detached ROLLBACK's own reply takes its count back, so that
// txStatus never shows a block that such a ROLLBACK ends.
func (b *txBlock) stored(t blockTraits, status byte) {
	b.status.Store(uint32(status))
	if t.detached && t.endsBlock {
		b.Rollbacks.Add(-1)
	}
}

// stranded records a block found stranded, ended by the ROLLBACK of seq
// end: one queued for it (own), or one queued after the request that
// found it. The caller holds wmu.
func (b *txBlock) stranded(end uint64, own bool) {
	b.Strands.Add(1)
	b.End = end
	ev := evStrandedShared
	if own {
		ev = evStrandedOwn
	}
	b.Strand = strandNext[b.Strand][ev]
}

// strandedClosed records a block found stranded on a connection already
// closed: no ROLLBACK is queued, and none will be read.
func (b *txBlock) strandedClosed() {
	b.Strand = strandNext[b.Strand][evStrandedShared]
}

// rollbackQueued records a detached ROLLBACK of seq queued. The caller
// holds wmu.
func (b *txBlock) rollbackQueued(seq uint64) {
	b.Rollbacks.Add(1) // until its ReadyForQuery (see stored)
	b.lastRollback = seq
}

// refused reports whether a 25P02 for the request of seq is the refusal
// of the block found stranded, queued before its ROLLBACK: nothing of
// the request ran.
func (b *txBlock) refused(seq uint64) bool {
	return seq < b.End && b.Strand == StrandOpen
}

// skipsInBlock reports whether runs the server skipped after a
// ReadyForQuery of status were skipped in a caller's block that the
// stranded block's ROLLBACK will end (see request.skippedInBlock).
func (b *txBlock) skipsInBlock(status byte) bool {
	return status == 'E' && b.Strand.foreign()
}

// txStatus is Conn.TxStatus: the last status, but 'I' while a detached
// ROLLBACK is in flight.
func (b *txBlock) txStatus() byte {
	for {
		s := byte(b.status.Load())
		if s == 'I' || b.Rollbacks.Load() > 0 {
			return 'I'
		}
		if byte(b.status.Load()) == s { // not a ROLLBACK's status stored meanwhile
			return s
		}
	}
}
