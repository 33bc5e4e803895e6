package session

import (
	"context"
	"fmt"
	"strconv"

	"github.com/pgline/pgline/internal/wire"
)

// The pooler check: the server session's process ID, asked at connect.
//
// A transaction pooler answers the startup itself: the process ID its
// BackendKeyData gives is not the one of the server session a statement
// reaches (pg_backend_pid()), which is how a connection in
// statement_cache_mode=auto tells a pooler (see txpooler.go). The check
// costs neither a round trip nor a wait of its own:
//
//   - the query goes with the client's last startup message (the password
//     message, the SCRAM client-final message, or the StartupMessage when
//     no password is given: a server that then asks for one fails the
//     connection anyway), so that the server runs it as soon as it has
//     authenticated the client (an impostor who did not learns nothing);
//     only when the client sends no message after the StartupMessage
//     although it has a password (the server trusted it) is it sent after
//     the startup's ReadyForQuery;
//   - its reply is the session's first request (StartPIDCheck), read by a
//     goroutine of its own as any request's, while the connection is
//     already in use: the connect returns at the startup's ReadyForQuery,
//     and what the caller sends next is pipelined behind the check.
//
// Until the answer is read, the statement cache is in describe mode
// (provisional): a statement sent meanwhile is parsed unnamed in the Sync
// group of its Bind, which runs right with or without a pooler, and no
// named statement exists that a transaction block could later miss. The
// answer then makes the mode final: describe behind a pooler (the
// process IDs differ), prepare otherwise (also when the server answered
// with an error: not PostgreSQL, taken as direct).

// pidQuery asks the process ID of the server session.
const pidQuery = "SELECT pg_catalog.pg_backend_pid()"

// pidCheck is the connect's question of the server session's process ID.
type pidCheck struct {
	want bool // StartupConfig.CheckPID
	sent bool // the query went with a startup message
	// provisional: describe mode holds only until the answer (see
	// endProvisionalLocked). Guarded by wmu.
	provisional bool
	// done is closed once the answer is read or the session failed; nil
	// when no check runs (see PIDChecked).
	done chan struct{}
}

// withPIDQuery appends pidQuery to msg, the client's last startup message,
// when the check is wanted and not sent yet.
func (c *Session) withPIDQuery(msg []byte, err error) ([]byte, error) {
	if err != nil || !c.pidCheck.want || c.pidCheck.sent {
		return msg, err
	}
	out, err := wire.AppendQuery(msg, pidQuery)
	if err != nil {
		return msg, err
	}
	c.pidCheck.sent = true
	return out, nil
}

// StartPIDCheck makes the reply to pidQuery the session's first request,
// right after the startup and before anything else is queued, sending the
// query when no startup message carried it, and reads that reply in a
// goroutine, which then sets the statement cache's mode (see the file
// comment). Without the check (StartupConfig.CheckPID: the Pool knew the
// host behind a pooler), or when the Pool found that meanwhile, the mode
// is describe for good at once.
func (c *Session) StartPIDCheck() {
	c.Wmu.Lock()
	want := c.pidCheck.want
	if want && c.Stmts.mode == CachePrepare {
		c.Stmts.mode, c.pidCheck.provisional = CacheDescribe, true
	}
	c.followPoolerLocked()
	if !want {
		c.Wmu.Unlock()
		return
	}
	done := make(chan struct{})
	c.pidCheck.done = done
	spec := &ReqSpec{oneStmt: true}
	var req *Request
	var err error
	if c.pidCheck.sent {
		// Its bytes left with the startup's: nothing is queued before it.
		req = c.submitLocked(spec)
		c.Writer.swappedSeq, c.Writer.writtenSeq = req.seq, req.seq
		c.Wmu.Unlock()
	} else {
		c.Wmu.Unlock()
		req, err = c.send(context.Background(), spec, func(buf []byte) ([]byte, error) {
			return wire.AppendQuery(buf, pidQuery)
		})
	}
	go func() {
		defer close(done)
		var v string
		if err == nil {
			_, err = c.readReply(context.Background(), req, func(req *Request) (string, error) {
				return c.readSimple(req, ScalarRow(&v), false)
			})
		}
		pid, perr := strconv.ParseUint(v, 10, 32) // "" (none, or NULL) fails
		c.pidAnswered(uint32(pid), err == nil && perr == nil)
	}()
}

// pidAnswered sets the statement cache's mode from the check's answer:
// describe when the process ID known differs from BackendKeyData's,
// prepare otherwise (see endProvisionalLocked).
func (c *Session) pidAnswered(pid uint32, known bool) {
	if known && pid != c.PID {
		c.ToDescribeMode(fmt.Sprintf("the server process ID (%d) differs from the startup's (%d)", pid, c.PID))
		return
	}
	c.Wmu.Lock()
	c.endProvisionalLocked()
	c.Wmu.Unlock()
}

// endProvisionalLocked ends the describe mode the check set (when no
// pooler was found since, by another connection of the Pool or a pooler
// sign): the statement cache prepares statements, and the descriptions
// cached meanwhile, all of the unnamed statement, are forgotten so that
// their next runs prepare them. Requests queued with one still parse it
// unnamed (appendRun follows the description's name, not the mode). The
// caller holds wmu.
func (c *Session) endProvisionalLocked() {
	if !c.pidCheck.provisional {
		return
	}
	c.pidCheck.provisional = false
	if c.Proxied.Load() {
		return
	}
	c.Stmts.mode = CachePrepare
	for _, sd := range c.Stmts.M {
		c.Stmts.forget(sd)
	}
}

// PIDChecked returns a channel closed once the connect's pooler check
// has its answer (or the session failed): the statement cache's mode is
// final then. Already closed when no check runs.
func (c *Session) PIDChecked() <-chan struct{} {
	if c.pidCheck.done == nil {
		return closedChan
	}
	return c.pidCheck.done
}

// closedChan is a channel closed from the start.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()
