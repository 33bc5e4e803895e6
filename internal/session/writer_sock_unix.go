//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package session

import (
	"net"
	"os"
	"syscall"
)

// sockWriter writes to a socket without waiting (see writeNoWait).
type sockWriter struct {
	rc      syscall.RawConn // nil: it cannot
	network string
	op      *noWaitWrite // reused: one writer at a time (the writer's role, see writer)
}

// noWaitWrite is a write in progress, its func made once so that passing
// it to RawConn.Write allocates nothing.
type noWaitWrite struct {
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

// newSockWriter returns the sockWriter of conn, a socket; one that cannot
// write when conn has no file descriptor.
func newSockWriter(conn net.Conn) sockWriter {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return sockWriter{}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return sockWriter{}
	}
	op := &noWaitWrite{}
	op.fn = op.write
	return sockWriter{rc: rc, network: conn.LocalAddr().Network(), op: op}
}

// ok reports whether w can write without waiting.
func (w sockWriter) ok() bool { return w.rc != nil }

// writeNoWait writes what the socket takes of b at once, without waiting
// for it to take more, and returns how much that was: less than len(b),
// with a nil error, when its buffer is full (the server is not reading).
// The caller is the connection's one writer.
func (w sockWriter) writeNoWait(b []byte) (int, error) {
	op := w.op
	op.b, op.n, op.err = b, 0, nil
	err := w.rc.Write(op.fn)
	n := op.n
	if err == nil {
		err = op.err
	}
	op.b, op.err = nil, nil
	if err != nil {
		return n, &net.OpError{Op: "write", Net: w.network, Err: err}
	}
	return n, nil
}

// write writes op.b from op.n on, while the socket takes it.
func (op *noWaitWrite) write(fd uintptr) bool {
	for op.n < len(op.b) {
		m, err := syscall.Write(int(fd), op.b[op.n:])
		if m > 0 {
			op.n += m
		}
		switch {
		case err == nil && m > 0, err == syscall.EINTR:
			continue
		case err != nil && err != syscall.EAGAIN:
			op.err = os.NewSyscallError("write", err)
		}
		// Full (EAGAIN), failed, or a write of nothing (left to a
		// blocking write).
		return true
	}
	return true // never wait for the socket
}
