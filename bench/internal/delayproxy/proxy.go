// Package delayproxy is an in-process TCP proxy that adds a fixed
// round-trip time to every connection through it, to show what a network
// hop does to each driver.
//
// Each direction delays every chunk it reads by half the round-trip time
// before writing it on, without holding back the chunks behind it: bytes in
// flight overlap as they would on a real link, so a pipelining client pays
// the delay once per batch and a serial one once per query. Buffers come
// from a fixed pool, so the proxy allocates nothing per chunk and does not
// blur the allocation figures of the process it runs in.
package delayproxy

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"
)

const (
	chunkSize = 64 << 10 // bytes one read can move
	chunks    = 64       // buffers per direction: bounds the bytes in flight
)

// Proxy forwards connections from its listener to a target address.
type Proxy struct {
	ln     net.Listener
	target string
	half   time.Duration

	mu     sync.Mutex // protects conns and closed
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1 on a free port and forwards each connection
// to target, adding rtt to every round trip (rtt/2 each way). rtt must not
// be negative.
func Start(target string, rtt time.Duration) (*Proxy, error) {
	if rtt < 0 {
		return nil, fmt.Errorf("delayproxy: negative round-trip time %v", rtt)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("delayproxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, half: rtt / 2, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the address clients connect to, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, closes every proxied connection and waits for
// the proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if !p.track(client) {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	setNoDelay(client)
	setNoDelay(server)
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client); done <- struct{}{} }()
	go func() { p.pipe(client, server); done <- struct{}{} }()
	<-done
	// One side ended: close both so the other direction ends too.
	client.Close()
	server.Close()
	<-done
}

// waitUntil returns at t: a sleep for the bulk of the wait (see
// preciseSleep), then yields until t.
func waitUntil(t time.Time) {
	if d := time.Until(t) - spinBelow; d > 0 {
		preciseSleep(d)
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}

func setNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
}

// chunk is bytes read at one moment, due to be written at due.
type chunk struct {
	buf []byte
	n   int
	due time.Time
}

// pipe copies src to dst, delaying each chunk by half the round trip.
func (p *Proxy) pipe(dst, src net.Conn) {
	free := make(chan []byte, chunks)
	for range chunks {
		free <- make([]byte, chunkSize)
	}
	queue := make(chan chunk, chunks)
	go func() {
		defer close(queue)
		for {
			buf := <-free
			n, err := src.Read(buf)
			if n > 0 {
				queue <- chunk{buf: buf, n: n, due: time.Now().Add(p.half)}
			}
			if err != nil {
				return
			}
		}
	}()
	broken := false
	for c := range queue {
		if !broken {
			waitUntil(c.due)
			if _, err := dst.Write(c.buf[:c.n]); err != nil {
				broken = true
				src.Close() // stop the reader; drain what it queued
			}
		}
		free <- c.buf
	}
	if tc, ok := dst.(*net.TCPConn); ok && !broken {
		tc.CloseWrite()
	} else {
		dst.Close()
	}
}
