package session

import (
	"errors"
	"fmt"
	"testing"
)

// TestTxBlockTransitions pins every transition of the stranded block's
// state machine (txblock.go): each state and event, written out by hand.
func TestTxBlockTransitions(t *testing.T) {
	const (
		N  = strandNone
		O  = StrandOpen
		F  = strandForeign
		OF = strandOpenForeign
	)
	events := []strandEvent{evAfterEnd, evStays, evStaysOwnerless, evEnds, evEndsOwnerless, evRolledBack, evStrandedOwn, evStrandedShared}
	want := map[strandState][]strandState{
		//   afterEnd stays ownerless ends endsOwnerless rolledBack strandedOwn strandedShared
		N:  {N, N, F, N, F, N, O, O},
		O:  {O, O, O, N, F, N, O, O},
		F:  {F, F, F, F, F, N, O, OF},
		OF: {OF, OF, OF, F, F, N, O, OF},
	}
	if len(events) != int(numStrandEvents) {
		t.Fatalf("%d events listed, %d defined", len(events), numStrandEvents)
	}
	for from, tos := range want {
		for i, ev := range events {
			if got := strandNext[from][ev]; got != tos[i] {
				t.Errorf("%v on event %d: %v, want %v", from, ev, got, tos[i])
			}
		}
	}
	if len(strandNext) != len(want) {
		t.Errorf("table has %d states, want %d", len(strandNext), len(want))
	}
}

// strandOracle is the stranded-block logic as it was written before it
// became a state machine (booleans set in reply.go): the machine must
// decide as it did for every state, request and status.
type strandOracle struct {
	open, foreign bool
	end           uint64
	endStatus     byte
	status        byte
}

// ready is the old replyGroupEnded up to storing the status; rollback
// is the outcome of queueing the ROLLBACK: 0 closed, 1 shared, 2 own.
func (o *strandOracle) ready(t blockTraits, status byte, rollback int, seqNext uint64) (fail, strands bool) {
	if t.detached && t.endsBlock && t.seq == o.end {
		foreign := o.foreign
		o.foreign = false
		if foreign && o.status != 'I' {
			return true, false
		}
	}
	if t.seq < o.end {
		if status == 'I' || status == 'T' && o.endStatus == 'E' || t.txControl && t.ran {
			o.open = false
		}
		if !o.open && status != 'I' && t.ownerless {
			o.foreign = true
		}
	}
	if t.leavesStranded(status) {
		strands = true
		o.endStatus = status
		o.open = true
		switch rollback {
		case 1:
			o.end = seqNext - 1 // a ROLLBACK after the request
		case 2:
			o.end = seqNext + 1
			o.foreign = false
		}
	}
	o.status = status
	return false, strands
}

// TestTxBlockMatchesOldLogic runs the state machine and the old logic
// side by side from every state, over every request trait, status and
// ROLLBACK outcome, in sequences of ReadyForQuery messages read in queue
// order, and compares every decision that uses the state: the connection
// closed, a block found stranded, refused for the requests not read yet,
// skipsInBlock.
func TestTxBlockMatchesOldLogic(t *testing.T) {
	const end, seqNext = 10, 20
	statuses := []byte{'I', 'T', 'E'}
	type step struct {
		t        blockTraits
		status   byte
		rollback int
	}
	var steps []step
	for bits := range 1 << 6 {
		for _, st := range statuses {
			for rb := range 3 {
				for seq := uint64(end - 2); seq <= end+2; seq++ {
					steps = append(steps, step{
						t: blockTraits{
							seq:           seq,
							detached:      bits&1 != 0,
							endsBlock:     bits&2 != 0,
							ownerless:     bits&4 != 0,
							txControl:     bits&8 != 0,
							ran:           bits&16 != 0,
							chainedFailed: bits&32 != 0,
						},
						status: st, rollback: rb,
					})
				}
			}
		}
	}
	checked := 0
	for s := range strandState(4) {
		for _, endStatus := range statuses {
			for _, status := range statuses {
				for i, a := range steps {
					for _, b := range []step{steps[(i*7+3)%len(steps)], steps[(i*13+5)%len(steps)], steps[(i*31+11)%len(steps)]} {
						if b.t.seq <= a.t.seq {
							continue // replies are read in queue order
						}
						var m txBlock
						m.Strand, m.End, m.endStatus = s, end, endStatus
						m.status.Store(uint32(status))
						o := strandOracle{open: s.open(), foreign: s.foreign(), end: end, endStatus: endStatus, status: status}
						for k, sp := range []step{a, b} {
							label := fmt.Sprintf("start %v/%c/%c, step %d %+v status %c rollback %d", s, endStatus, status, k, sp.t, sp.status, sp.rollback)
							oFail, oStrands := o.ready(sp.t, sp.status, sp.rollback, seqNext)
							strands, err := m.readyForQuery(sp.t, sp.status)
							if (err != nil) != oFail || oFail && !errors.Is(err, errForeignRolledBack) {
								t.Fatalf("%s: error %v, old logic fails %v", label, err, oFail)
							}
							if oFail {
								break
							}
							if strands != oStrands {
								t.Fatalf("%s: stranded %v, old %v", label, strands, oStrands)
							}
							if strands {
								switch sp.rollback {
								case 0:
									m.strandedClosed()
								case 1:
									m.stranded(seqNext-1, false)
								case 2:
									m.stranded(seqNext+1, true)
								}
							}
							m.stored(sp.t, sp.status)
							for seq := sp.t.seq + 1; seq <= seqNext+2; seq++ {
								if got, old := m.refused(seq), seq < o.end && o.open && !o.foreign; got != old {
									t.Fatalf("%s: refused(%d) %v, old %v (state %v)", label, seq, got, old, m.Strand)
								}
							}
							for _, st := range statuses {
								if got, old := m.skipsInBlock(st), st == 'E' && o.foreign; got != old {
									t.Fatalf("%s: skipsInBlock(%c) %v, old %v", label, st, got, old)
								}
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d steps compared", checked)
}

// TestTxBlockTxStatus: TxStatus shows 'I' while a detached ROLLBACK is in
// flight, and the last status once its reply is read.
func TestTxBlockTxStatus(t *testing.T) {
	var b txBlock
	b.status.Store('E')
	if s := b.txStatus(); s != 'E' {
		t.Fatalf("TxStatus %c, want E", s)
	}
	b.rollbackQueued(5)
	if s := b.txStatus(); s != 'I' {
		t.Fatalf("TxStatus %c with a ROLLBACK in flight, want I", s)
	}
	if b.lastRollback != 5 {
		t.Fatalf("lastRollback %d", b.lastRollback)
	}
	rb := blockTraits{seq: 5, detached: true, endsBlock: true, ownerless: true}
	if _, err := b.readyForQuery(rb, 'T'); err != nil {
		t.Fatal(err)
	}
	b.stored(rb, 'T')
	if s := b.txStatus(); s != 'T' {
		t.Fatalf("TxStatus %c after the ROLLBACK's reply, want T", s)
	}
}
