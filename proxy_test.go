package pgline

// The TCP proxy of the tests, for hosts that misbehave at the network
// level: a host that refuses, hangs or delays some connections, or a
// network partition. internal/cutproxy cuts replies mid-message.

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testProxy is a TCP forwarder in front of a server: admit decides what
// happens to each connection (numbered from 0) before it is forwarded, on
// the connection's own goroutine; while frozen is set, nothing is
// forwarded in either direction and nothing is closed (a partition, or a
// server that stopped answering). It records the first bytes each client
// sent (sent). Everything is closed at the test's end.
type testProxy struct {
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex // protects open and heads
	open   []net.Conn
	heads  map[int][]byte // connection number: its client's first bytes forwarded, up to headLen
}

// headLen is how many of a client's first bytes the proxy records.
const headLen = 64

// newTestProxy forwards the connections admit lets through (true) to
// target; one it keeps (false) it has closed or holds silent itself. A
// nil admit lets every connection through.
func newTestProxy(t *testing.T, target func() string, admit func(i int, c net.Conn) bool) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &testProxy{ln: ln}
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			px.track(c)
			go func() {
				if admit != nil && !admit(i, c) {
					return
				}
				s, err := net.Dial("tcp", target())
				if err != nil {
					c.Close()
					return
				}
				px.track(s)
				go px.pump(s, c, i)
				px.pump(c, s, -1)
			}()
		}
	}()
	t.Cleanup(func() {
		px.frozen.Store(false)
		ln.Close()
		px.mu.Lock()
		for _, c := range px.open {
			c.Close()
		}
		px.mu.Unlock()
	})
	return px
}

// pump copies src to dst, holding what it read while px is frozen, until
// either side fails; it then closes both. When src is the client of
// connection number client (not -1), its first bytes are recorded.
func (px *testProxy) pump(dst, src net.Conn, client int) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for px.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 && client >= 0 {
			px.record(client, buf[:n])
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// record keeps b as more of the first bytes of connection i's client.
func (px *testProxy) record(i int, b []byte) {
	px.mu.Lock()
	defer px.mu.Unlock()
	if px.heads == nil {
		px.heads = make(map[int][]byte)
	}
	if h := px.heads[i]; len(h) < headLen {
		px.heads[i] = append(h, b[:min(len(b), headLen-len(h))]...)
	}
}

// sent returns the first bytes (up to headLen) the client of connection
// i sent, as forwarded so far, and how many connections the proxy has
// forwarded client bytes of.
func (px *testProxy) sent(i int) (head []byte, conns int) {
	px.mu.Lock()
	defer px.mu.Unlock()
	return append([]byte(nil), px.heads[i]...), len(px.heads)
}

func (px *testProxy) track(c net.Conn) {
	px.mu.Lock()
	px.open = append(px.open, c)
	px.mu.Unlock()
}

// port is the proxy's port, for a DSN.
func (px *testProxy) port() string { return strconv.Itoa(px.ln.Addr().(*net.TCPAddr).Port) }
