//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package session

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
)

// sockPeeker looks, without blocking or consuming anything, at what an
// idle socket holds: nothing (sockQuiet), bytes the server sent while the
// connection was idle (sockData), or its end (sockEnded). It is made once
// per connection, its func bound once, so that a look allocates nothing.
type sockPeeker struct {
	rc    syscall.RawConn // nil: it cannot look
	mu    sync.Mutex      // one look at a time
	state sockState
	err   error // why it ended, when the socket failed (a reset, a timeout)
	b     [1]byte
	fn    func(fd uintptr) bool
}

// newSockPeeker returns the sockPeeker of conn, a socket.
func newSockPeeker(conn net.Conn) *sockPeeker {
	p := &sockPeeker{}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
	p.fn = p.look
	return p
}

// peek looks into the socket. For sockEnded, err is the socket's error
// (a reset, a keepalive's timeout), nil for the peer's FIN.
func (p *sockPeeker) peek() (sockState, error) {
	if p == nil || p.rc == nil {
		return sockUnknown, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state, p.err = sockUnknown, nil
	if err := p.rc.Read(p.fn); err != nil {
		return sockUnknown, nil // a deadline set earlier, a closed socket: ask the server
	}
	return p.state, p.err
}

func (p *sockPeeker) look(fd uintptr) bool {
	n, _, err := syscall.Recvfrom(int(fd), p.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK):
		p.state = sockQuiet
	case errors.Is(err, syscall.EINTR):
		p.state = sockUnknown
	case err != nil: // reset, or timed out (keepalives, TCP_USER_TIMEOUT)
		p.state, p.err = sockEnded, os.NewSyscallError("recvfrom", err)
	case n == 0: // the peer's FIN
		p.state = sockEnded
	default:
		p.state = sockData
	}
	return true // never wait for the socket
}
