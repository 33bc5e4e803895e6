// Package cutproxy is a TCP forwarder for tests that cuts each connection
// after the server has sent a given number of bytes: to the client, the
// server crashed or a proxy dropped the connection in the middle of a
// reply.
package cutproxy

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
)

// Start listens on a loopback port and forwards each connection to
// target, closing it once the server has sent limit bytes: at the end of
// the last PostgreSQL message that fits when whole is set, otherwise
// exactly there (inside a message). It returns the address to connect to
// and a function that stops the listener.
func Start(target string, limit int64, whole bool) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, target, limit, whole)
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }, nil
}

func forward(c net.Conn, target string, limit int64, whole bool) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { io.Copy(s, c); s.Close() }()
	if !whole {
		io.CopyN(c, s, limit)
		return
	}
	br := bufio.NewReader(s)
	for sent := int64(0); ; {
		var hdr [5]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 || sent+5+n > limit {
			return
		}
		msg := make([]byte, 5+n)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(br, msg[5:]); err != nil {
			return
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
		sent += 5 + n
	}
}
