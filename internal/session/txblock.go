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

// StrandState is where the reader stands between finding a transaction
// block stranded (see the file comment) and reading the reply of the
// ROLLBACK that ends it. The state is set and read by the reader only.
type StrandState uint8

const (
	// StrandNone: no block found stranded is known to be open, and no
	// caller's block began after one ended.
	StrandNone StrandState = iota
	// StrandOpen: the block last found stranded has not ended by the
	// last ReadyForQuery before its ROLLBACK: a 25P02 for a request
	// queued before the ROLLBACK is its refusal.
	StrandOpen
	// StrandForeign: the stranded block ended before its ROLLBACK (a
	// caller's raw ROLLBACK or COMMIT), and a request nobody holds left
	// the session in a block again: a caller's raw BEGIN (not a Tx's,
	// which begins again: see Session.RolledBackAfter), which the ROLLBACK
	// would end.
	StrandForeign
	// StrandOpenForeign: a block was found stranded in strandForeign,
	// and the ROLLBACK that ends it was queued before (a ROLLBACK of its
	// own would have made it strandOpen): its 25P02s are no refusals, and
	// the ROLLBACK's reply still closes the connection.
	StrandOpenForeign
)

// String names the state, for tests' messages.
func (s StrandState) String() string {
	switch s {
	case StrandNone:
		return "none"
	case StrandOpen:
		return "open"
	case StrandForeign:
		return "foreign"
	case StrandOpenForeign:
		return "open-foreign"
	}
	return "invalid"
}

// Open reports whether the stranded block is taken to be open.
func (s StrandState) Open() bool { return s == StrandOpen || s == StrandOpenForeign }

// Foreign reports whether a caller's block began after the stranded one
// ended, before its ROLLBACK.
func (s StrandState) Foreign() bool { return s == StrandForeign || s == StrandOpenForeign }

// StrandEvent is what a ReadyForQuery says about the stranded block
// (see txBlock.event).
type StrandEvent uint8

const (
	// EvAfterEnd: the ReadyForQuery of a request queued after the
	// ROLLBACK of the last stranded block (or when none was found); it
	// says nothing about that block.
	EvAfterEnd StrandEvent = iota
	// EvStays: before the ROLLBACK, and the block may still be open; the
	// session is idle or in a block somebody holds.
	EvStays
	// EvStaysOwnerless: as evStays, with the session in a block after a
	// request nobody holds.
	EvStaysOwnerless
	// EvEnds: before the ROLLBACK, the block has ended (the status says
	// idle, or a live block after an aborted one: an aborted block is
	// never live again, or a statement of transaction control of a
	// request nobody holds ran), and the session is idle or in a block
	// somebody holds.
	EvEnds
	// EvEndsOwnerless: as evEnds, with the session in a block after a
	// request nobody holds: a caller's raw BEGIN.
	EvEndsOwnerless
	// EvRolledBack: the reply of the ROLLBACK queued for the stranded
	// block.
	EvRolledBack
	// EvStrandedOwn: the ReadyForQuery leaves the session in a block
	// nobody holds (blockTraits.leavesStranded), and a ROLLBACK of its
	// own is queued.
	EvStrandedOwn
	// EvStrandedShared: as evStrandedOwn, and a ROLLBACK queued after
	// the request ends the block already.
	EvStrandedShared
	NumStrandEvents // the number of events, for tables indexed by them
)

// StrandNext is the transition table: strandNext[from][event] is the
// state after event. Every state and event has an entry.
var StrandNext = [...][NumStrandEvents]StrandState{
	StrandNone: {
		EvAfterEnd: StrandNone, EvStays: StrandNone, EvStaysOwnerless: StrandForeign,
		EvEnds: StrandNone, EvEndsOwnerless: StrandForeign, EvRolledBack: StrandNone,
		EvStrandedOwn: StrandOpen, EvStrandedShared: StrandOpen,
	},
	StrandOpen: {
		EvAfterEnd: StrandOpen, EvStays: StrandOpen, EvStaysOwnerless: StrandOpen,
		EvEnds: StrandNone, EvEndsOwnerless: StrandForeign, EvRolledBack: StrandNone,
		EvStrandedOwn: StrandOpen, EvStrandedShared: StrandOpen,
	},
	StrandForeign: {
		EvAfterEnd: StrandForeign, EvStays: StrandForeign, EvStaysOwnerless: StrandForeign,
		EvEnds: StrandForeign, EvEndsOwnerless: StrandForeign, EvRolledBack: StrandNone,
		EvStrandedOwn: StrandOpen, EvStrandedShared: StrandOpenForeign,
	},
	StrandOpenForeign: {
		EvAfterEnd: StrandOpenForeign, EvStays: StrandOpenForeign, EvStaysOwnerless: StrandOpenForeign,
		EvEnds: StrandForeign, EvEndsOwnerless: StrandForeign, EvRolledBack: StrandNone,
		EvStrandedOwn: StrandOpen, EvStrandedShared: StrandOpenForeign,
	},
}

// BlockTraits are what the transaction-block state needs to know of the
// request whose reply a ReadyForQuery ends: all fixed when it was
// queued, but ran and chainedFailed, which its reply told.
type BlockTraits struct {
	Seq uint64
	// Detached: a request no caller waits for (a ROLLBACK pgline queued).
	Detached bool
	// EndsBlock: after it nobody holds the session's block (a detached
	// ROLLBACK, a transaction's COMMIT or ROLLBACK, a text that ends the
	// block it may begin).
	EndsBlock bool
	// Ownerless: sent for no transaction or COPY holding the connection.
	Ownerless bool
	// TxControl and ran: a request nobody holds with a statement of
	// transaction control, and one of its statements completed.
	TxControl, Ran bool
	// ChainedFailed: a run that gave its Sync away failed once its
	// statement completed (in the BEGIN or COMMIT after it).
	ChainedFailed bool
}

func (r *Request) blockTraits() BlockTraits {
	return BlockTraits{
		Seq:           r.seq,
		Detached:      r.detached,
		EndsBlock:     r.endsBlock,
		Ownerless:     r.owner == nil,
		TxControl:     r.txControl,
		Ran:           r.ran,
		ChainedFailed: r.Chained.Load() && r.Step < 0 && r.failedAt > 0,
	}
}

// LeavesStranded reports whether a ReadyForQuery of status after a
// request of traits t leaves the session in a transaction block that
// nobody holds: after a chained run whose error came once its statement
// completed, or after a request that ends the block, after which nobody
// holds it.
func (t BlockTraits) LeavesStranded(status byte) bool {
	return status != 'I' && (t.EndsBlock || t.ChainedFailed)
}

// TxBlock is the session's transaction-block state: the status each
// ReadyForQuery reports, the ROLLBACKs pgline queued detached from any
// caller, and the stranded block (see the file comment).
//
// Who touches what: status and rollbacks are atomics that any goroutine
// reads (Conn.TxStatus); the reader stores status (readyForQuery) and
// takes rollbacks back, the writer adds to rollbacks under wmu.
// lastRollback is under Session.Wmu. strand, end and endStatus are the
// reader's alone: it keeps them from each ReadyForQuery (readyForQuery)
// and from the ROLLBACK it queues for a stranded block (stranded).
type TxBlock struct {
	Status atomic.Uint32 // of the last ReadyForQuery: 'I', 'T' or 'E'
	// Rollbacks counts the ROLLBACKs pgline queued detached (a stranded
	// block's, a transaction's that ended unsent) whose ReadyForQuery has
	// not been read: the session's block ends with them, before anything
	// queued after them (see Conn.TxStatus).
	Rollbacks atomic.Int32
	// Strands counts the blocks found stranded.
	Strands atomic.Uint64

	// LastRollback is the seq of the last ROLLBACK queued detached: a
	// block found stranded by a request queued before it ends with it.
	// Under Session.Wmu.
	LastRollback uint64

	Strand StrandState
	// End is the seq of the ROLLBACK that ends the last block found
	// stranded; endStatus the status that found it.
	End       uint64
	EndStatus byte
}

// ErrForeignRolledBack closes the connection when the ROLLBACK queued
// for a stranded block is read in strandForeign or strandOpenForeign
// with the session in a block.
var ErrForeignRolledBack = errors.New("pgline: the ROLLBACK queued for a transaction block nobody held may have ended a block that a statement queued before it began once that one had ended (a raw ROLLBACK or COMMIT, then BEGIN); the connection is closed, since that block's statements may have been reported as done")

// event classifies a ReadyForQuery of status after a request of traits
// t, before any block it leaves stranded is handled.
func (b *TxBlock) event(t BlockTraits, status byte) StrandEvent {
	switch {
	case t.Detached && t.EndsBlock && t.Seq == b.End:
		return EvRolledBack
	case t.Seq >= b.End:
		return EvAfterEnd
	}
	ends := status == 'I' || status == 'T' && b.EndStatus == 'E' || t.TxControl && t.Ran
	ownerless := status != 'I' && t.Ownerless
	switch {
	case ends && ownerless:
		return EvEndsOwnerless
	case ends:
		return EvEnds
	case ownerless:
		return EvStaysOwnerless
	}
	return EvStays
}

// ReadyForQuery applies a ReadyForQuery of status read after a request
// of traits t: the stranded block's transition, then status is stored.
// It returns errForeignRolledBack when the connection must close, and
// whether the session is left in a block nobody holds, which the caller
// must hand to stranded before anything else is read.
func (b *TxBlock) ReadyForQuery(t BlockTraits, status byte) (leavesStranded bool, err error) {
	ev := b.event(t, status)
	if ev == EvRolledBack && b.Strand.Foreign() && b.Status.Load() != 'I' {
		err = ErrForeignRolledBack
	}
	b.Strand = StrandNext[b.Strand][ev]
	if err != nil {
		return false, err
	}
	leavesStranded = t.LeavesStranded(status)
	if leavesStranded {
		b.EndStatus = status
	}
	return leavesStranded, nil
}

// Stored records status as the session's, after readyForQuery and any
// stranded; a detached ROLLBACK's own reply takes its count back, so that
// TxStatus never shows a block that such a ROLLBACK ends.
func (b *TxBlock) Stored(t BlockTraits, status byte) {
	b.Status.Store(uint32(status))
	if t.Detached && t.EndsBlock {
		b.Rollbacks.Add(-1)
	}
}

// Stranded records a block found stranded, ended by the ROLLBACK of seq
// end: one queued for it (own), or one queued after the request that
// found it. The caller holds wmu.
func (b *TxBlock) Stranded(end uint64, own bool) {
	b.Strands.Add(1)
	b.End = end
	ev := EvStrandedShared
	if own {
		ev = EvStrandedOwn
	}
	b.Strand = StrandNext[b.Strand][ev]
}

// StrandedClosed records a block found stranded on a connection already
// closed: no ROLLBACK is queued, and none will be read.
func (b *TxBlock) StrandedClosed() {
	b.Strand = StrandNext[b.Strand][EvStrandedShared]
}

// RollbackQueued records a detached ROLLBACK of seq queued. The caller
// holds wmu.
func (b *TxBlock) RollbackQueued(seq uint64) {
	b.Rollbacks.Add(1) // until its ReadyForQuery (see stored)
	b.LastRollback = seq
}

// Refused reports whether a 25P02 for the request of seq is the refusal
// of the block found stranded, queued before its ROLLBACK: nothing of
// the request ran.
func (b *TxBlock) Refused(seq uint64) bool {
	return seq < b.End && b.Strand == StrandOpen
}

// SkipsInBlock reports whether runs the server skipped after a
// ReadyForQuery of status were skipped in a caller's block that the
// stranded block's ROLLBACK will end (see request.skippedInBlock).
func (b *TxBlock) SkipsInBlock(status byte) bool {
	return status == 'E' && b.Strand.Foreign()
}

// TxStatus is Conn.TxStatus: the last status, but 'I' while a detached
// ROLLBACK is in flight.
func (b *TxBlock) TxStatus() byte {
	for {
		s := byte(b.Status.Load())
		if s == 'I' || b.Rollbacks.Load() > 0 {
			return 'I'
		}
		if byte(b.Status.Load()) == s { // not a ROLLBACK's status stored meanwhile
			return s
		}
	}
}
