//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pgline

import "net"

// peekSocket cannot look into a socket on this system: an idle
// connection is checked with a round trip (see Conn.usableAfterIdle).
func peekSocket(net.Conn) sockState { return sockUnknown }
