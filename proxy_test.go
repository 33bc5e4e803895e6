package pgline

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// testProxy is a TCP forwarder in front of a server, for tests of hosts
// that misbehave at the network level: admit decides what happens to each
// connection (numbered from 0) before it is forwarded, on the
// connection's own goroutine; everything is closed at the test's end.
type testProxy struct {
	ln   net.Listener
	mu   sync.Mutex
	open []net.Conn
}

// newTestProxy forwards the connections admit lets through (true) to
// target; one it keeps (false) it has closed or holds silent itself.
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
				if !admit(i, c) {
					return
				}
				s, err := net.Dial("tcp", target())
				if err != nil {
					c.Close()
					return
				}
				px.track(s)
				go func() { io.Copy(s, c); s.Close() }()
				io.Copy(c, s)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		px.mu.Lock()
		for _, c := range px.open {
			c.Close()
		}
		px.mu.Unlock()
	})
	return px
}

func (px *testProxy) track(c net.Conn) {
	px.mu.Lock()
	px.open = append(px.open, c)
	px.mu.Unlock()
}

// port is the proxy's port, for a DSN.
func (px *testProxy) port() string { return strconv.Itoa(px.ln.Addr().(*net.TCPAddr).Port) }
