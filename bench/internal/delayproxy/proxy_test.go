package delayproxy

import (
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes every connection back until closed.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func dialProxy(t *testing.T, rtt time.Duration) (net.Conn, *Proxy) {
	t.Helper()
	p, err := Start(echoServer(t), rtt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, p
}

func TestEachRoundTripPaysRTT(t *testing.T) {
	const rtt = 20 * time.Millisecond
	const trips = 5
	c, _ := dialProxy(t, rtt)
	buf := make([]byte, 3)
	start := time.Now()
	for i := range trips {
		t0 := time.Now()
		if _, err := c.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d < rtt {
			t.Errorf("round trip %d took %v, less than the %v RTT", i, d, rtt)
		}
		if string(buf) != "abc" {
			t.Fatalf("echo returned %q", buf)
		}
	}
	if d := time.Since(start); d > trips*rtt+500*time.Millisecond {
		t.Errorf("%d round trips took %v, far above %v", trips, d, trips*rtt)
	}
}

func TestPipelinedBytesShareOneRTT(t *testing.T) {
	const rtt = 50 * time.Millisecond
	c, _ := dialProxy(t, rtt)
	start := time.Now()
	want := 0
	for range 10 {
		n, err := c.Write(make([]byte, 1000))
		if err != nil {
			t.Fatal(err)
		}
		want += n
	}
	if _, err := io.ReadFull(c, make([]byte, want)); err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	if d < rtt || d > 3*rtt {
		t.Errorf("10 pipelined writes took %v, want between one and three RTTs (%v)", d, rtt)
	}
}

func TestLargeTransferIntact(t *testing.T) {
	c, _ := dialProxy(t, time.Millisecond)
	data := make([]byte, 5<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	go c.Write(data)
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != data[i] {
			t.Fatalf("byte %d: got %d want %d", i, got[i], data[i])
		}
	}
}

func TestCloseEndsConnections(t *testing.T) {
	c, p := dialProxy(t, 0)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	io.ReadFull(c, make([]byte, 1))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after proxy Close succeeded")
	}
}

func TestNegativeRTT(t *testing.T) {
	if _, err := Start("127.0.0.1:1", -time.Second); err == nil {
		t.Fatal("Start accepted a negative RTT")
	}
}

func TestUnreachableTarget(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	p, err := Start(addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read through a proxy to a closed port succeeded")
	}
}
