// Package cutproxy is a TCP forwarder for tests that cuts connections in
// the middle of a server's reply: to the client, the server crashed or a
// proxy dropped the connection there.
package cutproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// Proxy forwards each connection it accepts to its target until its rule
// cuts it.
type Proxy struct {
	ln     net.Listener
	target string
	arm    []byte
	// cut decides, for a server message of type typ and size bytes (its
	// header included) after sent bytes, whether the connection ends
	// there, and how many of its bytes go out first.
	cut  func(typ byte, size, sent int64, seen *int) (end bool, keep int64)
	cuts atomic.Int32
}

// Start forwards connections to target and closes each once the server
// has sent limit bytes: at the end of the last message that fits when
// whole is set, otherwise exactly there (inside a message).
func Start(target string, limit int64, whole bool) (*Proxy, error) {
	return start(target, nil, func(_ byte, size, sent int64, _ *int) (bool, int64) {
		if sent+size <= limit {
			return false, 0
		}
		if whole {
			return true, 0
		}
		return true, limit - sent
	})
}

// AtMessage forwards connections to target; once the client has sent the
// bytes arm (a comment in a statement's text, say), the k-th server
// message of type typ ends the connection: not sent at all, or only its
// first half when inside is set.
func AtMessage(target string, arm []byte, typ byte, k int, inside bool) (*Proxy, error) {
	return start(target, arm, func(t byte, size, _ int64, seen *int) (bool, int64) {
		if t != typ {
			return false, 0
		}
		if *seen++; *seen < k {
			return false, 0
		}
		if inside {
			return true, 5 + (size-5)/2
		}
		return true, 0
	})
}

func start(target string, arm []byte, cut func(byte, int64, int64, *int) (bool, int64)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, arm: arm, cut: cut}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p, nil
}

// Addr is the address to connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cuts is how many connections the proxy has cut.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// Close stops accepting connections.
func (p *Proxy) Close() { p.ln.Close() }

func (p *Proxy) forward(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	var armed atomic.Bool
	armed.Store(p.arm == nil)
	go p.toServer(c, s, &armed)
	br := bufio.NewReaderSize(s, 1<<20)
	seen := 0
	for sent := int64(0); ; {
		var hdr [5]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 {
			return
		}
		msg := make([]byte, 5+n)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(br, msg[5:]); err != nil {
			return
		}
		if armed.Load() {
			if end, keep := p.cut(hdr[0], int64(len(msg)), sent, &seen); end {
				c.Write(msg[:keep])
				p.cuts.Add(1)
				time.Sleep(20 * time.Millisecond) // the bytes arrive before the end
				return
			}
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
		sent += int64(len(msg))
	}
}

// toServer copies the client's bytes to the server and arms the cut once
// they hold p.arm.
func (p *Proxy) toServer(c, s net.Conn, armed *atomic.Bool) {
	defer s.Close()
	buf := make([]byte, 64<<10)
	var tail []byte // the last bytes seen, for an arm split across reads
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if !armed.Load() {
				chunk := append(tail, buf[:n]...)
				if bytes.Contains(chunk, p.arm) {
					armed.Store(true)
				}
				tail = append([]byte(nil), chunk[max(0, len(chunk)-len(p.arm)):]...)
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
