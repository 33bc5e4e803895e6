package pgline

// Tests against the scripted fake server (fakeserver_test.go) for two
// promises a pipelined connection makes:
//
//   - once it fails, nobody queued on it gets a result: bytes left over
//     from a malformed reply are never read as the next request's reply;
//   - a ctx deadline is kept even when the server stops answering
//     (silence, an endless stream of notices, an unanswered cancel).
//
// The server sends only what a real PostgreSQL never sends: malformed
// replies, silence, notices without end.

import (
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

// fakeIntSQL is the statement with an argument the fake server runs: one
// int4 column holding 1, whatever the argument.
const fakeIntSQL = "SELECT $1::int4"

// deadlineSlack is how long after its ctx deadline a statement may return
// (the requirement is 100 ms; the rest is for a loaded machine).
const deadlineSlack = 150 * time.Millisecond

// fakeAccept reads what opens a connection to the fake server: an
// SSLRequest (answered 'N'), then either a StartupMessage, answered with a
// successful startup, or a CancelRequest (cancel is then true: nothing is
// answered).
func fakeAccept(c net.Conn) (cancel bool, err error) {
	for {
		_, body, err := wire.ReadFrontendMessage(c, true)
		if err != nil {
			return false, err
		}
		code, err := wire.StartupCode(body)
		if err != nil {
			return false, err
		}
		switch code {
		case wire.SSLRequestCode:
			if _, err := c.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case wire.CancelRequestCode:
			return true, nil
		default:
			_, err := c.Write(authOKReady())
			return false, err
		}
	}
}

// fakeIntBackend answers requests as a server would whose every statement
// returns one row of one int4 column, v, holding 1.
type fakeIntBackend struct {
	c      net.Conn
	params int   // parameters of the statement last parsed
	format int16 // result format of the portal last bound
}

// next reads the client's messages up to the end of one request (Sync,
// or a simple Query) and returns the reply a server would send to them.
// It returns io.EOF at Terminate.
func (b *fakeIntBackend) next() ([]byte, error) {
	var reply []byte
	for {
		typ, body, err := wire.ReadFrontendMessage(b.c, false)
		if err != nil {
			return nil, err
		}
		switch typ {
		case wire.MsgQuery:
			sql, err := wire.ParseQuery(body)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(sql) == "" {
				reply, _ = wire.AppendEmpty(reply, wire.MsgEmptyQueryResponse)
			} else {
				reply = fakeIntRow(fakeIntRowDesc(reply, 0), 0, 1)
			}
			return wire.AppendReadyForQuery(reply, 'I'), nil
		case wire.MsgParse:
			p, err := wire.ParseParse(body)
			if err != nil {
				return nil, err
			}
			b.params = strings.Count(p.SQL, "$")
			reply, _ = wire.AppendEmpty(reply, wire.MsgParseComplete)
		case wire.MsgBind:
			bind, err := wire.ParseBind(body)
			if err != nil {
				return nil, err
			}
			b.format = 0
			if len(bind.ResultFormats) > 0 {
				b.format = bind.ResultFormats[0]
			}
			reply, _ = wire.AppendEmpty(reply, wire.MsgBindComplete)
		case wire.MsgDescribe:
			d, err := wire.ParseDescribe(body)
			if err != nil {
				return nil, err
			}
			if d.Kind == 'S' {
				oids := make([]uint32, b.params)
				for i := range oids {
					oids[i] = 23 // int4
				}
				reply, _ = wire.AppendParameterDescription(reply, wire.ParameterDescription{OIDs: oids})
				reply = fakeIntRowDesc(reply, 0)
			} else {
				reply = fakeIntRowDesc(reply, b.format)
			}
		case wire.MsgExecute:
			reply = fakeIntRow(reply, b.format, 1)
		case wire.MsgClose:
			reply, _ = wire.AppendEmpty(reply, wire.MsgCloseComplete)
		case wire.MsgSync:
			return wire.AppendReadyForQuery(reply, 'I'), nil
		case wire.MsgTerminate:
			return nil, io.EOF
		}
	}
}

// serve answers every request until the client leaves.
func (b *fakeIntBackend) serve() {
	for {
		reply, err := b.next()
		if err != nil {
			return
		}
		if _, err := b.c.Write(reply); err != nil {
			return
		}
	}
}

// fakeIntRowDesc appends the RowDescription of the column v, int4, sent in
// format.
func fakeIntRowDesc(dst []byte, format int16) []byte {
	dst, _ = wire.AppendRowDescription(dst, []wire.FieldDescription{{
		Name: "v", DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1, Format: format,
	}})
	return dst
}

// fakeIntRow appends a DataRow of cols columns, each holding the int4 1 in
// format, and the CommandComplete of a one-row SELECT.
func fakeIntRow(dst []byte, format int16, cols int) []byte {
	v := []byte("1")
	if format == 1 {
		v = []byte{0, 0, 0, 1}
	}
	vals := make([][]byte, cols)
	for i := range vals {
		vals[i] = v
	}
	dst, _ = wire.AppendDataRow(dst, vals)
	dst, _ = wire.AppendCommandComplete(dst, "SELECT 1")
	return dst
}

// fakeErrorReply is the reply to Parse, Bind, Describe(portal), Execute,
// Sync when Execute fails with the ErrorResponse errMsg.
func fakeErrorReply(format int16, errMsg []byte) []byte {
	b, _ := wire.AppendEmpty(nil, wire.MsgParseComplete)
	b, _ = wire.AppendEmpty(b, wire.MsgBindComplete)
	b = fakeIntRowDesc(b, format)
	b = append(b, errMsg...)
	return wire.AppendReadyForQuery(b, 'I')
}

// fakeErrorMsg is an ErrorResponse with every field but those drop
// clears.
func fakeErrorMsg(drop func(*wire.ErrorFields)) []byte {
	f := wire.ErrorFields{Severity: "ERROR", SeverityV: "ERROR", Code: "XX000", Message: "boom"}
	drop(&f)
	b, _ := wire.AppendErrorFields(nil, wire.MsgErrorResponse, f)
	return b
}

// TestFakeServerFailureFailsPipeline: the first of six pipelined
// requests gets a malformed reply, and the five behind it their normal
// replies. The malformed reply is a ProtocolError that closes the
// connection, and each request behind it, and any request made
// afterwards, fails with an error wrapping that ProtocolError: the bytes
// after the malformed message are never taken as a reply.
func TestFakeServerFailureFailsPipeline(t *testing.T) {
	cases := []struct {
		name string
		// reply is the reply to the first request (Parse, Bind,
		// Describe(portal), Execute, Sync), whose Bind asked for format.
		reply func(format int16) []byte
	}{
		{"datarow-more-columns", func(f int16) []byte {
			b, _ := wire.AppendEmpty(nil, wire.MsgParseComplete)
			b, _ = wire.AppendEmpty(b, wire.MsgBindComplete)
			b = fakeIntRow(fakeIntRowDesc(b, f), f, 2)
			return wire.AppendReadyForQuery(b, 'I')
		}},
		{"datarow-column-past-end", func(f int16) []byte {
			b, _ := wire.AppendEmpty(nil, wire.MsgParseComplete)
			b, _ = wire.AppendEmpty(b, wire.MsgBindComplete)
			b = fakeIntRowDesc(b, f)
			// One column of 100 bytes, of which the message holds 1.
			b = append(b, rawMsg(wire.MsgDataRow, 4+2+4+1, []byte{0, 1, 0, 0, 0, 100, 'x'})...)
			b, _ = wire.AppendCommandComplete(b, "SELECT 1")
			return wire.AppendReadyForQuery(b, 'I')
		}},
		{"error-empty", func(f int16) []byte {
			return fakeErrorReply(f, rawMsg(wire.MsgErrorResponse, 5, []byte{0}))
		}},
		{"error-no-severity", func(f int16) []byte {
			return fakeErrorReply(f, fakeErrorMsg(func(e *wire.ErrorFields) { e.Severity, e.SeverityV = "", "" }))
		}},
		{"error-no-sqlstate", func(f int16) []byte {
			return fakeErrorReply(f, fakeErrorMsg(func(e *wire.ErrorFields) { e.Code = "" }))
		}},
		{"error-no-message", func(f int16) []byte {
			return fakeErrorReply(f, fakeErrorMsg(func(e *wire.ErrorFields) { e.Message = "" }))
		}},
		{"ready-status-X", func(f int16) []byte {
			b, _ := wire.AppendEmpty(nil, wire.MsgParseComplete)
			b, _ = wire.AppendEmpty(b, wire.MsgBindComplete)
			b = fakeIntRow(fakeIntRowDesc(b, f), f, 1)
			return wire.AppendReadyForQuery(b, 'X')
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var armed atomic.Bool        // the next request is the first pipelined one
			first := make(chan struct{}) // the server has read the first pipelined request
			var once sync.Once
			dsn := fakeServer(t, func(_ *testing.T, c net.Conn) {
				if cancel, err := fakeAccept(c); cancel || err != nil {
					return
				}
				b := &fakeIntBackend{c: c}
				for { // the warm-up: answered normally
					reply, err := b.next()
					if err != nil {
						return
					}
					if armed.Load() {
						break
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
				replies := tc.reply(b.format)
				once.Do(func() { close(first) })
				// Wait for the five requests behind it, so that all six
				// are queued, and answer them in one write.
				for range 5 {
					reply, err := b.next()
					if err != nil {
						return
					}
					replies = append(replies, reply...)
				}
				if _, err := c.Write(replies); err != nil {
					return
				}
				// Anything sent on this connection now must not reach
				// the server: answer it, so that it would show.
				b.serve()
			})
			c := connect(t, dsn+" statement_cache_mode=describe pipeline_sync=each")

			// Describe fakeIntSQL, so that each QueryRow below is one
			// request: Parse, Bind, Describe(portal), Execute, Sync.
			var v int32
			if err := c.QueryRow(testCtx(t), fakeIntSQL, 0).Scan(&v); err != nil || v != 1 {
				t.Fatalf("warm-up QueryRow: got %d, %v; want 1", v, err)
			}
			armed.Store(true)

			type result struct {
				i   int
				got string // what the call returned besides its error
				err error
			}
			results := make(chan result, 6)
			run := func(i int) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if i%2 == 1 {
					tag, err := c.Exec(ctx, "SELECT 1")
					results <- result{i, fmt.Sprintf("Exec: tag %q", tag.String()), err}
					return
				}
				var v int32
				err := c.QueryRow(ctx, fakeIntSQL, i).Scan(&v)
				results <- result{i, fmt.Sprintf("QueryRow: scanned %d", v), err}
			}
			go run(0)
			select {
			case <-first:
			case <-time.After(5 * time.Second):
				t.Fatal("the server did not receive the first request within 5s")
			}
			for i := 1; i <= 5; i++ {
				go run(i)
			}
			timeout := time.After(10 * time.Second)
			for range 6 {
				select {
				case r := <-results:
					var pe *ProtocolError
					if !errors.As(r.err, &pe) {
						t.Errorf("request %d (%s): got error %v, want one wrapping a *ProtocolError", r.i, r.got, r.err)
					}
				case <-timeout:
					t.Fatal("pipelined requests still running after 10s")
				}
			}
			if !c.IsClosed() {
				t.Error("connection still open after a malformed reply")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			tag, err := c.Exec(ctx, "SELECT 1")
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Errorf("Exec after the failure: got tag %q, error %v; want an error wrapping a *ProtocolError", tag.String(), err)
			}
		})
	}
}

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
