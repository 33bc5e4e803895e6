package session

// Describing statements (Parse, Describe, Sync) and the rules that keep
// the statement cache true as requests are queued: a description is
// shared by everyone who uses the statement (prepare, readDescribes), and
// what a queued text does to the session (noteQueuedLocked: search_path,
// DEALLOCATE, SQL PREPARE) is noted before it can run. See
// stmtcache.go for the cache itself.

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
)

// Prepare returns the description of sql, from the cache or by asking the
// server (Parse, Describe, Sync). A statement counts as prepared when its
// Parse is queued: a concurrent use of the same SQL waits for that
// description instead of sending a second Parse, and gets the original
// error when the Parse fails (the entry is then dropped, so the next use
// prepares again). The description returned is pinned (the cache does not
// evict it, see stmtDesc.pins): the caller unpins it once its Bind is
// queued, so that no Close of the statement goes out before the Bind.
func (c *Session) Prepare(ctx context.Context, owner *Holder, sql string) (*StmtDesc, error) {
	c.Wmu.Lock()
	c.followPoolerLocked()
	if sd := c.cachedLocked(owner, sql); sd != nil {
		sd.pins++
		c.Wmu.Unlock()
		ready, err := waitReady(ctx, sd)
		if err == nil {
			return sd, nil
		}
		c.Unpin(sd)
		// Not ready: sd.err may yet be set by whoever reads the reply.
		if !ready || !describeAgain(sd, owner) || redescribe(err) {
			return nil, err // redescribe: the caller's run describes again
		}
		// Another's describe failed, maybe for its transaction's state:
		// the caller describes the statement itself (the failed
		// description has left the cache).
		c.Wmu.Lock()
		c.followPoolerLocked()
	}
	sds, err := c.prepareAllUnlock(ctx, owner, []string{sql}, true)
	if err != nil {
		return nil, err
	}
	if err := sds[0].Err; err != nil {
		c.Unpin(sds[0])
		return nil, err
	}
	return sds[0], nil
}

// Unpin undoes a pin of sd (see prepare).
func (c *Session) Unpin(sd *StmtDesc) {
	c.Wmu.Lock()
	sd.pins--
	c.Wmu.Unlock()
}

// prepareAllUnlock returns the descriptions of sqls, describing those not cached
// in one round trip (one Sync each, so that one failing Parse does not
// affect the others). A statement the server could not describe has its
// error in its err; the error returned is ctx's or the connection's. The
// caller holds wmu; it is released.
func (c *Session) prepareAllUnlock(ctx context.Context, owner *Holder, sqls []string, pin bool) ([]*StmtDesc, error) {
	sds := make([]*StmtDesc, len(sqls))
	var req *Request
	err := c.gateLocked(ctx, owner)
	if err == nil {
		buf := c.appendClosesLocked(c.Writer.buf())
		var describes []*StmtDesc
		uncached := owner.pathChanged()
		for i, sql := range sqls {
			if sds[i] = c.cachedLocked(owner, sql); sds[i] != nil {
				if pin {
					sds[i].pins++
				}
				continue
			}
			if n := sqllex.HighestParam(sql, MaxParams); n > 0 {
				err = TooManyParams(n, "parameters")
				break
			}
			sd := c.Stmts.newDesc(sql, uncached)
			sd.owner = owner
			if buf, err = wire.AppendParse(buf, sd.Name, sql, nil); err == nil {
				buf, err = wire.AppendDescribe(buf, 'S', sd.Name)
			}
			if err != nil {
				break
			}
			buf = wire.AppendSync(buf)
			if pin {
				sd.pins++
			}
			if !uncached {
				c.Stmts.put(sd) // now, so that the same SQL later in sqls finds it
			}
			sds[i] = sd
			describes = append(describes, sd)
		}
		if err != nil {
			for _, sd := range describes {
				c.Stmts.remove(sd)
			}
			if pin {
				unpinLocked(sds)
			}
		} else if len(describes) > 0 {
			c.Writer.queue(buf)
			c.closesQueuedLocked()
			req = c.submitLocked(&ReqSpec{owner: owner, describes: describes, syncs: len(describes)})
		}
	}
	if err != nil {
		c.Wmu.Unlock()
		return nil, NotSent(err)
	}
	fail := func(err error) ([]*StmtDesc, error) {
		if pin {
			c.Wmu.Lock()
			unpinLocked(sds)
			c.Wmu.Unlock()
		}
		return nil, err
	}
	if req != nil {
		c.Writer.flushUnlock(req, ctx.Done() == nil)
		if _, err := c.readReply(ctx, req, c.readDescribeReply); err != nil {
			return fail(err) // whoever drains the reply completes the statements
		}
	} else {
		c.Wmu.Unlock()
	}
	for _, sd := range sds {
		if ready, err := waitReady(ctx, sd); !ready {
			return fail(err)
		}
	}
	return sds, nil
}

// cachedLocked returns the cached description of sql for owner, nil when
// there is none or owner runs in a transaction that may have changed
// search_path (holder.pathChanged), whose statements are described for
// each run. The caller holds wmu.
func (c *Session) cachedLocked(owner *Holder, sql string) *StmtDesc {
	if owner.pathChanged() {
		return nil
	}
	return c.Stmts.get(sql)
}

// unpinLocked undoes prepareAllUnlock's pins (the caller holds wmu).
func unpinLocked(sds []*StmtDesc) {
	for _, sd := range sds {
		if sd != nil {
			sd.pins--
		}
	}
}

// waitReady waits until sd is described (ready) and returns why it could
// not be, if it could not; or ctx's error when ctx ends first, with sd
// not ready: its err is not to be read then (whoever reads its reply
// may be setting it).
func waitReady(ctx context.Context, sd *StmtDesc) (ready bool, err error) {
	select {
	case <-sd.ready:
	default:
		select {
		case <-sd.ready:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return true, sd.Err
}

// readDescribes reads the reply of a describe request: for each statement,
// ParseComplete, ParameterDescription, RowDescription or NoData, then
// ReadyForQuery, or an ErrorResponse. Each statement is completed (ready
// closed) whatever happens; a failed one leaves the cache. It goes on
// from the statement where an interrupted read left off (see
// request.described), and returns errInterrupted when interrupted.
func (c *Session) readDescribes(req *Request) error {
	var failure error // an I/O or protocol error: every statement left fails
	for ; req.described < len(req.describes); req.described++ {
		sd := req.describes[req.described]
		if failure == nil {
			if failure = c.readDescribe(req, sd); failure == ErrInterrupted {
				return failure
			}
		}
		if failure != nil && sd.Err == nil {
			// A describe runs nothing, and the statement waiting for it
			// was not sent: it may be sent again elsewhere.
			sd.Err = NotSent(failure)
		}
		if sd.Err != nil {
			c.Wmu.Lock()
			c.Stmts.remove(sd)
			c.Wmu.Unlock()
		}
		close(sd.ready)
	}
	return nil
}

// readDescribe reads one statement's describe reply up to ReadyForQuery.
// It returns an I/O or protocol error, or errInterrupted; the server's
// error goes to sd.err.
func (c *Session) readDescribe(req *Request, sd *StmtDesc) error {
	for {
		typ, body, _, err := c.next(req, readWhole)
		if err != nil {
			return err
		}
		switch typ {
		case wire.MsgParseComplete, wire.MsgCloseComplete, wire.MsgNoData:
		case wire.MsgParameterDescription:
			pd, err := wire.ParseParameterDescription(body)
			if err != nil {
				return c.fail(ProtocolErr(err))
			}
			sd.ParamOIDs = append([]uint32(nil), pd.OIDs...)
		case wire.MsgRowDescription:
			fields, err := parseFields(body)
			if err != nil {
				return c.fail(err)
			}
			sd.SetFields(fields, c.Types)
		case wire.MsgErrorResponse:
			pgErr, err := c.pgError(body)
			if err != nil {
				return c.fail(err)
			}
			if sd.Err == nil {
				// Whoever waits for it describes again when it was not
				// sent (see Session.Run).
				sd.Err = c.classify(req, &pgErr, errSite{fatal: fatalBeforeRun, pooler: c.poolerSign(sd, &pgErr), describe: true})
			}
		case wire.MsgReadyForQuery:
			if sd.Plans == nil {
				sd.SetFields(nil, c.Types)
			}
			return nil
		default:
			return c.fail(APIErrors.Protocol(fmt.Sprintf("unexpected message %q in the reply to a describe", typ)))
		}
	}
}

// appendClosesLocked appends Close messages for statements evicted from
// the cache. They stay listed until the caller's messages are queued
// (closesQueuedLocked): a request that fails to build leaves them to the
// next, or a statement left on the server would be prepared again under
// its name (42P05, taken for a pooler's sign). The caller holds wmu.
func (c *Session) appendClosesLocked(buf []byte) []byte {
	for _, name := range c.Stmts.closing {
		var err error
		if buf, err = wire.AppendClose(buf, 'S', name); err != nil {
			break // cannot happen: the name is ours
		}
	}
	c.Stmts.appended = len(c.Stmts.closing)
	return buf
}

// closesQueuedLocked notes that the Close messages appendClosesLocked
// appended are in the write buffer; statements evicted since (by the
// caller's own describes) stay listed. The caller holds wmu.
func (c *Session) closesQueuedLocked() {
	sc := c.Stmts
	sc.closing = append(sc.closing[:0], sc.closing[sc.appended:]...)
	sc.appended = 0
}

// boundLocked returns the description a run of sd for owner binds: sd,
// or, when a statement that may deallocate prepared statements was queued
// since sd's named statement was prepared (its Parse queued), a copy of
// sd parsed unnamed with the Bind (stmtDesc.unnamed), whose portal's
// description says what its rows hold: the Bind would find the name gone
// (26000), and inside a transaction that would abort it; the statement
// is noted as queued (noteQueuedLocked). A description
// made before a statement that may change search_path was queued fails
// with errPathChanged: under another search_path the same text may take
// parameters of other types, and a value encoded for the old one would be
// read as the new one (a timestamp cut to a date), a wrong answer. The
// counts compared change only under wmu, as requests are queued, so they
// follow the order of the wire. The caller holds wmu (it builds the
// request).
func (c *Session) boundLocked(sd *StmtDesc, owner *Holder) (*StmtDesc, error) {
	if sd.paths != c.Stmts.paths {
		return nil, ErrPathChanged
	}
	run := sd
	if sd.Name != "" && sd.deallocs != c.Stmts.deallocs {
		run = sd.unnamed()
	}
	c.noteQueuedLocked(sd.traits, owner)
	return run, nil
}

// PreparedBySQL reports whether a statement that may have prepared one
// with SQL PREPARE was queued since the last reset (stmtCache.sqlPrepared).
func (c *Session) PreparedBySQL() bool {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	return c.Stmts.SqlPrepared
}

// ResetNote returns the note a Pool's reset of the session is queued with
// (see simpleQueryUntraced), under wmu. The reset only restores the
// session's defaults: nothing of the statement cache is dropped when
// nothing changed search_path, and it deallocates the statements of SQL
// PREPARE only (when deallocPrepared), never pgline's.
func (c *Session) ResetNote(deallocPrepared bool) func(SQLTraits) {
	return func(t SQLTraits) {
		t.changesPath = c.Stmts.pathTouched
		t.Deallocates, t.prepares = false, false
		c.noteQueuedLocked(t, nil)
		c.Stmts.pathTouched = false
		if deallocPrepared {
			c.Stmts.SqlPrepared = false
		}
	}
}

// noteQueuedLocked records what a statement with traits t, queued now for
// owner, does to the statements cached and queued after it: one that may
// deallocate prepared statements (noteDeallocateLocked), one that may
// change search_path (notePathLocked); and one that may prepare a
// statement with SQL PREPARE, which the Pool's next reset of the session
// deallocates (see stmtCache.sqlPrepared). Called as the statement is
// queued, under wmu, so that the counts follow the order of the wire: for
// a run, by boundLocked; for a simple query, by its build.
func (c *Session) noteQueuedLocked(t SQLTraits, owner *Holder) {
	if t.Deallocates {
		c.noteDeallocateLocked()
	}
	if t.prepares {
		c.Stmts.SqlPrepared = true
	}
	if t.changesPath {
		c.notePathLocked(owner)
	}
}

// notePathLocked records that a statement that may change search_path
// (sqllex.Info.ChangesSearchPath) is queued for owner: every cached
// description is dropped (the statements after it are described anew,
// under the search_path they run with), descriptions made before it fail
// to bind (boundLocked), and in a transaction, its statements from now
// on are described for each run and never cached (see
// holder.pathChanged): a SET LOCAL ends with the transaction. The caller
// holds wmu.
func (c *Session) notePathLocked(owner *Holder) {
	c.Stmts.paths++
	c.Stmts.pathTouched = true
	c.Stmts.removeAll()
	owner.notePathLocked()
}

// ErrPathChanged is the error of a statement described before a statement
// that may change search_path was queued on its connection (see
// Session.boundLocked): nothing of it was sent. Session.Run and SendBatch
// describe it again and send it (see maxPathRetries), unless the change
// is a statement of the same batch.
var ErrPathChanged = errors.New("pgline: a statement that may change search_path was queued after this statement was described (its parameter and result types may differ now); nothing was sent")

// MaxParams is the most parameters a statement may have: Parse, Bind and
// ParameterDescription carry their count in 16 bits.
const MaxParams = math.MaxUint16

// TooManyParams is the refusal of a statement with n parameters or
// arguments (what), more than the protocol can carry (maxParams). It is
// checked where the count is first known, before anything is sent: the
// arguments' as a statement enters (Conn.query), the text's highest $n
// before its Parse is queued (Session.prepareAllUnlock). Sent, such a statement
// would be answered with a ParameterDescription whose count wrapped
// around (a protocol error that closes the connection). The refusal
// leaves the connection usable, and is not SafeToRetry: the same call
// fails again (see unsendable).
func TooManyParams(n int, what string) error {
	return unsendable(fmt.Errorf("pgline: statement has %d %s; PostgreSQL's protocol allows at most %d parameters", n, what, MaxParams))
}

// parseFields decodes a RowDescription.
func parseFields(body []byte) ([]wire.FieldDescription, error) {
	fds, err := wire.ParseRowDescription(body, nil)
	if err != nil {
		return nil, ProtocolErr(err)
	}
	if fds == nil {
		// No column: described all the same (Rows.FieldDescriptions
		// gives an empty slice, not nil, as it always did).
		fds = []wire.FieldDescription{}
	}
	return fds, nil
}
