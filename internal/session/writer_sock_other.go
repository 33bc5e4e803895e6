//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package session

import "net"

// sockWriter cannot write without waiting here: writes that must not wait
// are left to a flusher goroutine (see writer.writeUnlock).
type sockWriter struct{}

func newSockWriter(net.Conn) sockWriter { return sockWriter{} }

func (sockWriter) ok() bool { return false }

func (sockWriter) writeNoWait([]byte) (int, error) { return 0, nil }
