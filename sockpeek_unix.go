//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pgline

import (
	"errors"
	"net"
	"syscall"
)

// peekSocket looks, without blocking or consuming anything, at what an
// idle socket holds: nothing (sockQuiet), bytes the server sent while the
// connection was idle (sockData), or its end (sockEnded).
func peekSocket(conn net.Conn) sockState {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return sockUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return sockUnknown
	}
	state := sockUnknown
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK):
			state = sockQuiet
		case errors.Is(err, syscall.EINTR):
			state = sockUnknown
		case err != nil, n == 0: // reset, or the peer's FIN
			state = sockEnded
		default:
			state = sockData
		}
		return true // never wait for the socket
	})
	if err != nil {
		return sockUnknown // a deadline set earlier, a closed socket: ask the server
	}
	return state
}
