package pgline

import (
	"context"
	"time"
)

// sockState is what peekSocket sees in an idle socket.
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

// usableAfterIdle checks a connection a Pool is about to hand out after it
// sat idle (pool_idle_check): a server that ended the session meanwhile
// (idle_session_timeout, pg_terminate_backend, a restart) has sent its
// FATAL and closed the socket, which a look at the socket shows without a
// round trip. When something arrived (a FATAL not yet followed by the
// end, a notice, a ParameterStatus) or the socket cannot be looked at, an
// empty query reads it. A connection found unusable is closed.
func (c *Conn) usableAfterIdle(ctx context.Context) bool {
	if c.IsClosed() {
		return false
	}
	if c.busy() {
		return true // its reader sees the end of the session for itself
	}
	switch peekSocket(c.rawConn) {
	case sockQuiet:
		return true
	case sockEnded:
		c.fail(errIdleEnded)
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, idlePingTimeout)
	defer cancel()
	if _, err := c.simpleQuery(pctx, nil, "", nil); err != nil {
		c.Close()
		return false
	}
	return true
}

// busy reports whether requests are in flight or being written.
func (c *Conn) busy() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.tail != nil || c.flushing
}
