package pgline

import (
	"context"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// Notification is a message sent with NOTIFY to a channel this session
// listens on.
type Notification struct {
	PID     uint32 // the notifying session's server process
	Channel string
	Payload string
}

// Listen starts listening on channel (LISTEN). Notifications are kept by
// the connection, whatever it is doing when they arrive, until
// WaitForNotification returns them. LISTEN is session state: use a Conn of
// your own or one from Pool.Acquire, not statements routed by a Pool.
func (c *Conn) Listen(ctx context.Context, channel string) error {
	_, err := c.Exec(ctx, "LISTEN "+quoteIdent(channel))
	return err
}

// Unlisten stops listening on channel; "*" stops listening on every
// channel.
func (c *Conn) Unlisten(ctx context.Context, channel string) error {
	name := "*"
	if channel != "*" {
		name = quoteIdent(channel)
	}
	_, err := c.Exec(ctx, "UNLISTEN "+name)
	return err
}

// dropNotifications discards the notifications kept and not yet returned.
func (c *Conn) dropNotifications() {
	c.notifyMu.Lock()
	clear(c.notifications)
	c.notifications = c.notifications[:0]
	c.notifyMu.Unlock()
}

func (c *Conn) popNotification() *Notification {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	if len(c.notifications) == 0 {
		return nil
	}
	n := c.notifications[0]
	c.notifications[0] = wire.NotificationResponse{}
	c.notifications = c.notifications[1:]
	return &Notification{PID: n.PID, Channel: n.Channel, Payload: n.Payload}
}

// WaitForNotification returns the oldest notification received and not
// yet returned, waiting for one when there is none, until ctx ends. While
// it waits, statements of other goroutines on the Conn still run: the wait
// steps aside for them and resumes after.
func (c *Conn) WaitForNotification(ctx context.Context) (*Notification, error) {
	for {
		if n := c.popNotification(); n != nil {
			return n, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.waitOnce(ctx); err != nil {
			return nil, err
		}
	}
}

// othersQueued reports whether a request that awaits a reply is queued
// behind req; another WaitForNotification's turn, which sends nothing,
// does not count (the two would step aside for each other for ever). The
// caller holds wmu.
func othersQueued(req *request) bool {
	for r := req.next; r != nil; r = r.next {
		if !r.listens {
			return true
		}
	}
	return false
}

// hasNotification reports whether a notification is kept, not yet returned.
func (c *Conn) hasNotification() bool {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	return len(c.notifications) > 0
}

// waitOnce takes the head of the queue without sending anything and reads
// one message (a notification, a parameter status or a notice), until one
// arrives, ctx ends, or another request is queued (then it steps aside).
func (c *Conn) waitOnce(ctx context.Context) error {
	c.wmu.Lock()
	if err := c.gateLocked(ctx, nil); err != nil {
		c.wmu.Unlock()
		return err
	}
	req := c.submitLocked(&reqSpec{listens: true}) // nothing is sent: a drain reads nothing for it
	c.wmu.Unlock()
	if err := c.waitTurn(ctx, req); err != nil {
		return err // abandoned: nothing to drain, as nothing was sent
	}
	defer c.handoff(req)

	c.wmu.Lock()
	if othersQueued(req) || c.writer.busyLocked() || c.hasNotification() {
		c.wmu.Unlock()
		// Others are waiting: let them go first; or a notification came
		// in another's reply while this waited for its turn.
		return nil
	}
	c.listener = req
	c.wmu.Unlock()
	deadlineSet := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.netConn.SetReadDeadline(time.Unix(1, 0))
		close(deadlineSet)
	})

	// Wait for a message without consuming it: a read deadline does not
	// stop a read already under way, so the bytes may be the reply of a
	// request queued meanwhile, which must be left to it.
	err := c.peekIdle()

	if !stop() {
		// ctx ended: its callback runs, or ran, in a goroutine of its
		// own; the deadline is cleared only after it has set it.
		<-deadlineSet
	}
	c.wmu.Lock()
	c.listener = nil
	c.netConn.SetReadDeadline(time.Time{})
	queued := othersQueued(req)
	c.wmu.Unlock()
	if err != nil {
		if c.timedOut(err) {
			return ctx.Err() // interrupted (ctx, or a request queued): nothing consumed
		}
		return c.fail(readErr(err))
	}
	if queued {
		return nil // maybe the queued request's reply: step aside
	}
	// No request was in flight when the message began: it is one of the
	// messages the server sends on its own.
	return c.readIdle()
}
