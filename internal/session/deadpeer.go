package session

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
	"weak"
)

// The dead-peer watch closes a connection whose server has acknowledged
// nothing for SessionOpts.DeadPeerAfter while the session waits for it:
// data sent and not acknowledged, or probes unanswered (see
// tcpStalledFor, Linux only). It is the one rule for a peer gone without
// a word (a partition, a host lost, a NAT entry expired) while requests
// are in flight; an idle connection is left to the keepalives, which the
// kernel sends only when nothing is outstanding. The kernel itself would
// retransmit unacknowledged data for about 15 minutes, and
// TCP_USER_TIMEOUT, which shortens that, also cuts off a live server
// that merely stopped reading (a long statement with more pipelined
// behind it); a live server acknowledges even then (its kernel answers
// the window probes), so the watch does not.
//
// One goroutine watches every registered session (peers), every
// deadPeerTick, and only while some session is registered. A session
// registers in Started and leaves as it closes (markClosed); a session
// found dead fails (fail), which closes its socket under its reader: every
// request on it gets the error, those never written as not sent. The
// watch holds sessions by weak pointers: a connection its program forgot
// to close is still collected (and its socket closed by the runtime).
var peers = peerWatch{conns: make(map[weak.Pointer[Session]]struct{})}

// deadPeerTick is how often the watch looks at each busy session.
const deadPeerTick = 500 * time.Millisecond

// peerWatch is the set of sessions the dead-peer watch looks at.
type peerWatch struct {
	mu      sync.Mutex
	conns   map[weak.Pointer[Session]]struct{}
	running bool // the watching goroutine runs
}

// DeadPeerError is the error of a connection the dead-peer watch closed.
type DeadPeerError struct {
	After time.Duration // SessionOpts.DeadPeerAfter
}

func (e *DeadPeerError) Error() string {
	return fmt.Sprintf("pgline: the server acknowledged nothing for %v while requests were in flight (keepalives_idle + keepalives_interval × keepalives_count): the network or the host is gone", e.After)
}

// Timeout reports true: the connection timed out, as a net.Error.
func (e *DeadPeerError) Timeout() bool { return true }

// Temporary reports true, as net.Error's Temporary does for a timeout.
func (e *DeadPeerError) Temporary() bool { return true }

var _ net.Error = (*DeadPeerError)(nil)

// watchPeer registers c with the dead-peer watch when its options ask
// for it and its socket can be looked at.
func (c *Session) watchPeer(socket net.Conn) {
	if c.opts.DeadPeerAfter <= 0 {
		return
	}
	if c.stall = newTCPStall(socket); c.stall == nil {
		return
	}
	peers.mu.Lock()
	defer peers.mu.Unlock()
	if c.closed.Load() {
		return
	}
	peers.conns[weak.Make(c)] = struct{}{}
	if !peers.running {
		peers.running = true
		go peers.loop()
	}
}

// PeerLost returns the failure that closed the session when it means
// that the server stopped answering: the dead-peer watch's, or the
// socket's timeout (keepalives, TCP_USER_TIMEOUT); nil when the session
// is open, was closed, or ended otherwise.
func (c *Session) PeerLost() error {
	e := c.fatal.Load()
	if e == nil {
		return nil
	}
	var dp *DeadPeerError
	if errors.As(*e, &dp) || errors.Is(*e, syscall.ETIMEDOUT) {
		return *e
	}
	return nil
}

// unwatchPeer takes c out of the dead-peer watch.
func (c *Session) unwatchPeer() {
	if c.stall == nil {
		return // never watched
	}
	peers.mu.Lock()
	delete(peers.conns, weak.Make(c))
	peers.mu.Unlock()
}

// loop looks at every busy session each tick, until none is registered.
func (w *peerWatch) loop() {
	t := time.NewTicker(deadPeerTick)
	defer t.Stop()
	var live []*Session // held for one tick only
	for range t.C {
		w.mu.Lock()
		if len(w.conns) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		for wp := range w.conns {
			if c := wp.Value(); c != nil {
				live = append(live, c)
			} else {
				delete(w.conns, wp) // collected without Close
			}
		}
		w.mu.Unlock()
		for _, c := range live {
			if c.Busy() && c.stall.stalledFor() >= c.opts.DeadPeerAfter { // an idle one is the keepalives'
				c.fail(&DeadPeerError{After: c.opts.DeadPeerAfter})
			}
		}
		clear(live)
		live = live[:0]
	}
}
