//go:build !linux

package session

import (
	"net"
	"time"
)

// tcpStall is Linux's (TCP_INFO); elsewhere the dead-peer watch sees
// nothing, and only the keepalives find a dead peer.
type tcpStall struct{}

func newTCPStall(net.Conn) *tcpStall { return nil }

func (*tcpStall) stalledFor() time.Duration { return 0 }
