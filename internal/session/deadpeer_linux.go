package session

import (
	"net"
	"syscall"
	"time"
	"unsafe"
)

// tcpStall reads how long a TCP socket has waited for an acknowledgement
// of what it sent (TCP_INFO).
type tcpStall struct {
	rc   syscall.RawConn
	info syscall.TCPInfo
	fn   func(fd uintptr) // bound once: a look allocates nothing
	ok   bool
}

// newTCPStall returns the tcpStall of socket, nil when it is not TCP.
func newTCPStall(socket net.Conn) *tcpStall {
	tc, ok := socket.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &tcpStall{rc: rc}
	s.fn = s.read
	return s
}

func (s *tcpStall) read(fd uintptr) {
	n := uint32(unsafe.Sizeof(s.info))
	_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
		uintptr(unsafe.Pointer(&s.info)), uintptr(unsafe.Pointer(&n)), 0)
	s.ok = errno == 0
}

// stalledFor returns how long the socket has had data unacknowledged or
// probes (keepalive, window, or after local drops) unanswered since the
// peer last acknowledged anything; zero when nothing is outstanding. A
// live peer that stopped reading acknowledges its window probes, so it
// is never stalled for long.
func (s *tcpStall) stalledFor() time.Duration {
	s.ok = false
	if s.rc.Control(s.fn) != nil || !s.ok {
		return 0
	}
	if s.info.Unacked == 0 && s.info.Probes == 0 {
		return 0
	}
	return time.Duration(s.info.Last_ack_recv) * time.Millisecond
}
