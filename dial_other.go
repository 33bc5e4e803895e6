//go:build !linux

package pgline

import (
	"syscall"
	"time"
)

// setUserTimeout does nothing: TCP_USER_TIMEOUT is Linux's (see
// Config.TCPUserTimeout).
func setUserTimeout(syscall.RawConn, time.Duration) error { return nil }
