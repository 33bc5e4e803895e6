package pgline

// The TCP proxy of the tests, for hosts that misbehave at the network
// level: a host that refuses, hangs or delays some connections, or a
// network partition; it may also record the bytes each connection
// carries (newRecordingProxy). internal/cutproxy cuts replies
// mid-message.

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
// server that stopped answering). Everything is closed at the test's end.
type testProxy struct {
	ln        net.Listener
	frozen    atomic.Bool
	recording bool // set before the first connection (newRecordingProxy)
	mu        sync.Mutex
	open      []net.Conn
	recs      []*proxyRecord // when recording: one per connection forwarded, in order
}

// proxyRecord is what one connection through a recording proxy carried,
// so far: up, the client's bytes; down, the server's.
type proxyRecord struct {
	mu       sync.Mutex
	up, down []byte
}

// bytes returns copies of what the connection carried so far.
func (r *proxyRecord) bytes() (up, down []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.up...), append([]byte(nil), r.down...)
}

// newRecordingProxy is a testProxy in front of target that lets every
// connection through and records the bytes each carries (records).
func newRecordingProxy(t *testing.T, target func() string) *testProxy {
	t.Helper()
	return newProxy(t, target, nil, true)
}

// records returns the records of the connections forwarded so far, in
// the order they were accepted.
func (px *testProxy) records() []*proxyRecord {
	px.mu.Lock()
	defer px.mu.Unlock()
	return append([]*proxyRecord(nil), px.recs...)
}

// newTestProxy forwards the connections admit lets through (true) to
// target; one it keeps (false) it has closed or holds silent itself. A
// nil admit lets every connection through.
func newTestProxy(t *testing.T, target func() string, admit func(i int, c net.Conn) bool) *testProxy {
	t.Helper()
	return newProxy(t, target, admit, false)
}

// newProxy is newTestProxy, recording the bytes when record is set.
func newProxy(t *testing.T, target func() string, admit func(i int, c net.Conn) bool, record bool) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &testProxy{ln: ln, recording: record}
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
				var up, down func([]byte)
				if px.recording {
					rec := &proxyRecord{}
					px.mu.Lock()
					px.recs = append(px.recs, rec)
					px.mu.Unlock()
					up = func(b []byte) { rec.mu.Lock(); rec.up = append(rec.up, b...); rec.mu.Unlock() }
					down = func(b []byte) { rec.mu.Lock(); rec.down = append(rec.down, b...); rec.mu.Unlock() }
				}
				go px.pump(s, c, up)
				px.pump(c, s, down)
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
// either side fails; it then closes both. record, when not nil, is given
// each piece before it is forwarded.
func (px *testProxy) pump(dst, src net.Conn, record func([]byte)) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for px.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 && record != nil {
			record(buf[:n])
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

func (px *testProxy) track(c net.Conn) {
	px.mu.Lock()
	px.open = append(px.open, c)
	px.mu.Unlock()
}

// port is the proxy's port, for a DSN.
func (px *testProxy) port() string { return strconv.Itoa(px.ln.Addr().(*net.TCPAddr).Port) }
