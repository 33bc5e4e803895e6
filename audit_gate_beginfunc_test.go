package pgline

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// freezeProxy forwards TCP connections to the test server until
// frozen; then it stops forwarding in both directions without closing
// anything (a network partition, or a server that stopped answering).
type freezeProxy struct {
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newFreezeProxy(t *testing.T) *freezeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &freezeProxy{ln: ln}
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port))
	pump := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			for px.frozen.Load() {
				time.Sleep(5 * time.Millisecond)
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
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			px.mu.Lock()
			px.conns = append(px.conns, c, s)
			px.mu.Unlock()
			go pump(s, c)
			go pump(c, s)
		}
	}()
	t.Cleanup(func() {
		px.frozen.Store(false)
		ln.Close()
		px.mu.Lock()
		for _, c := range px.conns {
			c.Close()
		}
		px.mu.Unlock()
	})
	return px
}

func (px *freezeProxy) dsn() string {
	p := px.ln.Addr().(*net.TCPAddr).Port
	d := srv.DSN("host=127.0.0.1", "port="+strconv.Itoa(p), "sslmode=disable")
	return d
}

// TestBeginFuncRollbackKeepsDeadline: BeginFunc's rollback, after fn
// returns an error or panics, is made with context.WithoutCancel(ctx).
// When the server stops answering, it must not wait for the ROLLBACK's
// reply for ever: BeginFunc (and a panic inside fn) returns by its ctx's
// deadline, as the package promises whatever the server does, and as
// Tx.Rollback(ctx) itself does.
func TestBeginFuncRollbackKeepsDeadline(t *testing.T) {
	for _, how := range []string{"error", "panic", "Tx.Rollback"} {
		t.Run(how, func(t *testing.T) {
			px := newFreezeProxy(t)
			c, err := Connect(testCtx(t), px.dsn())
			if err != nil {
				if strings.Contains(err.Error(), "pg_hba") || strings.Contains(err.Error(), "SSL") {
					t.Skipf("connect through the proxy: %v", err)
				}
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan any, 1)
			start := time.Now()
			go func() {
				defer func() { done <- recover() }()
				fn := func(tx *Tx) error {
					if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
						return err
					}
					px.frozen.Store(true) // the server stops answering
					if how == "panic" {
						panic("boom")
					}
					return errors.New("boom")
				}
				if how == "Tx.Rollback" {
					tx, err := c.Begin(ctx)
					if err != nil {
						done <- err
						return
					}
					fn(tx)
					done <- tx.Rollback(ctx)
					return
				}
				done <- BeginFunc(ctx, c, fn)
			}()
			select {
			case r := <-done:
				t.Logf("%s: returned after %v: %v", how, time.Since(start).Round(time.Millisecond), r)
			case <-time.After(4 * time.Second):
				t.Errorf("%s: BeginFunc (ctx deadline 300ms) has not returned after %v: its Rollback waits with context.WithoutCancel(ctx) for a server that does not answer",
					how, time.Since(start).Round(time.Millisecond))
				px.frozen.Store(false) // let it go
				c.Close()
				<-done
			}
		})
	}
}
