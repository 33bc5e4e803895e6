package pgline

// Tests from an audit of the reply reader and the cancel rules (reply.go),
// trying to make a caller receive another caller's outcome: ctx storms on a
// Conn and a Pool, killed backends, hostile servers, big rows, doomed
// transactions.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

func auditConn(t *testing.T, extra ...string) *Conn {
	t.Helper()
	c, err := Connect(testCtx(t), srv.DSN(extra...))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitRunning waits until the backend pid runs a statement containing
// frag (pg_stat_activity), up to 5 s.
func waitRunning(t *testing.T, admin *Conn, pid uint32, frag string) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := admin.QueryRow(testCtx(t), "SELECT count(*)::int FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%' || $2 || '%'", int(pid), frag).Scan(&n)
		if err != nil {
			t.Logf("waitRunning: %v", err)
			return false
		}
		if n > 0 {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

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

func (f *fakePG) serve(t *testing.T) string {
	return fakeServer(t, func(t *testing.T, c net.Conn) {
		c.SetDeadline(time.Now().Add(60 * time.Second))
		// startup or cancel
		for {
			_, body, err := wire.ReadFrontendMessage(c, true)
			if err != nil {
				return
			}
			code := binary.BigEndian.Uint32(body)
			if code == wire.SSLRequestCode {
				c.Write([]byte{'N'})
				continue
			}
			if code == wire.CancelRequestCode {
				f.cancels.Add(1)
				if f.onCancel != nil {
					f.onCancel(c)
				}
				return
			}
			break
		}
		c.Write(authOKReady())
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

// TestFakeServerReadyForQueryMidRows: the server sends a ReadyForQuery in the middle
// of A's rows (simple protocol, Exec) and then the rest of A's reply. B and
// C, pipelined behind A, must not get A's leftovers as their results.
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

// TestFakeServerReadyForQueryMidRowsExtended: as above with QueryRow (extended protocol).
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

// auditTable makes a fresh table name (id serial, k text) for tests that
// count committed effects.
func auditTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" (id serial, k text)"); err != nil {
		t.Fatal(err)
	}
}

// startAbandoned makes a driver CancelRequest happen while later requests
// are queued: A holds the head running pg_sleep(0.5), its ctx ends at 30ms,
// the drain cancels A after cancel_grace. A runs in a goroutine; the
// channel returned receives A's error. The caller queues B right after.
func startAbandoned(t *testing.T, c *Conn) chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := c.Exec(ctx, "SELECT pg_sleep(0.5) /* A */")
		done <- err
	}()
	return done
}

// TestDrainCancelDOBlockNotResent: B is a single-statement DO block that commits an
// INSERT and then fails with 57014 from its own statement_timeout, while a
// driver cancel (meant for A, queued before B) was under way since B was
// queued. B must not be sent again: the INSERT it committed would run
// twice.
func TestDrainCancelDOBlockNotResent(t *testing.T) {
	c := auditConn(t)
	ctx := testCtx(t)
	auditTable(t, c, "audit_do")
	if _, err := c.Exec(ctx, "SET statement_timeout = '600ms'"); err != nil {
		t.Fatal(err)
	}
	aDone := startAbandoned(t, c)
	time.Sleep(5 * time.Millisecond) // A first
	start := time.Now()
	_, err := c.Exec(ctx, "DO $$BEGIN INSERT INTO audit_do(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(2); END$$")
	t.Logf("A: %v", <-aDone)
	t.Logf("B: err=%v (ErrCanceledByOther=%v) after %v", err, errors.Is(err, ErrCanceledByOther), time.Since(start))
	c.Exec(ctx, "SET statement_timeout = 0")
	checkCommittedOnce(t, c, "audit_do", err)
}

// checkCommittedOnce checks that B's INSERT into table, committed inside
// its DO block, ran once, or never when a signal hit B before its COMMIT
// (PostgreSQL signals a canceled backend twice: its pid and its process
// group), and then B failed (bErr): a DO block is never sent again.
func checkCommittedOnce(t *testing.T, c *Conn, table string, bErr error) {
	t.Helper()
	var n int
	if err := c.QueryRow(testCtx(t), "SELECT count(*)::int FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("rows committed by B: %d", n)
	if n > 1 || n == 0 && bErr == nil {
		t.Errorf("B's committed INSERT ran %d times, B's error %v", n, bErr)
	}
}

// TestLateCancelDOBlockNotResent: as above, but B's 57014 comes from a
// pg_cancel_backend by another session (standing in for a cancel meant for
// A landing late) after B committed.
func TestLateCancelDOBlockNotResent(t *testing.T) {
	c := auditConn(t)
	admin := auditConn(t)
	ctx := testCtx(t)
	auditTable(t, c, "audit_do2")
	aDone := startAbandoned(t, c)
	time.Sleep(5 * time.Millisecond)
	bDone := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "DO $$BEGIN INSERT INTO audit_do2(k) VALUES ('B'); COMMIT; PERFORM pg_sleep(3); END$$")
		bDone <- err
	}()
	t.Logf("A: %v", <-aDone)
	if !waitRunning(t, admin, c.PID(), "audit_do2") {
		t.Fatal("B not running")
	}
	time.Sleep(100 * time.Millisecond)
	admin.Exec(ctx, "SELECT pg_cancel_backend($1)", int(c.PID()))
	// cancel the resends too, as they come
	for i := 0; i < 6; i++ {
		time.Sleep(150 * time.Millisecond)
		admin.Exec(ctx, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%audit_do2%' AND state = 'active'", int(c.PID()))
	}
	err := <-bDone
	t.Logf("B: err=%v (ErrCanceledByOther=%v)", err, errors.Is(err, ErrCanceledByOther))
	checkCommittedOnce(t, c, "audit_do2", err)
}

// TestDrainOwnStatementTimeoutNotOthers: B's own statement_timeout (57014)
// while a driver cancel for A was under way is B's own error: not reported
// as ErrCanceledByOther, and B is not sent again.
func TestDrainOwnStatementTimeoutNotOthers(t *testing.T) {
	for _, kind := range []string{"Exec-simple", "Exec-args", "QueryRow", "Batch"} {
		t.Run(kind, func(t *testing.T) {
			c := auditConn(t)
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, "SET statement_timeout = '400ms'"); err != nil {
				t.Fatal(err)
			}
			c.Prepare(ctx, "SELECT pg_sleep($1::float8)")
			aDone := startAbandoned(t, c)
			time.Sleep(5 * time.Millisecond)
			start := time.Now()
			var err error
			switch kind {
			case "Exec-simple":
				_, err = c.Exec(ctx, "SELECT pg_sleep(1)")
			case "Exec-args":
				_, err = c.Exec(ctx, "SELECT pg_sleep($1::float8)", 1.0)
			case "QueryRow":
				err = c.QueryRow(ctx, "SELECT pg_sleep($1::float8)", 1.0).Scan(nil)
			case "Batch":
				b := &Batch{}
				b.Queue("SELECT pg_sleep($1::float8)", 1.0)
				br := c.SendBatch(ctx, b)
				_, err = br.Exec()
				br.Close()
			}
			<-aDone
			d := time.Since(start)
			t.Logf("%s: err=%v ErrCanceledByOther=%v after %v", kind, err, errors.Is(err, ErrCanceledByOther), d)
			if errors.Is(err, ErrCanceledByOther) {
				t.Errorf("own statement_timeout reported as ErrCanceledByOther")
			}
			if d > 800*time.Millisecond {
				t.Errorf("statement that times out after 400ms (queued behind ~100ms of A) took %v: it was run again", d)
			}
		})
	}
}

// drainReplyMBs are the sizes of A's reply in
// TestDrainNoCancelAfterServerEnded, in MB.
var drainReplyMBs = []int{1, 2, 4}

// TestDrainNoCancelAfterServerEnded: A's reply (several MB) has ended on
// the server (its bytes sit in socket buffers) and B runs; A's caller
// gives up after cancel_grace. The drain must not cancel while A's reply
// is still arriving: the cancel would hit B.
func TestDrainNoCancelAfterServerEnded(t *testing.T) {
	for _, mb := range drainReplyMBs {
		for _, kind := range []string{"Batch", "QueryRow", "RowsMid"} {
			t.Run(fmt.Sprintf("%dMB-%s", mb, kind), func(t *testing.T) {
				c := auditConn(t)
				admin := auditConn(t)
				ctx := testCtx(t)
				n := mb * 1000
				asql := fmt.Sprintf("SELECT repeat('x', 1000) FROM generate_series(1, %d)", n)
				bsql := "SELECT g, pg_sleep(0.3) FROM generate_series(1, 3) g"
				c.Prepare(ctx, asql)
				c.Prepare(ctx, bsql)
				actx, acancel := context.WithCancel(context.Background())
				rows, err := c.Query(actx, asql)
				if err != nil {
					t.Fatal(err)
				}
				rows.Next()
				type res struct {
					err error
					got []int
				}
				bDone := make(chan res, 1)
				go func() {
					var r res
					switch kind {
					case "Batch":
						b := &Batch{}
						b.Queue(bsql)
						br := c.SendBatch(ctx, b)
						rr, err := br.Query()
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						if e := br.Close(); err == nil {
							err = e
						}
						r.err = err
					case "QueryRow":
						var g int
						r.err = c.QueryRow(ctx, bsql).Scan(&g, nil)
						r.got = []int{g}
					case "RowsMid":
						rr, err := c.Query(ctx, bsql)
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						r.err = err
					}
					bDone <- r
				}()
				// wait until B runs on the server: A has ended there
				ok := waitRunning(t, admin, c.PID(), "generate_series(1, 3)")
				if !ok {
					t.Logf("B never ran while A held the head (A's output did not fit the socket buffers)")
				}
				time.Sleep(150 * time.Millisecond) // > cancel_grace
				acancel()
				rows.Close()
				r := <-bDone
				t.Logf("A: %v; B: got=%v err=%v ErrCanceledByOther=%v", rows.Err(), r.got, r.err, errors.Is(r.err, ErrCanceledByOther))
				if r.err != nil {
					t.Errorf("B (ctx alive) failed because of A's cancel: %v", r.err)
				}
			})
		}
	}
}

type slowStreamWriter struct {
	n     int
	delay time.Duration
}

func (w *slowStreamWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	w.n += len(p)
	return len(p), nil
}

// TestRowsBigRowCtxEnds: A reads a 20 MB row with Scan (slow StreamTo
// writer, or *string) and its ctx ends mid-row; B and C are queued behind.
func TestRowsBigRowCtxEnds(t *testing.T) {
	for _, mode := range []string{"StreamTo", "string", "NextThenClose", "ScanAfterCtx"} {
		t.Run(mode, func(t *testing.T) {
			c := auditConn(t)
			ctx := testCtx(t)
			asql := "SELECT repeat('x', 20000000)"
			c.Prepare(ctx, asql)
			c.Prepare(ctx, "SELECT $1::int")
			actx, acancel := context.WithCancel(context.Background())
			defer acancel()
			start := time.Now()
			rows, err := c.Query(actx, asql)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := 1; i <= 2; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var got int
					err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&got)
					t.Logf("B%d: got=%d err=%v", i, got, err)
					if err != nil || got != i {
						t.Errorf("B%d (ctx alive) did not get its own result: got=%d err=%v", i, got, err)
					}
				}()
			}
			var scanErr error
			time.Sleep(20 * time.Millisecond) // B1, B2 queued
			if rows.Next() {
				if mode == "StreamTo" || mode == "string" {
					time.AfterFunc(3*time.Millisecond, acancel)
				} else {
					acancel()
				}
				switch mode {
				case "StreamTo":
					scanErr = rows.Scan(StreamTo(&slowStreamWriter{delay: 5 * time.Millisecond}))
				case "string":
					// a ctx that ends while the row is read from the socket
					var s string
					scanErr = rows.Scan(&s)
				case "ScanAfterCtx":
					<-actx.Done()
					var s string
					scanErr = rows.Scan(&s)
				case "NextThenClose":
					<-actx.Done()
				}
			}
			rows.Close()
			t.Logf("A: scan=%v Err=%v after %v", scanErr, rows.Err(), time.Since(start))
			wg.Wait()
			t.Logf("closed=%v", c.IsClosed())
		})
	}
}

type stormDB interface {
	Query(ctx context.Context, sql string, args ...any) (*Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) *Row
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
	SendBatch(ctx context.Context, b *Batch) *BatchResults
	Begin(ctx context.Context) (*Tx, error)
	CopyFrom(ctx context.Context, table Identifier, columns []string, src CopyFromSource) (int64, error)
}

type stormStats struct {
	mu       sync.Mutex
	ops      map[string]int
	problems []string
	okIDs    map[int]string // ids whose insert the caller was told succeeded
	noIDs    map[int]string // ids whose insert the caller was told did not persist (rolled back)
}

func (st *stormStats) bad(format string, args ...any) {
	st.mu.Lock()
	st.problems = append(st.problems, fmt.Sprintf(format, args...))
	st.mu.Unlock()
}

func (st *stormStats) count(k string) {
	st.mu.Lock()
	st.ops[k]++
	st.mu.Unlock()
}

// checkErr applies the rules to an error returned by an op of ctx.
func (st *stormStats) checkErr(op string, ctx context.Context, err error, ddl time.Time, hasDdl bool) {
	if hasDdl && time.Now().After(ddl.Add(200*time.Millisecond)) {
		st.bad("%s: returned %v after its deadline (err=%v)", op, time.Since(ddl), err)
	}
	if err == nil {
		return
	}
	var pgErr *PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" {
		if ctx.Err() == nil && !errors.Is(err, ErrCanceledByOther) {
			st.bad("%s: 57014 with its ctx alive, not ErrCanceledByOther: %v", op, err)
		}
		if ctx.Err() == nil && errors.Is(err, ErrCanceledByOther) {
			st.count("canceledByOther")
		}
	}
	if ctx.Err() != nil {
		if !errors.Is(err, ctx.Err()) && !errors.As(err, &pgErr) && !errors.Is(err, ErrTxClosed) && !errors.Is(err, ErrTxRolledBack) {
			st.bad("%s: ctx ended but error does not wrap it: %v", op, err)
		}
		return
	}
	// ctx alive
	if errors.Is(err, ErrClosed) || strings.Contains(err.Error(), "timeout") {
		st.bad("%s: ctx alive, connection-level error: %v", op, err)
	} else if !errors.Is(err, ErrCanceledByOther) && !errors.Is(err, ErrTxRolledBack) {
		st.bad("%s: ctx alive, unexpected error: %v", op, err)
	}
}

func stormCtx(r *rand.Rand) (context.Context, context.CancelFunc, time.Time, bool) {
	switch r.IntN(4) {
	case 0:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		return ctx, cancel, time.Time{}, false
	case 1:
		ctx, cancel := context.WithCancel(context.Background())
		d := time.Duration(r.IntN(40)) * time.Millisecond
		t := time.AfterFunc(d, cancel)
		return ctx, func() { t.Stop(); cancel() }, time.Now().Add(d), true
	default:
		d := time.Duration(r.IntN(60)) * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), d)
		return ctx, cancel, time.Now().Add(d), true
	}
}

func runStorm(t *testing.T, db stormDB, workers, opsPer int, table string, kinds []string) *stormStats {
	st := &stormStats{ops: map[string]int{}, okIDs: map[int]string{}, noIDs: map[int]string{}}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for op := 0; op < opsPer; op++ {
				id := w*100000 + op*10
				kind := kinds[r.IntN(len(kinds))]
				ctx, cancel, ddl, hasDdl := stormCtx(r)
				sleep := fmt.Sprintf("%.3f", float64(r.IntN(30))/1000)
				name := fmt.Sprintf("w%d op%d %s", w, op, kind)
				st.count(kind)
				switch kind {
				case "QueryRow":
					var got int
					err := db.QueryRow(ctx, "SELECT $1::int, pg_sleep($2::float8)", id, sleep).Scan(&got, nil)
					if err == nil && got != id {
						st.bad("%s: got %d want %d", name, got, id)
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "Query":
					n := 1 + r.IntN(300)
					rows, err := db.Query(ctx, "SELECT $1::int, g FROM generate_series(1, $2::int) g, pg_sleep($3::float8)", id, n, sleep)
					if err == nil {
						k := r.IntN(n + 2)
						i := 0
						for i < k && rows.Next() {
							i++
							var a, g int
							if err := rows.Scan(&a, &g); err != nil {
								st.bad("%s: scan: %v", name, err)
								break
							}
							if a != id || g != i {
								st.bad("%s: row %d got (%d,%d) want (%d,%d)", name, i, a, g, id, i)
							}
							if r.IntN(50) == 0 {
								time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
							}
						}
						if r.IntN(3) == 0 {
							cancel()
						}
						rows.Close()
						err = rows.Err()
						if ctx.Err() == nil && err == nil && k > n && i != n {
							st.bad("%s: got %d rows want %d", name, i, n)
						}
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "ExecArgs":
					_, err := db.Exec(ctx, "INSERT INTO "+table+"(id) SELECT $1::int FROM pg_sleep($2::float8)", id, sleep)
					if err == nil {
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "ExecSimple":
					_, err := db.Exec(ctx, fmt.Sprintf("INSERT INTO %s(id) SELECT %d FROM pg_sleep(%s)", table, id, sleep))
					if err == nil {
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "Batch", "BatchAll":
					b := &Batch{AllOrNothing: kind == "BatchAll"}
					for k := 0; k < 3; k++ {
						b.Queue("SELECT $1::int, pg_sleep($2::float8)", id+k, sleep)
					}
					br := db.SendBatch(ctx, b)
					var firstErr error
					for k := 0; k < 3; k++ {
						if r.IntN(8) == 0 {
							cancel()
						}
						var got int
						err := br.QueryRow().Scan(&got, nil)
						if err == nil && got != id+k {
							st.bad("%s: stmt %d got %d want %d", name, k, got, id+k)
						}
						if err != nil && firstErr == nil {
							firstErr = err
						}
					}
					cerr := br.Close()
					if firstErr == nil {
						firstErr = cerr
					}
					st.checkErr(name, ctx, firstErr, ddl, hasDdl)
				case "Tx":
					tx, err := db.Begin(ctx)
					if err != nil {
						st.checkErr(name+" begin", ctx, err, ddl, hasDdl)
						break
					}
					_, err1 := tx.Exec(ctx, "INSERT INTO "+table+"(id) SELECT $1::int FROM pg_sleep($2::float8)", id, sleep)
					var got int
					err2 := tx.QueryRow(ctx, "SELECT $1::int", id+1).Scan(&got)
					if err2 == nil && got != id+1 {
						st.bad("%s: tx QueryRow got %d want %d", name, got, id+1)
					}
					cctx := ctx
					if r.IntN(2) == 0 {
						cctx = context.Background()
					}
					var cerr error
					if r.IntN(4) == 0 {
						cerr = tx.Rollback(cctx)
						st.mu.Lock()
						st.noIDs[id] = name + " rollback"
						st.mu.Unlock()
					} else {
						cerr = tx.Commit(cctx)
						st.mu.Lock()
						switch {
						case cerr == nil && err1 != nil && SafeToRetry(err1):
							// The INSERT never reached the server, and its
							// error said so: committing the rest is right.
							st.noIDs[id] = name + " commit without the unsent INSERT"
						case cerr == nil:
							st.okIDs[id] = name + " commit"
							if err1 != nil {
								st.problems = append(st.problems, fmt.Sprintf("%s: Commit succeeded although the INSERT returned %v", name, err1))
							}
						case errors.Is(cerr, ErrTxRolledBack):
							st.noIDs[id] = name + " rolledback"
						}
						st.mu.Unlock()
					}
					if err1 != nil {
						st.checkErr(name+" exec", ctx, err1, ddl, hasDdl)
					}
					if err2 != nil {
						st.checkErr(name+" queryrow", ctx, err2, ddl, hasDdl)
					}
					if cerr != nil && !errors.Is(cerr, ErrTxRolledBack) {
						st.checkErr(name+" end", cctx, cerr, ddl, hasDdl && cctx == ctx)
					}
				case "Copy":
					rowsSrc := [][]any{{id}, {id + 1}, {id + 2}}
					n, err := db.CopyFrom(ctx, Identifier{table}, []string{"id"}, CopyFromRows(rowsSrc))
					if err == nil {
						if n != 3 {
							st.bad("%s: copied %d", name, n)
						}
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					// COPY may overrun by design (cancel_timeout); checked without deadline
					st.checkErr(name, ctx, err, ddl, false)
				}
				cancel()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		buf := make([]byte, 4<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("storm hung:\n%s", buf[:n])
	}
	return st
}

func (st *stormStats) verify(t *testing.T, db stormDB, table string) {
	ctx := testCtx(t)
	counts := map[int]int{}
	rows, err := db.Query(ctx, "SELECT id, count(*)::int FROM "+table+" GROUP BY id")
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	for rows.Next() {
		var id, n int
		rows.Scan(&id, &n)
		counts[id] = n
	}
	if rows.Err() != nil {
		t.Fatalf("verify: %v", rows.Err())
	}
	for id, name := range st.okIDs {
		if counts[id] != 1 {
			st.bad("%s: told success, id %d present %d times", name, id, counts[id])
		}
	}
	for id, name := range st.noIDs {
		if counts[id] != 0 {
			st.bad("%s: told rolled back, id %d present %d times", name, id, counts[id])
		}
	}
	for id, n := range counts {
		if n > 1 {
			st.bad("id %d present %d times", id, n)
		}
	}
	t.Logf("ops: %v", st.ops)
	for i, p := range st.problems {
		if i >= 40 {
			t.Errorf("... %d more", len(st.problems)-40)
			break
		}
		t.Errorf("%s", p)
	}
}

var allKinds = []string{"QueryRow", "Query", "ExecArgs", "ExecSimple", "Batch", "BatchAll", "Tx", "Copy"}

// stormKinds is every kind, CopyFrom included (see
// TestDrainCopyFromDescribe).
var stormKinds = allKinds

// TestStormConn: 12 workers on one Conn run every kind of operation
// (stormKinds) under ctxs that never end, are canceled or end at a random
// moment; runStorm's rules hold for every outcome, the Conn works
// afterwards, and every insert reported committed is in the table once,
// every one reported rolled back is not.
func TestStormConn(t *testing.T) {
	storm(t)
	c := auditConn(t)
	auditTable(t, c, "audit_storm_c")
	st := runStorm(t, c, 12, 60, "audit_storm_c", stormKinds)
	// the connection must still work
	var one int
	err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one)
	t.Logf("after storm: closed=%v err=%v", c.IsClosed(), err)
	if err != nil {
		c = auditConn(t)
	}
	st.verify(t, c, "audit_storm_c")
}

// TestStormKinds: the storm one kind of operation at a time, each on a
// fresh Conn.
func TestStormKinds(t *testing.T) {
	storm(t)
	for _, k := range allKinds {
		t.Run(k, func(t *testing.T) {
			c := auditConn(t)
			auditTable(t, c, "audit_storm_k")
			ops := 20
			if strings.HasPrefix(k, "Batch") {
				// Three statements of up to 30 ms each per batch, on one
				// connection: 10 batches per worker take as long as 20
				// operations of the other kinds.
				ops = 10
			}
			st := runStorm(t, c, 12, ops, "audit_storm_k", []string{k})
			var one int
			err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one)
			t.Logf("after storm: closed=%v err=%v problems=%d", c.IsClosed(), err, len(st.problems))
			if len(st.problems) > 0 {
				t.Errorf("first: %s", st.problems[0])
			}
		})
	}
}

// TestStormPool: the storm through Pools of 2 and 4 connections.
func TestStormPool(t *testing.T) {
	storm(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, err := NewPool(testCtx(t), srv.DSN(fmt.Sprintf("pool_max_conns=%d", n)))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			table := fmt.Sprintf("audit_storm_p%d", n)
			c := auditConn(t)
			auditTable(t, c, table)
			st := runStorm(t, p, 16, 50, table, stormKinds)
			st.verify(t, c, table)
		})
	}
}

// TestDrainCopyFromDescribe: CopyFrom's column describe (Parse, Describe,
// Sync) is abandoned when its ctx ends while it waits behind A; the drain
// of its reply must know ParameterDescription, not close the connection:
// B, queued next with its ctx alive, succeeds.
func TestDrainCopyFromDescribe(t *testing.T) {
	c := auditConn(t)
	ctx := testCtx(t)
	auditTable(t, c, "audit_copy")
	aDone := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SELECT pg_sleep(0.2)")
		aDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.CopyFrom(cctx, Identifier{"audit_copy"}, []string{"id"}, CopyFromRows([][]any{{1}}))
	t.Logf("CopyFrom: %v", err)
	t.Logf("A: %v", <-aDone)
	var got int
	err = c.QueryRow(ctx, "SELECT $1::int", 7).Scan(&got)
	t.Logf("B: got=%d err=%v closed=%v", got, err, c.IsClosed())
	if err != nil {
		t.Errorf("B (ctx alive) failed after a CopyFrom's ctx ended: %v", err)
	}
}

// TestTxDoomedStatementNotCommitted: a Tx statement's ctx ends (while queued, while
// running); Commit must not commit it; the Conn must stay usable to others.
func TestTxDoomedStatementNotCommitted(t *testing.T) {
	for _, when := range []string{"queued", "running", "rowsmid"} {
		t.Run(when, func(t *testing.T) {
			c := auditConn(t)
			ctx := testCtx(t)
			auditTable(t, c, "audit_tx")
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO audit_tx(id) VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			switch when {
			case "queued":
				go tx.Exec(ctx, "SELECT pg_sleep(0.1)")
				time.Sleep(5 * time.Millisecond)
				_, err = tx.Exec(sctx, "INSERT INTO audit_tx(id) VALUES (2)")
			case "running":
				_, err = tx.Exec(sctx, "INSERT INTO audit_tx(id) SELECT 2 FROM pg_sleep(0.1)")
			case "rowsmid":
				var rows *Rows
				rows, err = tx.Query(sctx, "INSERT INTO audit_tx(id) SELECT 2 RETURNING id, pg_sleep(0.1)")
				if err == nil {
					<-sctx.Done()
					rows.Close()
					err = rows.Err()
				}
			}
			t.Logf("statement: %v", err)
			// another goroutine on the Conn, outside the Tx, waits for the Tx
			other := make(chan error, 1)
			go func() {
				octx, ocancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer ocancel()
				_, err := c.Exec(octx, "SELECT 1")
				other <- err
			}()
			time.Sleep(200 * time.Millisecond)
			cerr := tx.Commit(ctx)
			t.Logf("Commit: %v", cerr)
			t.Logf("other: %v", <-other)
			var n int
			c.QueryRow(ctx, "SELECT count(*)::int FROM audit_tx").Scan(&n)
			t.Logf("rows: %d", n)
			if err != nil && cerr == nil && n > 0 {
				t.Errorf("Commit committed although a statement's caller got %v", err)
			}
		})
	}
}
