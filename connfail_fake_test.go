package pgline

// A hostile server's reply fails the pipeline: once a connection fails,
// nobody queued on it gets a result, and bytes left over from a malformed
// or cut reply are never read as the next request's reply. The scripted
// servers here (fakePG, fakeIntBackend, on fakeserver_test.go's
// fakeServer) send what a real PostgreSQL never sends: malformed replies,
// a stray ReadyForQuery, a socket closed mid-message.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// fakePG is a scripted server speaking enough of the protocol for the
// driver: startup, Parse/Describe/Bind/Execute/Sync, Query, Close. exec
// writes the reply to one Execute (or simple Query) of sql into out, or
// writes to the conn itself (after flush).
type fakePG struct {
	stopRead atomic.Bool // when set, the server stops reading (never answers again)
	exec     func(f *fakeSess, sql string)
	onCancel func(c net.Conn)
	cancels  atomic.Int32
}

// fakeSess is one session of a fakePG: out is the reply being built.
type fakeSess struct {
	c   net.Conn
	out []byte
}

func (s *fakeSess) flush() error {
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.c.Write(s.out)
	s.out = s.out[:0]
	return err
}

func (s *fakeSess) row(vals ...string) {
	var vs [][]byte
	for _, v := range vals {
		vs = append(vs, []byte(v))
	}
	s.out, _ = wire.AppendDataRow(s.out, vs)
}

func (s *fakeSess) complete(tag string) { s.out, _ = wire.AppendCommandComplete(s.out, tag) }

func (s *fakeSess) rfq() { s.out = wire.AppendReadyForQuery(s.out, 'I') }

var fakeFields = []wire.FieldDescription{{Name: "v", DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}

// serve starts the fake server and returns its DSN.
func (f *fakePG) serve(t *testing.T) string {
	return fakeServer(t, func(t *testing.T, c net.Conn) {
		c.SetDeadline(time.Now().Add(60 * time.Second))
		cancel, err := fakeAccept(c)
		if err != nil {
			return
		}
		if cancel {
			f.cancels.Add(1)
			if f.onCancel != nil {
				f.onCancel(c)
			}
			return
		}
		s := &fakeSess{c: c}
		stmts := map[string]string{}
		portal := ""
		for {
			for f.stopRead.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			typ, body, err := wire.ReadFrontendMessage(c, false)
			if err != nil {
				return
			}
			switch typ {
			case wire.MsgParse:
				p, _ := wire.ParseParse(body)
				stmts[p.Name] = p.SQL
				s.out = append(s.out, '1', 0, 0, 0, 4)
			case wire.MsgDescribe:
				d, _ := wire.ParseDescribe(body)
				_ = d
				if body[0] == 'S' {
					s.out, _ = wire.AppendParameterDescription(s.out, wire.ParameterDescription{})
				}
				s.out, _ = wire.AppendRowDescription(s.out, fakeFields)
			case wire.MsgBind:
				b, _ := wire.ParseBind(body)
				portal = stmts[b.Statement]
				s.out = append(s.out, '2', 0, 0, 0, 4)
			case wire.MsgExecute:
				f.exec(s, portal)
			case wire.MsgSync:
				s.rfq()
				if s.flush() != nil {
					return
				}
			case wire.MsgQuery:
				q, _ := wire.ParseQuery(body)
				s.out, _ = wire.AppendRowDescription(s.out, fakeFields)
				f.exec(s, q)
				s.rfq()
				if s.flush() != nil {
					return
				}
			case wire.MsgClose:
				s.out = append(s.out, '3', 0, 0, 0, 4)
			case wire.MsgTerminate:
				return
			}
		}
	})
}

// fakeVal extracts the marker value 'xxx' from "SELECT 'xxx'..." .
func fakeVal(sql string) string {
	i := strings.IndexByte(sql, '\'')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(sql[i+1:], '\'')
	return sql[i+1 : i+1+j]
}

// fakeIntSQL is the statement with an argument the fake server runs: one
// int4 column holding 1, whatever the argument.
const fakeIntSQL = "SELECT $1::int4"

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

// TestFakeServerReadyForQueryMidRows: the server sends a ReadyForQuery in
// the middle of A's rows (simple protocol, Exec) and then the rest of A's
// reply. B and C, pipelined behind A, must not get A's leftovers as their
// results.
func TestFakeServerReadyForQueryMidRows(t *testing.T) {
	f := &fakePG{exec: func(s *fakeSess, sql string) {
		v := fakeVal(sql)
		if v == "A" {
			s.row("A1")
			s.rfq() // hostile
			s.row("A2")
			s.complete("SELECT 1001")
			return
		}
		s.row(v)
		n := 0
		fmt.Sscanf(v, "%d", &n)
		s.complete("SELECT " + strconv.Itoa(n))
	}}
	dsn := f.serve(t)
	c := connect(t, dsn)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	res := make([]string, 4)
	errs := make([]error, 4)
	for i, v := range []string{"A", "7", "8", "9"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tag, err := c.Exec(ctx, "SELECT '"+v+"'")
			res[i], errs[i] = tag.String(), err
		}()
		time.Sleep(20 * time.Millisecond) // keep the order
	}
	wg.Wait()
	bad := false
	for i, v := range []string{"A", "7", "8", "9"} {
		t.Logf("%s: tag=%q err=%v", v, res[i], errs[i])
		if i > 0 && errs[i] == nil && res[i] != "SELECT "+v {
			t.Errorf("request %s got someone else's result %q", v, res[i])
			bad = true
		}
		if i == 0 && errs[i] == nil {
			t.Errorf("A got success %q from a reply cut by a stray ReadyForQuery", res[i])
		}
	}
	_ = bad
}

// TestFakeServerReadyForQueryMidRowsExtended: as above with QueryRow
// (extended protocol).
func TestFakeServerReadyForQueryMidRowsExtended(t *testing.T) {
	f := &fakePG{exec: func(s *fakeSess, sql string) {
		v := fakeVal(sql)
		if v == "A" {
			s.rfq() // hostile: before any row of A
			s.row("A-leftover")
			s.complete("SELECT 1")
			return
		}
		s.row(v)
		s.complete("SELECT 1")
	}}
	dsn := f.serve(t)
	c := connect(t, dsn)
	ctx := testCtx(t)
	vals := []string{"A", "B", "C", "D"}
	// prepare all first so that the runs pipeline
	for _, v := range vals {
		if _, err := c.Prepare(ctx, "SELECT '"+v+"'"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	res := make([]string, len(vals))
	errs := make([]error, len(vals))
	for i, v := range vals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.QueryRow(ctx, "SELECT '"+v+"'").Scan(&res[i])
		}()
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for i, v := range vals {
		t.Logf("%s: got=%q err=%v", v, res[i], errs[i])
		if errs[i] == nil && res[i] != v {
			t.Errorf("request %s got someone else's result %q", v, res[i])
		}
	}
}

// TestFakeServerCloseMidMessage: the server closes the socket in the middle
// of A's DataRow; A, B, C must all get errors (not successes).
func TestFakeServerCloseMidMessage(t *testing.T) {
	f := &fakePG{}
	f.exec = func(s *fakeSess, sql string) {
		v := fakeVal(sql)
		if v == "A" {
			s.row("A1")
			msg, _ := wire.AppendDataRow(nil, [][]byte{[]byte("A2xxxxxxxxx")})
			s.out = append(s.out, msg[:9]...)
			s.flush()
			s.c.Close()
			return
		}
		s.row(v)
		s.complete("SELECT 1")
	}
	dsn := f.serve(t)
	c := connect(t, dsn)
	ctx := testCtx(t)
	for _, v := range []string{"A", "B", "C"} {
		c.Prepare(ctx, "SELECT '"+v+"'")
	}
	var wg sync.WaitGroup
	for i, v := range []string{"A", "B", "C"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			var got string
			rows, err := c.Query(ctx, "SELECT '"+v+"'")
			if err == nil {
				for rows.Next() {
					rows.Scan(&got)
				}
				err = rows.Err()
			}
			t.Logf("%s: got %q err=%v", v, got, err)
			if err == nil {
				t.Errorf("%s succeeded", v)
			}
			if v != "A" && got != "" && got != v {
				t.Errorf("%s got %q", v, got)
			}
		}()
	}
	wg.Wait()
}
