package pgline

import (
	"syscall"
	"time"
)

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option (not in package
// syscall).
const tcpUserTimeout = 0x12

// setUserTimeout sets TCP_USER_TIMEOUT on the socket rc, in milliseconds.
func setUserTimeout(rc syscall.RawConn, t time.Duration) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(t.Milliseconds()))
	})
	if err != nil {
		return err
	}
	return serr
}
