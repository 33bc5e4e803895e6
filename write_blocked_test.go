package pgline

// Writes the socket does not take (writer.flushUnlock, writeUnlock,
// flushRest, writeFailed): a server that stops reading, or reads slowly,
// cannot keep a caller past its ctx's deadline, Close ends every blocked
// writer, and no goroutine of the write path is left behind.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// writeFakeServer is a fake server (fakeListen) whose connections
// complete the startup (over TLS when useTLS, answering SSLRequest with
// 'S') and then run serve, with no deadline: serve decides how long a
// connection lasts. CancelRequests are read and dropped. It returns the
// DSN.
func writeFakeServer(t *testing.T, useTLS bool, serve func(c net.Conn)) string {
	t.Helper()
	var cert *tls.Certificate
	mode := "disable"
	if useTLS {
		tc := testServerCert(t)
		cert, mode = &tc, "require"
	}
	port, _ := fakeListen(t, func(_ *testing.T, raw net.Conn) {
		raw.SetDeadline(time.Time{})
		c, cancel, err := fakeStartup(raw, cert)
		if err != nil || cancel {
			return
		}
		if _, err := c.Write(authOKReady()); err != nil {
			return
		}
		serve(c)
	})
	return strings.Replace(fakeDSN(port), "sslmode=disable", "sslmode="+mode, 1) + " cancel_timeout=500ms"
}

// writePathGoroutines lists the goroutines still in the write path or a
// drain (a flusher blocked in Write after Close would show here).
func writePathGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"(*writer).flushLoop", "(*writer).flushRest", "(*writer).writeUnlock", "(*Conn).drainAbandoned", "(*writer).writeQueued"} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// noWritePathGoroutines fails t when goroutines of the write path are still
// there 3 s after Close (writePathGoroutines).
func noWritePathGoroutines(t *testing.T) {
	t.Helper()
	var left []string
	if waitFor(t, 3*time.Second, func() (bool, error) {
		left = writePathGoroutines()
		return len(left) == 0, nil
	}) {
		return
	}
	t.Errorf("%d write-path goroutines left 3 s after Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// silentConn connects to a fake server (writeFakeServer) that
// completes the startup and then never reads, until the test ends.
func silentConn(t *testing.T, useTLS bool) *Conn {
	t.Helper()
	stop := make(chan struct{})
	dsn := writeFakeServer(t, useTLS, func(c net.Conn) { <-stop })
	t.Cleanup(func() { close(stop) })
	c, err := Connect(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// transportDSNs are the transports the write tests run over: loopback TCP,
// the Unix socket (whose buffers are smaller: ~200 KiB each way), and TLS
// (which cannot write without waiting: a flusher writes).
func transportDSNs() map[string]string {
	return map[string]string{"tcp": srv.DSN(), "unix": srv.SocketDSN(), "tls": srv.DSN("sslmode=require")}
}

// TestWriteSilentServerDeadlines: a server that completes the
// startup and then never reads. Many callers with deadlines send large
// and small statements; each must return its ctx's error at its deadline.
// After Close, no flusher may stay blocked.
func TestWriteSilentServerDeadlines(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[useTLS], func(t *testing.T) {
			c := silentConn(t, useTLS)
			big := strings.Repeat("b", 300<<10)
			mid := strings.Repeat("m", 60<<10)
			const callers, deadline = 60, 300 * time.Millisecond
			lates := make([]time.Duration, callers)
			errs := make([]error, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					defer cancel()
					start := time.Now()
					var err error
					switch i % 3 {
					case 0:
						_, err = c.Exec(ctx, "SELECT length($1::text)", big)
					case 1:
						_, err = c.Exec(ctx, "SELECT '"+mid+"'")
					default:
						_, err = c.Exec(ctx, "SELECT 1")
					}
					lates[i], errs[i] = time.Since(start)-deadline, err
				}()
				time.Sleep(3 * time.Millisecond)
			}
			wg.Wait()
			for i := range callers {
				if !errors.Is(errs[i], context.DeadlineExceeded) {
					t.Errorf("caller %d: %v, want context.DeadlineExceeded", i, errs[i])
				}
				if lates[i] > 400*time.Millisecond {
					t.Errorf("caller %d returned %v after its deadline", i, lates[i].Round(time.Millisecond))
				}
			}
			start := time.Now()
			c.Close()
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			noWritePathGoroutines(t)
		})
	}
}

// TestWriteCloseWhileFlusherBlocked: callers without a deadline
// queue megabytes to a server that never reads; Close must make them all
// return (with an error, none claiming a result) and leave no flusher.
func TestWriteCloseWhileFlusherBlocked(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[useTLS], func(t *testing.T) {
			c := silentConn(t, useTLS)
			// Simple protocol: no describe to wait for; 24 MiB in all,
			// more than the socket buffers hold.
			big := strings.Repeat("c", 2<<20)
			done := make(chan error, 12)
			for i := range 12 {
				go func() {
					_, err := c.Exec(context.Background(), fmt.Sprintf("SELECT %d, '%s'", i, big))
					done <- err
				}()
			}
			// A writer blocks once the socket buffers are full (slow
			// under -race on a busy machine: up to 10 s).
			flushing := false
			for wait := time.Now(); !flushing && time.Since(wait) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
				c.s.Wmu.Lock()
				flushing = c.s.Writer.Taken && len(c.s.Writer.Wbuf) > 0
				c.s.Wmu.Unlock()
			}
			if !flushing {
				t.Error("no writer blocked before Close: the scenario was not reached")
			}
			start := time.Now()
			c.Close()
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			for i := range 12 {
				select {
				case err := <-done:
					if err == nil {
						t.Errorf("a caller got a success from a server that read nothing")
					}
				case <-time.After(3 * time.Second):
					t.Fatalf("caller %d still blocked 3 s after Close", i)
				}
			}
			noWritePathGoroutines(t)
		})
	}
}

// TestWriteUnreadRepliesKeepsDeadline: over TLS, a caller alone on the
// connection with a ctx that cannot end writes its own request waiting
// for the socket, assuming the server reads. A hostile server answers
// every simple Query after reading one byte of it and never reads the
// rest: the socket buffers fill, and a caller alone then blocks in Write.
// Its deadline must still be kept.
func TestWriteUnreadRepliesKeepsDeadline(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "tls"}[useTLS], func(t *testing.T) {
			reply, _ := wire.AppendCommandComplete(nil, "SELECT 1")
			reply = wire.AppendReadyForQuery(reply, 'I')
			dsn := writeFakeServer(t, useTLS, func(c net.Conn) {
				one := make([]byte, 1)
				for {
					if _, err := c.Read(one); err != nil {
						return
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			})
			c, err := Connect(testCtx(t), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A caller stuck in Write returns only when Close ends it.
			stuck := time.AfterFunc(4*time.Second, func() { c.Close() })
			defer stuck.Stop()
			stmt := "SELECT '" + strings.Repeat("u", 60<<10) + "'"
			const deadline = 200 * time.Millisecond
			timedOut := false
			for i := range 400 {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				_, err := c.Exec(ctx, stmt)
				took := time.Since(start)
				cancel()
				if took > deadline+500*time.Millisecond {
					t.Fatalf("call %d returned %v after its deadline (%v): %v", i, (took - deadline).Round(time.Millisecond), deadline, err)
				}
				if err != nil {
					timedOut = true
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Logf("call %d: %v", i, err)
					}
					break
				}
			}
			if useTLS && !timedOut {
				t.Log("no call timed out: the socket buffers never filled")
			}
		})
	}
}

// TestWriteFullSocketKeepsDeadline: while the head's statement runs
// (pg_sleep: the server reads nothing meanwhile), callers with a short
// deadline queue statements of 60 KiB each, one after the other, so that
// each finds nobody writing and writes the buffer itself. Once the socket
// buffers are full, a caller that waited for the socket would sit in
// Write, where its ctx is not watched. Every caller must return its own
// ctx's error at its deadline, not when the server reads again.
func TestWriteFullSocketKeepsDeadline(t *testing.T) {
	for name, dsn := range transportDSNs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the transports side by side: each waits 3 s for its server
			c := connect(t, dsn)
			bg := context.Background()
			param := strings.Repeat("p", 60<<10)
			var n int
			// Prepared first, so that no caller waits for a describe.
			if err := c.QueryRow(bg, "SELECT length($1::text)", param).Scan(&n); err != nil || n != len(param) {
				t.Fatalf("warm-up: %d, %v", n, err)
			}
			const sleep = 3 * time.Second
			head := make(chan error, 1)
			go func() {
				_, err := c.Exec(bg, "SELECT pg_sleep($1)", sleep.Seconds())
				head <- err
			}()
			for queued := false; !queued; time.Sleep(time.Millisecond) {
				c.s.Wmu.Lock()
				queued = c.s.Tail != nil && !c.s.Writer.Taken && len(c.s.Writer.Wbuf) == 0
				c.s.Wmu.Unlock()
			}
			time.Sleep(50 * time.Millisecond) // the sleep has started on the server
			const callers, deadline = 250, 300 * time.Millisecond
			type result struct {
				late time.Duration
				err  error
			}
			results := make([]result, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := time.Now()
					ctx, cancel := context.WithTimeout(bg, deadline)
					defer cancel()
					var got int
					err := c.QueryRow(ctx, "SELECT length($1::text)", param).Scan(&got)
					if err == nil && got != len(param) {
						err = fmt.Errorf("got %d, want %d", got, len(param))
					}
					results[i] = result{time.Since(start) - deadline, err}
				}()
				time.Sleep(2 * time.Millisecond)
			}
			wg.Wait()
			if err := <-head; err != nil {
				t.Fatalf("head: %v", err)
			}
			worst := -1
			for i, r := range results {
				if r.err != nil && !errors.Is(r.err, context.DeadlineExceeded) {
					t.Errorf("caller %d: %v; want its own result or context.DeadlineExceeded", i, r.err)
				}
				if worst < 0 || r.late > results[worst].late {
					worst = i
				}
			}
			if r := results[worst]; r.late > 500*time.Millisecond {
				t.Errorf("caller %d returned %v after its deadline (%v), the head's statement sleeping %v (err %v)", worst, r.late.Round(time.Millisecond), deadline, sleep, r.err)
			}
			var v int
			if err := c.QueryRow(bg, "SELECT $1::int", 4242).Scan(&v); err != nil || v != 4242 {
				t.Fatalf("after: %d, %v", v, err)
			}
		})
	}
}

// TestWriteLargeRepliesNoDeadlock: many goroutines on one Conn send 40 KiB
// parameters whose replies are several times larger. A caller that went
// on writing others' bytes after its own, waiting for the socket, would
// block in Write once the server, whose output nobody reads, stops
// reading; if its own reply is the one to read, the connection
// deadlocks. Every answer must come, and be the caller's own.
func TestWriteLargeRepliesNoDeadlock(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for name, dsn := range transportDSNs() {
		for _, kind := range []string{"background", "cancelable"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				c := connect(t, dsn)
				ctx := context.Background()
				if kind == "cancelable" {
					ctx = testCtx(t)
				}
				defer deadlockWatchdog(t, c, 20*time.Second)()
				param := strings.Repeat("q", 40<<10)
				var wg sync.WaitGroup
				for g := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range 8 {
							id := g*1000 + i
							var got int
							var s string
							err := c.QueryRow(ctx, "SELECT $1::int, repeat($2::text, 8) || $1::text", id, param).Scan(&got, &s)
							if want := 8*len(param) + len(fmt.Sprint(id)); err == nil && (got != id || len(s) != want || !strings.HasSuffix(s, fmt.Sprint(id))) {
								err = fmt.Errorf("got (%d, %d bytes), want (%d, %d bytes ending in the id)", got, len(s), id, want)
							}
							if err != nil {
								t.Errorf("goroutine %d, query %d: %v", g, i, err)
								return
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}

// notReadingServer starts a fake server that accepts the session, runs
// first (when not nil; false ends the session) and then reads nothing
// more until the test ends.
func notReadingServer(t *testing.T, first func(c net.Conn) bool) string {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return fakeServer(t, func(_ *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		if first != nil && !first(c) {
			return
		}
		<-stop
	})
}

// TestFakeServerNotReadingDeadline: a server that stops reading leaves a
// large statement unwritten; its caller still returns at its deadline
// (the write is left to a flusher while the caller waits for the reply).
func TestFakeServerNotReadingDeadline(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	c := connect(t, notReadingServer(t, nil)+" cancel_timeout=1s")
	sql := "SELECT '" + strings.Repeat("x", 24<<20) + "'"
	// A deadline well past the time the 24 MiB text takes to scan and
	// encode (-race): what is timed is the wait in Write.
	startDeadlineCall("Exec 24 MiB", 3*time.Second, func(ctx context.Context) error {
		_, err := c.Exec(ctx, sql)
		return err
	}).checkDeadline(t)
}

// TestFakeServerNotReadingReaderArg: a ReaderArg is copied to the socket
// by its caller's goroutine; a server that stops reading cannot keep the
// caller past its deadline (the write is stopped, and the connection,
// holding half a message, closed).
func TestFakeServerNotReadingReaderArg(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	dsn := notReadingServer(t, func(c net.Conn) bool {
		// Describe the statement: one bytea parameter, no result.
		for {
			typ, _, err := wire.ReadFrontendMessage(c, false)
			if err != nil {
				return false
			}
			if typ == wire.MsgSync {
				break
			}
		}
		out := append([]byte(nil), '1', 0, 0, 0, 4) // ParseComplete
		out, _ = wire.AppendParameterDescription(out, wire.ParameterDescription{OIDs: []uint32{17}})
		out = append(out, 'n', 0, 0, 0, 4) // NoData
		out = wire.AppendReadyForQuery(out, 'I')
		_, err := c.Write(out)
		return err == nil
	})
	c := connect(t, dsn+" cancel_timeout=1s")
	const size = 64 << 20
	call := startDeadlineCall("Exec with a 64 MiB ReaderArg", 2*time.Second, func(ctx context.Context) error {
		_, err := c.Exec(ctx, "SELECT $1", session.ReaderArg(io.LimitReader(zeroReader{}, size), size))
		return err
	})
	call.checkDeadline(t)
}

// zeroReader reads zero bytes, for ever.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
