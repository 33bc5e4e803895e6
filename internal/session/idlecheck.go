package session

import (
	"context"
	"fmt"
	"time"
)

// sockState is what sockPeeker sees in an idle socket.
type sockState int8

const (
	sockUnknown sockState = iota // could not look: ask the server
	sockQuiet                    // nothing arrived: the session is as it was
	sockData                     // the server sent something while idle
	sockEnded                    // the server closed the connection
)

// idlePingTimeout bounds the round trip that checks an idle connection
// whose socket holds something.
const idlePingTimeout = 5 * time.Second

// UsableAfterIdle checks a connection a Pool is about to hand out after it
// sat idle (pool_idle_check): a server that ended the session meanwhile
// (idle_session_timeout, pg_terminate_backend, a restart) has sent its
// FATAL and closed the socket (see settleIdle); a socket that cannot be
// looked at is checked with an empty query. A connection found unusable
// is closed.
func (c *Session) UsableAfterIdle(ctx context.Context) bool {
	if c.closed.Load() {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, idlePingTimeout)
	defer cancel()
	if err := c.settleIdle(pctx, true); err != nil {
		c.Close()
		return false
	}
	return !c.closed.Load()
}

// settleIdle reads what an idle connection's socket holds: a session that
// ended while idle (pg_terminate_backend, a restart) has sent its FATAL
// and closed the socket, which then fails the connection, and settleIdle
// returns the error. It is called before a simple Query is written
// outside a transaction: a FATAL read after the text was written may
// have ended the session while the text ran (see readSimple), one read
// before says that the text was not sent, and the Pool may send it
// elsewhere. A look at a quiet socket is one syscall; when something
// arrived (the FATAL, a notice, a notification), an empty query reads it.
// A connection in use is left alone (the request reading sees the end of
// the session for itself), and so is one whose socket cannot be looked
// at, unless ask.
func (c *Session) settleIdle(ctx context.Context, ask bool) error {
	if c.Busy() {
		return nil
	}
	switch state, err := c.peeker.peek(); state {
	case sockQuiet:
		return nil
	case sockUnknown:
		if !ask {
			return nil
		}
	case sockEnded:
		if err != nil {
			return c.fail(fmt.Errorf("%w: %w", APIErrors.IdleEnded, err))
		}
		return c.fail(APIErrors.IdleEnded)
	}
	_, err := c.SimpleQueryUntraced(ctx, nil, "", nil, nil)
	return err
}

// Busy reports whether requests are in flight: queued, being written, or
// waiting for (or draining) their reply. Every byte queued belongs to a
// request (see writer), so a goroutine still holding the writer's role
// when none is in flight (a flusher between its last write and giving the
// role up) is not a use: it has nothing of anyone's left to write, and
// what is queued meanwhile it writes before it gives the role up.
func (c *Session) Busy() bool {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	return c.Tail != nil
}
