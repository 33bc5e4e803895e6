package session

// Pipelining: how concurrent requests share one connection.
//
// A request is the messages of one statement (or one batch), ending with
// Sync, and the reply to them, ending with ReadyForQuery. Requests are
// appended to the write buffer under wmu and queued in the same order;
// the server answers in that order, so replies are matched FIFO:
//
//	goroutine A: [Bind Execute Sync]──┐            ┌──> A reads its reply, hands the reader to B
//	goroutine B: [Bind Execute Sync]──┼─ 1 write ──┤
//	goroutine C: [Bind Execute Sync]──┘            └──> ... B hands it to C
//
// The request at the head of the queue owns the reader: its own goroutine
// parses its reply (rows are scanned straight from the read buffer), then
// hands the reader to the next request. A request whose caller gave up
// (ctx) before its turn is drained by the goroutine that hands it the turn.
//
// Sync sharing: the server ends a transaction, reports the session's
// statistics and flushes its output at every Sync, which costs it more
// than a small statement does. A run queued while the one before it still
// waits in the write buffer takes that one's Sync, which gives way to
// BEGIN and COMMIT:
//
//	A: [Bind Execute] [BEGIN COMMIT]   <- A's own transaction, committed
//	B: [Bind Execute Sync]
//
// BEGIN turns the implicit transaction A's statement ran in into an
// explicit one, and COMMIT commits it, so each statement still commits on
// its own: it sees what the statements before it committed, and nothing
// of it depends on the statements after it. A's reply ends with COMMIT's
// CommandComplete. When a statement of the group fails, the server skips
// everything up to the group's Sync: the runs queued after it did not run
// at all, and are sent again (see request.skipped). pipeline_sync=each
// turns this off.
//
// Writes: the caller that finds nobody writing writes the buffer itself
// (with other requests in flight, after yielding the processor so that
// the goroutines about to queue theirs do so first): one syscall, no
// goroutine switch. Once half of what is queued waits for a yielding
// writer, the caller queueing takes the role over and writes at once
// (see writer.overdueLocked), so that the server always has work. It never
// waits for the socket: what the socket does not take at once is left
// to a short-lived flusher goroutine, so that a caller is never held in
// Write, where its ctx could not end its wait, nor blocked writing while
// its own reply waits to be read (the server stops reading when nobody
// reads its output: that would deadlock). The writer type (writer.go)
// does all of this, and every other write to the socket.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// Request states.
const (
	reqWaiting   int32 = iota // queued, not at the head
	reqHead                   // owns the reader
	reqAbandoned              // the caller left; whoever hands it the turn drains its reply
)

// Request is one entry of the connection's FIFO of replies.
type Request struct {
	seq   uint64        // its place in the order of requests queued (see writer.swapLocked)
	turn  chan struct{} // receives one token when the request becomes the head
	state atomic.Int32
	next  *Request // the request queued after this one; guarded by Session.Wmu
	// reqSpec is what the request is, fixed when it was submitted
	// (Session.submitLocked). onDrained alone changes after: dropped when
	// the caller gets its turn (waitTurn), set again by the reader that
	// abandons a COPY's reply (exchangeHeld).
	ReqSpec
	// chained is set when the run queued after this one took its Sync
	// (see the file comment): the reply ends with the CommandComplete of
	// the COMMIT that replaced it, unless an error comes first; then it
	// ends with the group's ReadyForQuery. Set under wmu while the bytes
	// are unwritten, read by the head once they are answered.
	chained atomic.Bool
	// step counts the completions read in a chained reply: the
	// statement's, BEGIN's, COMMIT's; -1 once an error was read, when
	// failedAt keeps the step the error came at.
	step, failedAt int8
	// preparesCommit: the messages that replaced its Sync prepare the
	// named BEGIN and COMMIT (see commitMsgsLocked); parsed counts their
	// ParseComplete. Set under wmu by the run that takes its Sync, which
	// may happen after the request became the head (its bytes still
	// unwritten), read by the head: atomic.
	preparesCommit atomic.Bool
	parsed         int8
	// namedCommit: the messages that replaced its Sync are the named
	// BEGIN and COMMIT, given when stmtCache.deallocs was commitDeallocs.
	// Set and read under wmu.
	namedCommit    bool
	commitDeallocs uint64
	// skipped is set, before its turn, on a run whose Sync group failed
	// before reaching it: the server skipped its messages, so it has no
	// reply and nothing of it ran.
	skipped bool
	// skippedInBlock: skipped in a transaction block a caller's raw
	// BEGIN began (see strandForeign, txblock.go), which pgline's ROLLBACK ends
	// next: sent again it would run outside that block, which its caller
	// may mean it to be in. It fails instead (errSkippedInBlock).
	skippedInBlock bool
	// Watch cancels the request's statement when its ctx ends, while it
	// is the head (see Session.Watch).
	Watch ctxWatch
	// cancelClock is Session.CancelClock when the request was queued: a
	// change by the time it fails with 57014 means a CancelRequest aimed
	// at an earlier request may have hit it.
	cancelClock uint64
	// Kept by the reply reader (Session.next) for whoever finishes the
	// reply: the ReadyForQuery messages and the completions
	// (CommandComplete, EmptyQueryResponse, ErrorResponse) read so far,
	// and the describes completed.
	rfqs, completions, described int
	// status is the transaction status of the last ReadyForQuery of
	// its reply: the connection's (Conn.TxStatus) may already be a
	// later request's once the reader is handed on.
	status byte
	// ran: a statement of its reply completed (see strandForeign,
	// txblock.go).
	ran bool
	// draining: an abandoned head's reply is being drained (see
	// drainAbandoned).
	draining          bool
	phase             int
	phaseAt, graceEnd time.Time
	giveUpAt          time.Time // a drain with requests behind closes the connection then
	probeFrom         int64     // the reader's InputBytes when the probe began
}

// ReqSpec is what the engine must know of a request: all of it is
// decided before the request is submitted, and Session.submitLocked copies
// it into the request as it is queued, under wmu. No caller writes a
// request's fields once it is queued; what changes afterwards is what
// its reply tells (kept by the reader).
type ReqSpec struct {
	// owner is who the request is sent for (a transaction, a COPY), if
	// anyone: its transaction is doomed (Tx.doom) when it is given up.
	owner *Holder
	// extended: runs of the extended protocol. oneStmt: the reply is one
	// statement's, ended by its first completion (see replyEnded).
	extended, oneStmt bool
	// endsBlock: a detached ROLLBACK, a transaction's COMMIT or
	// ROLLBACK, or a text outside one that ends the block it may begin
	// (sqllex.Info.EndsBlock), after which nobody holds the session's
	// transaction block (see blockTraits.leavesStranded).
	endsBlock bool
	// txControl: a request nobody holds with a statement of transaction
	// control (sqllex.Info.TransactionControl), which may end a block and
	// begin another (see strandForeign, txblock.go).
	txControl bool
	// detached: a request no caller waits for (sendDetachedUnlock),
	// never canceled.
	detached bool
	// listens: a WaitForNotification's turn: nothing is sent, and no
	// reply comes (see waitOnce).
	listens bool
	// syncs is the number of Sync messages, so of ReadyForQuery messages
	// the reply ends with: more than one for a batch of independent
	// statements or a describe of several statements; 0 given is 1, and
	// a request that listens has none (see submitLocked).
	syncs int
	// describes lists the statements the request describes, one per
	// Sync (a describe request); nil for a run.
	describes []*StmtDesc
	// onDrained, when set, runs once the reply of a request abandoned
	// before its turn has been drained (a COPY's hold: see copyHold).
	onDrained func()
}

// requests recycles requests: the owner gives its request up in handoff,
// and the goroutine that drains an abandoned one gives it up after that.
var requests = sync.Pool{New: func() any {
	r := &Request{turn: make(chan struct{}, 1)}
	r.Watch.cancelFn = r.Watch.fire
	return r
}}

// submitLocked makes the request that s describes and queues it: the
// one way a request enters the queue. The caller holds wmu and has
// appended the request's messages to the write buffer.
func (c *Session) submitLocked(s *ReqSpec) *Request {
	r := requests.Get().(*Request)
	r.state.Store(reqWaiting)
	r.ReqSpec = *s
	switch {
	case s.listens:
		r.syncs = 0
	case s.syncs == 0:
		r.syncs = 1
	}
	c.enqueueLocked(r)
	return r
}

// free returns r to the pool; nothing may use r afterwards.
func (r *Request) free() {
	select {
	case <-r.turn: // never left behind, but a stale token must not survive
	default:
	}
	r.next, r.cancelClock, r.ReqSpec = nil, 0, ReqSpec{}
	r.chained.Store(false)
	r.step, r.failedAt, r.skipped, r.skippedInBlock, r.parsed = 0, 0, false, false, 0
	r.namedCommit, r.commitDeallocs = false, 0
	r.preparesCommit.Store(false)
	r.rfqs, r.completions, r.described, r.draining, r.status, r.ran = 0, 0, 0, false, 0, false
	r.phase, r.phaseAt, r.graceEnd, r.giveUpAt, r.probeFrom = 0, time.Time{}, time.Time{}, time.Time{}, 0
	r.Watch.Interrupts, r.Watch.start = false, time.Time{}
	r.Watch.c, r.Watch.Ctx, r.Watch.stopAfter, r.Watch.timer = nil, nil, nil, nil
	r.Watch.fired.Store(false)
	requests.Put(r)
}

// sendDetachedUnlock queues sql as a simple query that must reach the
// server although its caller does not wait for it (the ROLLBACK ending a
// transaction whose own ended unsent), past the gate: the caller holds wmu
// and the connection. Its reply is drained like an abandoned request's.
// It releases wmu.
func (c *Session) sendDetachedUnlock(sql string) {
	buf, _ := wire.AppendQuery(c.appendClosesLocked(c.Writer.buf()), sql) // sql is ours: no NUL
	c.Writer.queue(buf)
	c.closesQueuedLocked()
	req := c.submitLocked(&ReqSpec{detached: true, endsBlock: sql == "ROLLBACK"})
	if req.endsBlock {
		c.Block.rollbackQueued(req.seq)
	}
	if !req.state.CompareAndSwap(reqWaiting, reqAbandoned) {
		// It is the head: nobody would hand it the turn to drain it.
		go func() {
			<-req.turn
			c.drainAbandoned(req)
		}()
	}
	c.Writer.flushUnlock(req, false)
}

// send appends the messages built by build to the write buffer, submits
// the request s describes for their reply and gets them written. Nothing
// is written when ctx is done, the connection is closed, or build fails.
// build runs under wmu, before the request is submitted: it may complete
// s (a batch's count of Syncs).
func (c *Session) send(ctx context.Context, s *ReqSpec, build func([]byte) ([]byte, error)) (*Request, error) {
	return c.sendRun(ctx, s, build, false)
}

// sendRun is send for a run that may share a Sync (see the file comment)
// when share is set: build must end its messages with Sync, and the
// caller must send the run again when it comes back skipped.
func (c *Session) sendRun(ctx context.Context, s *ReqSpec, build func([]byte) ([]byte, error), share bool) (*Request, error) {
	owner := s.owner
	if err := ctx.Err(); err != nil {
		return nil, NotSent(err)
	}
	c.Wmu.Lock()
	if err := c.gateLocked(ctx, owner); err != nil {
		c.Wmu.Unlock()
		return nil, NotSent(err)
	}
	// The run before takes its Sync only while the Sync still ends the
	// unwritten buffer, nothing (such as a Close, which a failure before
	// it would skip) comes between, and no transaction is open.
	prev := c.syncHolder
	share = share && c.shareSyncs && owner == nil
	queued := c.Writer.buf()
	chain := share && prev != nil && prev == c.Tail && len(queued) == c.syncHolderEnd &&
		len(c.Stmts.closing) == 0 && c.Block.status.Load() == 'I'
	c.syncHolder = nil
	start := len(queued)
	buf, err := build(c.appendClosesLocked(queued))
	if err != nil {
		c.Wmu.Unlock()
		return nil, NotSent(err)
	}
	c.closesQueuedLocked()
	if chain {
		buf = slices.Replace(buf, start-len(syncMsg), start, c.commitMsgsLocked(prev)...)
		prev.chained.Store(true)
		c.Shared++
	}
	c.Writer.queue(buf)
	req := c.submitLocked(s)
	if share {
		c.syncHolder, c.syncHolderEnd = req, len(buf)
	}
	c.Writer.flushUnlock(req, ctx.Done() == nil)
	return req, nil
}

// syncMsg is a Sync message, as the end of a run's messages.
var syncMsg = wire.AppendSync(nil)

// The messages that replace the Sync of a run that gives its Sync to the
// next: BEGIN makes the implicit transaction the run's statement ran in an
// explicit one, and COMMIT commits it. With statement_cache_mode=prepare
// they are named statements (the connection's prefix and "begin" or
// "commit": no name of the statement cache, so that an application's own
// "BEGIN" or "COMMIT" text, prepared or cached, is another statement),
// prepared by the first run that carries them and bound by the others
// once its reply confirms them; until then, and in the other modes
// (PgBouncer), the unnamed statement is parsed each time.
var commitUnnamed = commitMessages("", true)

// commitMessages returns the BEGIN and COMMIT messages: parsed and bound,
// or only bound, for statement names with prefix (none when empty).
func commitMessages(prefix string, parse bool) []byte {
	var b []byte
	for _, sql := range []string{"BEGIN", "COMMIT"} {
		name := ""
		if prefix != "" {
			// Shorter than any name stmtName makes: never one of the cache.
			name = prefix + strings.ToLower(sql)
		}
		if parse {
			b, _ = wire.AppendParse(b, name, sql, nil)
		}
		b, _ = wire.AppendBind(b, "", name, nil, nil, nil)
		b, _ = wire.AppendExecute(b, "", 0)
	}
	return b
}

// States of the named BEGIN and COMMIT statements (Session.CommitState).
const (
	commitNone     = iota // not prepared
	commitPending         // carried by a run whose reply has not confirmed them
	CommitReady           // prepared
	CommitDisabled        // unknown after a failure: the unnamed statement is used
)

// commitMsgsLocked returns the messages that replace prev's Sync. The
// caller holds wmu.
func (c *Session) commitMsgsLocked(prev *Request) []byte {
	switch {
	case c.Stmts.mode != CachePrepare:
		return commitUnnamed
	case c.CommitState == CommitReady:
		prev.namedCommit, prev.commitDeallocs = true, c.Stmts.deallocs
		return c.commitNamed
	case c.CommitState == commitNone:
		if c.commitNamed == nil {
			c.commitPrepare = commitMessages(c.Stmts.Prefix, true)
			c.commitNamed = commitMessages(c.Stmts.Prefix, false)
		}
		c.CommitState = commitPending
		prev.preparesCommit.Store(true)
		prev.namedCommit, prev.commitDeallocs = true, c.Stmts.deallocs
		return c.commitPrepare
	}
	return commitUnnamed
}

// completed notes a CommandComplete or EmptyQueryResponse in req's reply
// and reports whether it ends the reply: the COMMIT's, in a chained run.
func (c *Session) completed(req *Request) bool {
	if req == nil || req.step < 0 || !req.chained.Load() {
		return false
	}
	req.step++
	return req.step == 3
}

// inCommit reports whether req's statement has completed and what is read
// now belongs to the BEGIN and COMMIT after it.
func (req *Request) inCommit() bool { return req != nil && req.step > 0 }

// parsed notes a ParseComplete in req's reply. After the statement, in a
// run that prepares the named BEGIN and COMMIT, the second one confirms
// them: the runs after it may bind them.
func (c *Session) parsed(req *Request) {
	if req == nil || !req.preparesCommit.Load() || req.step <= 0 {
		return
	}
	if req.parsed++; req.parsed == 2 {
		c.setCommitState(CommitReady)
	}
}

// failed notes an ErrorResponse in req's reply: it now ends with the
// ReadyForQuery of its Sync group. The named BEGIN and COMMIT a run
// carried were not prepared when its statement failed (the server skipped
// their Parse), or when one Parse of the two failed; when a failure says
// that one is missing or exists already, whether they exist is not known,
// and the unnamed ones are used from then on. failed reports whether that
// failure shows a transaction pooler: nothing deallocated them since they
// were prepared (see session.poolerSign). That holds for every run given
// them, also one queued before another run's failure disabled them: the
// reading depends on what the run carried and on what was queued since,
// not on the state when its failure is read.
func (c *Session) failed(req *Request, e *srvErr) (pooler bool) {
	if req == nil || req.step < 0 {
		return false
	}
	if req.step > 0 && (e.f.Code == "26000" || e.f.Code == "42P05") {
		c.Wmu.Lock()
		pooler = req.namedCommit && req.commitDeallocs == c.Stmts.deallocs
		c.Wmu.Unlock()
		c.setCommitState(CommitDisabled)
		if pooler {
			c.ToDescribeMode("the named BEGIN or COMMIT: " + e.f.Message + " (SQLSTATE " + e.f.Code + ")")
		}
	}
	if req.preparesCommit.Load() {
		switch req.parsed {
		case 0:
			c.setCommitState(commitNone)
		case 1:
			c.setCommitState(CommitDisabled) // BEGIN's exists, COMMIT's not
		}
	}
	req.failedAt, req.step = req.step, -1
	return pooler
}

// noteDeallocateLocked is called as a statement that may deallocate
// pgline's prepared statements (sqlTraits.deallocates) is queued, under
// wmu (in the request's build): the runs queued after it stop using the
// named BEGIN and COMMIT, which it may remove, and a statement missing
// after it is no sign of a pooler (see poolerSign). Not before it is
// queued: a statement prepared meanwhile (while it waits at the gate
// behind a transaction) would count as prepared after it, yet be
// deallocated by it.
func (c *Session) noteDeallocateLocked() {
	c.Stmts.deallocs++
	c.CommitState = CommitDisabled
	// The statements cached so far may be gone after it: those queued
	// after it prepare theirs again (under new names, see
	// stmtCache.dropped), rather than fail once each (inside a
	// transaction, aborting it each time). They are closed, not merely
	// forgotten, with the next request: whether it deallocated them is
	// known only from its reply (it may fail, or, in a DO block, not run
	// the DEALLOCATE it mentions), and a statement left prepared on the
	// server under a name pgline no longer knows would stay there for the
	// session's life, one more with every such statement. A Close of a
	// name the server no longer has is harmless (CloseComplete, no
	// error), in a transaction block and in an aborted one too (the
	// server runs Close there; see TestStatementCacheCloseInAbortedBlock).
	c.Stmts.removeAll()
}

func (c *Session) setCommitState(s int) {
	c.Wmu.Lock()
	if c.CommitState != CommitDisabled || s == CommitDisabled {
		c.CommitState = s
	}
	c.Wmu.Unlock()
}

// groupEnded handles the ReadyForQuery that ends req's reply. When req
// had given its Sync away, an error ended its Sync group early: the runs
// after it in the group were skipped by the server and are marked so.
func (c *Session) groupEnded(req *Request) error {
	if req == nil || !req.chained.Load() {
		return nil
	}
	if req.step >= 0 {
		return c.fail(APIErrors.Protocol("ReadyForQuery before the end of a pipelined statement's COMMIT"))
	}
	inBlock := c.Block.skipsInBlock(req.status)
	c.Wmu.Lock()
	for r := req; r.chained.Load(); {
		r = r.next
		r.skipped, r.skippedInBlock = true, inBlock
		c.Resent++
		if r.preparesCommit.Load() && c.CommitState == commitPending {
			c.CommitState = commitNone // its Parse was skipped too
		}
	}
	c.Wmu.Unlock()
	return nil
}

// enqueueLocked queues req behind the last request, or makes it the head
// when the queue is empty. The caller holds wmu.
func (c *Session) enqueueLocked(req *Request) {
	req.cancelClock = c.CancelClock.Load()
	c.SeqNext++
	c.Queued++
	req.seq = c.SeqNext
	if req.owner != nil {
		req.owner.pending++
		req.owner.lastSeq = req.seq
	}
	c.syncHolder = nil // a Sync may only be taken by the run queued right after
	if c.listener != nil && !req.listens {
		// A WaitForNotification is reading while idle: wake it so that
		// it steps aside for this request.
		c.NetConn.SetReadDeadline(time.Unix(1, 0))
	}
	if c.Tail == nil {
		req.state.Store(reqHead)
		req.turn <- struct{}{}
	} else {
		c.Tail.next = req
	}
	c.Tail = req
}

// errFor is the error req gets when the connection failed with err:
// marked SafeToRetry when none of req's bytes reached the socket.
func (c *Session) errFor(req *Request, err error) error {
	if req != nil && c.Writer.neverSent(req.seq) && !SafeToRetry(err) {
		return NotSent(err)
	}
	return err
}

// exchange sends the messages build appends, waits for the reply's turn,
// reads it with read while ctx is watched, and hands the reader on. When
// ctx ends while read reads, the caller is answered at once and the rest
// of the reply is drained (see Session.abandon). txControl marks a request
// nobody holds with transaction control (see strandForeign, txblock.go).
// endsBlock marks a request
// after which nobody holds the session's transaction block: whoever
// reads its reply, its caller or a drain, rolls back a block it left
// open (see blockTraits.leavesStranded).
func (c *Session) exchange(ctx context.Context, s *ReqSpec, build func([]byte) ([]byte, error), read func(*Request) (string, error)) (string, error) {
	req, err := c.send(ctx, s, build)
	if err != nil {
		return "", err
	}
	return c.readReply(ctx, req, read)
}

// readReply waits for req's turn, reads its reply with read while ctx is
// watched, and hands the reader on. When ctx ends while read reads, the
// caller is answered at once with ctx's error and the rest of the reply
// is drained (see Session.abandon).
func (c *Session) readReply(ctx context.Context, req *Request, read func(*Request) (string, error)) (string, error) {
	if err := c.waitTurn(ctx, req); err != nil {
		return "", err
	}
	w := c.Watch(ctx, req)
	tag, err := read(req)
	if err == ErrInterrupted {
		return "", c.abandon(req)
	}
	err = w.end(err)
	c.handoff(req)
	return tag, err
}

// readDescribeReply is a read function for readReply: the reply of a
// describe request (see Session.readDescribes).
func (c *Session) readDescribeReply(req *Request) (string, error) {
	return "", c.readDescribes(req)
}

// ExchangeHeld is exchange for a statement under a COPY hold (see
// copyHold.waitTurn): COPY TO STDOUT, or a COPY FROM STDIN given to Exec
// (refused). When ctx ends, the caller is answered at once and the hold
// kept until the reply is drained.
func (c *Session) ExchangeHeld(ctx context.Context, h *CopyHold, oneStmt bool, build func([]byte) ([]byte, error), read func(*Request) (string, error)) (string, error) {
	s := h.spec()
	s.oneStmt = oneStmt
	req, err := c.send(ctx, s, build)
	if err != nil {
		return "", err
	}
	if err := h.waitTurn(ctx, req); err != nil {
		return "", err
	}
	w := c.Watch(ctx, req)
	abandon := func() error {
		// The server may be in copy mode: the hold lasts until the
		// drain has read the reply (and refused a COPY FROM STDIN).
		req.onDrained, h.kept = h.releaseNow, true
		return c.abandon(req)
	}
	defer func() {
		if p := recover(); p != nil {
			// A CopyTo writer panicked: the rest of the reply is
			// drained as if its ctx had ended (a CancelRequest stops
			// the COPY), and the panic goes on.
			abandon()
			panic(p)
		}
	}()
	tag, err := read(req)
	if err == ErrInterrupted {
		return "", abandon()
	}
	err = w.end(err)
	c.handoff(req)
	return tag, err
}

// waitTurn waits until req is the head. When ctx ends first, req is
// abandoned (its reply will be drained by whoever hands it the turn) and
// ctx's error returned.
func (c *Session) waitTurn(ctx context.Context, req *Request) error {
	if err := c.awaitTurn(ctx, req); err != nil {
		return err
	}
	req.onDrained = nil // its caller reads the reply: nothing is left to a drain
	return nil
}

// awaitTurn is waitTurn without dropping onDrained.
func (c *Session) awaitTurn(ctx context.Context, req *Request) error {
	done := ctx.Done()
	if done == nil { // a ctx that never ends: no select
		<-req.turn
		return nil
	}
	select {
	case <-req.turn:
		return nil
	default:
	}
	select {
	case <-req.turn:
		return nil
	case <-done:
		owner := req.owner // req is not ours once abandoned
		if req.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			owner.doom()
			return ctx.Err()
		}
		<-req.turn // it became the head meanwhile: it reads its own reply
		return nil
	}
}

// handoff ends req's turn: the next request becomes the head or, when
// its caller left, is given to a goroutine that drains its reply (see
// drainAbandoned), so that no caller waits for another's reply. req is
// recycled: the caller must not use it afterwards.
func (c *Session) handoff(req *Request) {
	if c.unarmed == &req.Watch {
		// Its watch was never armed: no read may arm it once req is
		// recycled (its ctx is gone). Cleared while req still holds the
		// reader: with nothing queued behind, the next request queued
		// becomes the head as soon as wmu is released.
		c.unarmed = nil
	}
	c.Wmu.Lock()
	next := req.next
	c.Queued--
	if next == nil {
		c.Tail = nil
	}
	if o := req.owner; o != nil {
		if o.pending--; o.pending == 0 && o.settled != nil {
			close(o.settled) // a Commit waits (see Session.Settle)
			o.settled = nil
		}
	}
	c.Wmu.Unlock()
	req.free()
	if next == nil {
		return
	}
	if next.state.CompareAndSwap(reqWaiting, reqHead) {
		next.turn <- struct{}{}
		return
	}
	go c.drainAbandoned(next)
}

// drain reads and discards the reply of an abandoned request, still
// recording what a describe learned (others may wait for it), then runs
// its onDrained.
func (c *Session) drain(req *Request) {
	c.drainReply(req)
	if f := req.onDrained; f != nil {
		req.onDrained = nil
		f()
	}
}

// drainReply reads the rest of req's reply. Its error is errInterrupted
// (req's ctx ended, for a caller that drains its own reply), or the
// connection's failure, which the requests behind share.
func (c *Session) drainReply(req *Request) error {
	if req.describes != nil {
		return c.readDescribes(req)
	}
	if req.skipped {
		return nil // the server sent nothing for it
	}
	for req.rfqs < req.syncs {
		typ, body, _, err := c.next(req, readDiscarding) // rows are thrown away: any size
		if err != nil {
			return err
		}
		switch typ {
		case wire.MsgCommandComplete, wire.MsgEmptyQueryResponse:
			if c.completed(req) {
				return nil
			}
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body) // a FATAL one still tells that the session ends
			if err != nil {
				return c.fail(err)
			}
			c.failed(req, &pgErr)
		case wire.MsgParseComplete:
			c.parsed(req)
		case wire.MsgCopyInResponse:
			c.refuseCopyIn(req.extended)
		case wire.MsgReadyForQuery, wire.MsgDataRow, wire.MsgRowDescription, wire.MsgBindComplete,
			wire.MsgCloseComplete, wire.MsgNoData, wire.MsgPortalSuspended, wire.MsgParameterDescription,
			wire.MsgCopyOutResponse, wire.MsgCopyData, wire.MsgCopyDone:
		default:
			return c.fail(APIErrors.Protocol(fmt.Sprintf("unexpected message %q in a reply", typ)))
		}
	}
	return nil
}

// notSentError marks an error that happened before anything of the
// request reached the server. It is SafeToRetry unless the same call
// would fail again: the call itself was refused (final, see unsendable),
// or the error is, or follows, a ProtocolError (the server broke the
// protocol; a describe it answered so ran nothing, but sent again, on
// this server's other connections too, it would break them as well).
type notSentError struct {
	err   error
	final bool
}

// Error, Unwrap and SafeToRetry make a notSentError the error it wraps,
// marked safe to send again (see SafeToRetry).
func (e *notSentError) Error() string     { return e.err.Error() }
func (e *notSentError) Unwrap() error     { return e.err }
func (e *notSentError) SafeToRetry() bool { return !e.final && !APIErrors.IsProtocol(e.err) }

// NotSent marks err as the error of a request nothing of which reached
// the server. An error marked already stays as it is.
func NotSent(err error) error {
	if err == nil || IsNotSent(err) {
		return err
	}
	return &notSentError{err: err}
}

// unsendable marks err as the refusal of a call before anything of it was
// sent, for a reason of the call itself (bad input the server could not
// take): not SafeToRetry, since the call would fail again, and, like
// notSent's, leaving the connection and its transaction as they were.
func unsendable(err error) error {
	return &notSentError{err: err, final: true}
}

// SafeToRetry is pgline.SafeToRetry: whether err came from a call that
// sent nothing to the server, and that may succeed if run again.
func SafeToRetry(err error) bool {
	var s interface{ SafeToRetry() bool }
	return errors.As(err, &s) && s.SafeToRetry()
}

// sendStreamed is send for messages holding ReaderArg values: this
// goroutine becomes the connection's writer (after the flusher in progress,
// if any), writes what was queued before, then its own messages with each
// reader's bytes copied to the socket in place (see writer.streamUnlock).
// Requests queued meanwhile are written after it.
func (c *Session) sendStreamed(ctx context.Context, s *ReqSpec, build func([]byte, *[]hole) ([]byte, error)) (*Request, error) {
	owner := s.owner
	if err := ctx.Err(); err != nil {
		return nil, NotSent(err)
	}
	c.Wmu.Lock()
	if err := c.Writer.awaitLocked(func() error { return c.gateLocked(ctx, owner) }); err != nil {
		c.Wmu.Unlock()
		return nil, NotSent(err)
	}
	if c.closed.Load() {
		c.Writer.dropLocked()
		c.Wmu.Unlock()
		return nil, NotSent(c.closedErr())
	}
	var holes []hole
	buf, err := build(c.appendClosesLocked(c.Writer.buf()), &holes)
	if err != nil {
		c.Writer.dropLocked()
		c.Wmu.Unlock()
		return nil, NotSent(err)
	}
	c.Writer.queue(buf)
	c.closesQueuedLocked()
	req := c.submitLocked(s)
	c.Writer.streamUnlock(ctx, holes)
	// On error the connection is closed: req fails when it reads.
	return req, nil
}

// IsNotSent reports whether err says nothing of its request reached the
// connection.
func IsNotSent(err error) bool {
	var ns *notSentError
	return errors.As(err, &ns)
}
