package pgline

// Deadlines kept against a scripted fake server (fakeserver_test.go) that
// stops answering: silence, an endless stream of notices, a CancelRequest
// never answered, a huge row sent slowly. Each statement returns its own
// ctx's error at its deadline, and a connection whose cancelled statement
// never ends is closed cancel_timeout later.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// deadlineSlack is how long after its ctx deadline a statement may return
// (the requirement is 100 ms; the rest is for a loaded machine).
const deadlineSlack = 150 * time.Millisecond

// silentServer starts a fake server that completes the startup and
// then reads every request and answers none. got receives a value (when
// there is room) for each request it reads, cancels the time each
// CancelRequest arrives. A CancelRequest connection is closed once read,
// as a server does, with no effect, or, when holdCancel is set, held open
// without an answer.
func silentServer(t *testing.T, holdCancel bool) (dsn string, got chan struct{}, cancels chan time.Time) {
	got = make(chan struct{}, 16)
	cancels = make(chan time.Time, 16)
	dsn = fakeServer(t, func(_ *testing.T, c net.Conn) {
		cancel, err := fakeAccept(c)
		if err != nil {
			return
		}
		if !cancel {
			readSilently(c, got)
			return
		}
		select {
		case cancels <- time.Now():
		default:
		}
		if holdCancel {
			io.Copy(io.Discard, c)
		}
	})
	return dsn, got, cancels
}

// readSilently reads requests until the client leaves, answering
// none, and notes each one on got when there is room.
func readSilently(c net.Conn, got chan<- struct{}) {
	for {
		typ, _, err := wire.ReadFrontendMessage(c, false)
		if err != nil {
			return
		}
		if typ == wire.MsgSync || typ == wire.MsgQuery {
			select {
			case got <- struct{}{}:
			default:
			}
		}
	}
}

// deadlineCall is a statement running in its own goroutine with a ctx
// deadline.
type deadlineCall struct {
	name     string
	start    time.Time
	deadline time.Duration // from start
	done     chan deadlineCallResult
}

type deadlineCallResult struct {
	err  error
	late time.Duration // time from the ctx deadline to the return
}

// startDeadlineCall runs op with a ctx whose deadline is d from now.
func startDeadlineCall(name string, d time.Duration, op func(ctx context.Context) error) *deadlineCall {
	call := &deadlineCall{name: name, start: time.Now(), deadline: d, done: make(chan deadlineCallResult, 1)}
	ctx, cancel := context.WithDeadline(context.Background(), call.start.Add(d))
	go func() {
		defer cancel()
		err := op(ctx)
		call.done <- deadlineCallResult{err, time.Since(call.start) - d}
	}()
	return call
}

// sleepExec returns an op running a simple-protocol statement on c.
func sleepExec(c *Conn) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := c.Exec(ctx, "SELECT pg_sleep(60)")
		return err
	}
}

// wait waits for the call, at most 2 s past its deadline, and returns
// false when it has not returned by then.
func (call *deadlineCall) wait() (deadlineCallResult, bool) {
	select {
	case r := <-call.done:
		return r, true
	default:
	}
	select {
	case r := <-call.done:
		return r, true
	case <-time.After(time.Until(call.start.Add(call.deadline + 2*time.Second))):
		return deadlineCallResult{}, false
	}
}

// checkDeadline reports an error unless the call returned its own ctx's
// DeadlineExceeded at its deadline: not before, and at most deadlineSlack
// after.
func (call *deadlineCall) checkDeadline(t *testing.T) {
	t.Helper()
	r, ok := call.wait()
	if !ok {
		t.Errorf("%s (deadline %v): still running %v after its deadline", call.name, call.deadline, 2*time.Second)
		return
	}
	t.Logf("%s (deadline %v): returned %v after its deadline: %v", call.name, call.deadline, r.late, r.err)
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("%s: got error %v, want one wrapping context.DeadlineExceeded", call.name, r.err)
	}
	if r.late < 0 {
		t.Errorf("%s: returned %v before its deadline", call.name, -r.late)
	}
	if r.late > deadlineSlack {
		t.Errorf("%s: returned %v after its deadline, want at most %v", call.name, r.late, deadlineSlack)
	}
}

// TestFakeServerSilentDeadline: a statement to a server that says nothing
// after receiving it returns its ctx's DeadlineExceeded at the deadline,
// not once the cancel timeout (10 s) has passed; both when it is a simple
// Query and when it is the Parse/Describe of a new statement.
func TestFakeServerSilentDeadline(t *testing.T) {
	ops := []struct {
		name string
		op   func(c *Conn) func(ctx context.Context) error
	}{
		{"Exec", sleepExec},
		{"QueryRow-describe", func(c *Conn) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				var v int32
				return c.QueryRow(ctx, fakeIntSQL, 1).Scan(&v)
			}
		}},
		{"CopyTo", func(c *Conn) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.CopyTo(ctx, io.Discard, "COPY t TO STDOUT")
				return err
			}
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			dsn, _, _ := silentServer(t, false)
			c := connect(t, dsn)
			startDeadlineCall(o.name, 500*time.Millisecond, o.op(c)).checkDeadline(t)
		})
	}
}

// TestFakeServerSilentDeadlinePipelined: behind a statement the server
// never answers, three pipelined statements with later deadlines each
// return their own DeadlineExceeded at their own deadline: not earlier
// with another statement's error, not later.
func TestFakeServerSilentDeadlinePipelined(t *testing.T) {
	dsn, got, _ := silentServer(t, false)
	c := connect(t, dsn)
	head := startDeadlineCall("head", 500*time.Millisecond, sleepExec(c))
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not receive the first statement within 5s")
	}
	calls := []*deadlineCall{head}
	for _, d := range []time.Duration{700 * time.Millisecond, 900 * time.Millisecond, 1100 * time.Millisecond} {
		calls = append(calls, startDeadlineCall(fmt.Sprintf("behind(%v)", d), d, sleepExec(c)))
	}
	for _, call := range calls {
		call.checkDeadline(t)
	}
}

// TestFakeServerNoticeFloodDeadline: a server that answers a statement
// with a NoticeResponse every millisecond, for ever, does not keep the
// statement past its ctx deadline.
func TestFakeServerNoticeFloodDeadline(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	notice, _ := wire.AppendErrorFields(nil, wire.MsgNoticeResponse, wire.ErrorFields{
		Severity: "NOTICE", SeverityV: "NOTICE", Code: "00000", Message: "still working",
	})
	dsn := fakeServer(t, func(_ *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		for {
			typ, _, err := wire.ReadFrontendMessage(c, false)
			if err != nil {
				return
			}
			if typ == wire.MsgQuery {
				break
			}
		}
		go io.Copy(io.Discard, c) // whatever else comes, unanswered
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write(notice); err != nil {
				return
			}
		}
	})
	c := connect(t, dsn)
	startDeadlineCall("Exec", 500*time.Millisecond, sleepExec(c)).checkDeadline(t)
}

// TestFakeServerCancelUnanswered: with cancel_timeout=1s, when neither
// the statement nor its CancelRequest is ever answered, the connection is
// closed about CancelTimeout after the cancel, and a statement issued then
// fails at once.
func TestFakeServerCancelUnanswered(t *testing.T) {
	const deadline, cancelTimeout = 500 * time.Millisecond, time.Second
	dsn, _, cancels := silentServer(t, true)
	c := connect(t, dsn+" cancel_timeout=1s")
	call := startDeadlineCall("Exec", deadline, sleepExec(c))
	limit := call.start.Add(deadline + cancelTimeout + time.Second)
	// Poll past the limit, to tell a late close from none.
	for !c.IsClosed() && time.Now().Before(limit.Add(2*time.Second)) {
		time.Sleep(5 * time.Millisecond)
	}
	closedAt := time.Now()
	select {
	case at := <-cancels:
		t.Logf("the CancelRequest arrived %v after the statement's deadline", at.Sub(call.start)-deadline)
	default:
		t.Logf("no CancelRequest arrived")
	}
	if !c.IsClosed() {
		t.Fatalf("connection still open %v after the statement started (deadline %v, cancel_timeout %v)",
			closedAt.Sub(call.start), deadline, cancelTimeout)
	}
	t.Logf("connection closed %v after the statement started", closedAt.Sub(call.start))
	if closedAt.After(limit) {
		t.Errorf("connection closed %v after the statement started, want within %v (deadline + cancel_timeout + 1s)",
			closedAt.Sub(call.start), limit.Sub(call.start))
	}
	if r, ok := call.wait(); ok {
		t.Logf("the statement returned %v after its deadline: %v", r.late, r.err)
	} else {
		t.Logf("the statement is still running")
	}
	after := startDeadlineCall("Exec after the close", 5*time.Second, sleepExec(c))
	r, ok := after.wait()
	switch {
	case !ok:
		t.Fatal("a statement on the closed connection is still running after 7s")
	case r.err == nil:
		t.Fatal("a statement on the closed connection succeeded")
	case r.late > -4*time.Second:
		t.Fatalf("a statement on the closed connection took %v to fail: %v", 5*time.Second+r.late, r.err)
	}
	t.Logf("a statement on the closed connection failed: %v", r.err)
}

// TestFakeServerPoolReplacesUnanswering: through a Pool of one
// connection, once the connection whose statement and cancel are never
// answered has been closed (cancel_timeout=1s), the next statement gets a
// new connection and succeeds.
func TestFakeServerPoolReplacesUnanswering(t *testing.T) {
	const deadline, cancelTimeout = 500 * time.Millisecond, time.Second
	var conns atomic.Int32             // StartupMessages received
	firstClosed := make(chan struct{}) // the client closed the first connection
	dsn := fakeServer(t, func(_ *testing.T, c net.Conn) {
		cancel, err := fakeAccept(c)
		if err != nil {
			return
		}
		if cancel {
			io.Copy(io.Discard, c) // held open, unanswered
			return
		}
		if conns.Add(1) == 1 {
			readSilently(c, nil)
			close(firstClosed)
			return
		}
		(&fakeIntBackend{c: c}).serve()
	})
	p, err := NewPool(testCtx(t), dsn+" pool_max_conns=1 cancel_timeout=1s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !poolClosesWithin(p, 5*time.Second) {
			t.Error("Pool.Close still waiting after 5s")
		}
	})
	call := startDeadlineCall("Pool.Exec", deadline, func(ctx context.Context) error {
		_, err := p.Exec(ctx, "SELECT pg_sleep(60)")
		return err
	})
	// How soon it is closed is TestFakeServerCancelUnanswered's
	// business: here it only has to be, before the next statement.
	select {
	case <-firstClosed:
		t.Logf("first connection closed %v after the statement started", time.Since(call.start))
	case <-time.After(time.Until(call.start.Add(deadline + cancelTimeout + 3*time.Second))):
		t.Fatalf("the unanswering connection still open %v after the statement started", time.Since(call.start))
	}
	if r, ok := call.wait(); ok {
		t.Logf("the statement returned %v after its deadline: %v", r.late, r.err)
	}
	next := startDeadlineCall("Pool.QueryRow", 5*time.Second, func(ctx context.Context) error {
		var v int32
		if err := p.QueryRow(ctx, "SELECT 1").Scan(&v); err != nil {
			return err
		}
		if v != 1 {
			return fmt.Errorf("scanned %d, want 1", v)
		}
		return nil
	})
	r, ok := next.wait()
	if !ok {
		t.Fatal("the next Pool statement is still running after 7s")
	}
	if r.err != nil {
		t.Fatalf("the next Pool statement: %v (server saw %d connections)", r.err, conns.Load())
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}

// TestFakeServerConnectDeadlineWrapsCtx: a connection attempt that times
// out at the ctx's deadline (the server accepts and says nothing) fails
// with an error that wraps context.DeadlineExceeded, not only "i/o
// timeout".
func TestFakeServerConnectDeadlineWrapsCtx(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	dsn := fakeServer(t, func(_ *testing.T, c net.Conn) { <-stop })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Connect(ctx, dsn)
	var ce *ConnectError
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect: %v; want a *ConnectError wrapping context.DeadlineExceeded", err)
	}
}

// TestFakeServerCancelNeverAnsweredQueued: A's statement never ends and
// the server never answers its CancelRequest (the cancel connection is
// held open without a word). B and C, queued behind A, must return by
// their own deadlines, and a statement made once cancel_timeout has passed
// fails (the connection was closed).
func TestFakeServerCancelNeverAnsweredQueued(t *testing.T) {
	f := &fakePG{}
	hold := make(chan struct{})
	f.onCancel = func(c net.Conn) { <-hold }
	f.exec = func(s *fakeSess, sql string) {
		v := fakeVal(sql)
		if v == "A" {
			s.row("A1")
			s.flush()
			<-hold // the statement never ends
			return
		}
		s.row(v)
		s.complete("SELECT 1")
	}
	dsn := f.serve(t)
	defer close(hold)
	c := connect(t, dsn+" cancel_timeout=2s")
	defer c.Close()
	for _, v := range []string{"A", "B", "C"} {
		c.Prepare(testCtx(t), "SELECT '"+v+"'")
	}
	actx, acancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer acancel()
	rows, err := c.Query(actx, "SELECT 'A'")
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		v   string
		err error
		dur time.Duration
		ddl time.Duration
	}
	out := make(chan res, 2)
	for i, v := range []string{"B", "C"} {
		d := time.Duration(400+400*i) * time.Millisecond
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			s := time.Now()
			var got string
			err := c.QueryRow(ctx, "SELECT '"+v+"'").Scan(&got)
			out <- res{got, err, time.Since(s), d}
		}()
	}
	s := time.Now()
	for rows.Next() {
	}
	t.Logf("A: Err=%v after %v", rows.Err(), time.Since(s))
	if time.Since(s) > 400*time.Millisecond {
		t.Errorf("A overran its 200ms deadline: %v", time.Since(s))
	}
	for range 2 {
		r := <-out
		t.Logf("got %q err=%v after %v (deadline %v)", r.v, r.err, r.dur, r.ddl)
		if r.dur > r.ddl+200*time.Millisecond {
			t.Errorf("overran deadline %v: %v", r.ddl, r.dur)
		}
		if r.err == nil {
			t.Errorf("success %q from a connection whose head never ended?", r.v)
		}
	}
	// A later request: must fail cleanly (connection closed after cancel_timeout) within bounded time.
	time.Sleep(2500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = c.Exec(ctx, "SELECT 'D'")
	t.Logf("D after cancel_timeout: %v closed=%v cancels=%d", err, c.IsClosed(), f.cancels.Load())
	if err == nil {
		t.Errorf("D succeeded on a connection whose head never ended")
	}
}

// TestFakeServerNoticeFloodAfterCancel: the server answers the cancel (closes
// the cancel connection) but then floods notices and never ends A.
func TestFakeServerNoticeFloodAfterCancel(t *testing.T) {
	f := &fakePG{}
	cancelled := make(chan struct{})
	var once sync.Once
	f.onCancel = func(c net.Conn) { once.Do(func() { close(cancelled) }) }
	f.exec = func(s *fakeSess, sql string) {
		v := fakeVal(sql)
		if v == "A" {
			s.row("A1")
			s.flush()
			<-cancelled
			var notice []byte
			notice, _ = wire.AppendErrorFields(notice, wire.MsgNoticeResponse, wire.ErrorFields{Severity: "NOTICE", SeverityV: "NOTICE", Code: "00000", Message: "flood"})
			deadline := time.Now().Add(6 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := s.c.Write(bytes.Repeat(notice, 100)); err != nil {
					return
				}
			}
			return
		}
		s.row(v)
		s.complete("SELECT 1")
	}
	dsn := f.serve(t)
	c := connect(t, dsn+" cancel_timeout=1s")
	defer c.Close()
	for _, v := range []string{"A", "B"} {
		c.Prepare(testCtx(t), "SELECT '"+v+"'")
	}
	actx, acancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer acancel()
	rows, err := c.Query(actx, "SELECT 'A'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	t.Logf("A: %v", rows.Err())
	s := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var got string
	err = c.QueryRow(ctx, "SELECT 'B'").Scan(&got)
	t.Logf("B: %q %v after %v, closed=%v", got, err, time.Since(s), c.IsClosed())
	if err == nil && got != "B" {
		t.Errorf("B got %q", got)
	}
	if time.Since(s) > 3200*time.Millisecond {
		t.Errorf("B overran its deadline")
	}
	if !c.IsClosed() {
		t.Errorf("connection not closed although the cancelled statement never ended (notice flood resets the timer?)")
	}
}

// TestFakeServerSlowHugeDataRow: A's row is larger than the read buffer and
// arrives byte by byte; A's ctx ends while Scan reads it. B behind must get
// an error or its own result, by its deadline.
func TestFakeServerSlowHugeDataRow(t *testing.T) {
	for _, mode := range []string{"scan", "close"} {
		t.Run(mode, func(t *testing.T) {
			f := &fakePG{}
			f.exec = func(s *fakeSess, sql string) {
				v := fakeVal(sql)
				if v == "A" {
					s.flush()
					size := 200 << 10
					msg, _ := wire.AppendDataRow(nil, [][]byte{bytes.Repeat([]byte("a"), size)})
					// header and first 70 KiB fast, then slowly
					s.c.Write(msg[:70<<10])
					for i := 70 << 10; i < len(msg); i += 1024 {
						if _, err := s.c.Write(msg[i:min(i+1024, len(msg))]); err != nil {
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
					s.complete("SELECT 1")
					return
				}
				s.row(v)
				s.complete("SELECT 1")
			}
			dsn := f.serve(t)
			c := connect(t, dsn+" cancel_timeout=2s")
			defer c.Close()
			for _, v := range []string{"A", "B", "C"} {
				c.Prepare(testCtx(t), "SELECT '"+v+"'")
			}
			actx, acancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer acancel()
			s := time.Now()
			rows, err := c.Query(actx, "SELECT 'A'")
			if err != nil {
				t.Fatal(err)
			}
			out := make(chan string, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				var got string
				s := time.Now()
				err := c.QueryRow(ctx, "SELECT 'B'").Scan(&got)
				out <- fmt.Sprintf("B: %q err=%v after %v", got, err, time.Since(s))
			}()
			if rows.Next() {
				if mode == "scan" {
					var v string
					err := rows.Scan(&v)
					t.Logf("A Scan: len=%d err=%v after %v", len(v), err, time.Since(s))
				}
			}
			rows.Close()
			t.Logf("A: Err=%v after %v (ctx 150ms)", rows.Err(), time.Since(s))
			if time.Since(s) > 350*time.Millisecond {
				t.Errorf("A overran its ctx deadline: %v", time.Since(s))
			}
			if !errors.Is(rows.Err(), context.DeadlineExceeded) {
				t.Errorf("A's error does not wrap its ctx's: %v", rows.Err())
			}
			r := <-out
			t.Log(r)
			t.Logf("closed=%v", c.IsClosed())
			if !strings.HasPrefix(r, `B: "B" err=<nil>`) {
				t.Errorf("B did not get its own result: %s", r)
			}
		})
	}
}
