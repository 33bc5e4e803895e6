package pgline

import (
	"context"
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

// WaitForNotification returns the oldest notification received and not
// yet returned, waiting for one when there is none, until ctx ends. While
// it waits, statements of other goroutines on the Conn still run: the wait
// steps aside for them and resumes after.
func (c *Conn) WaitForNotification(ctx context.Context) (*Notification, error) {
	for {
		if n, ok := c.s.PopNotification(); ok {
			return &Notification{PID: n.PID, Channel: n.Channel, Payload: n.Payload}, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.s.WaitOnce(ctx); err != nil {
			return nil, err
		}
	}
}
