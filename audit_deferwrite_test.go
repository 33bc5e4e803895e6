package pgline

// Audit of 86f9a11 (the reader writes what callers left it: flushLocked,
// writeUnsent, inFlightLocked, overdueLocked, socketReader.Read), which
// found that bytes left behind a head held by user code were never
// written (fixed by the timer of armUnsentLocked, deferMax). The
// scenarios build, deterministically, the state in which a caller leaves
// its bytes unsent (two requests in flight, the reader not in a read of
// the socket): a head whose Rows are fully buffered but held by user
// code, one request written behind it, and the caller queued third. Then
// they check what the rule asks of that state: deadlines kept, own
// values, at most one run, every caller back when the connection ends,
// and the statement actually reaching the server.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// auditDWSnap is the writers' bookkeeping, read under wmu.
type auditDWSnap struct {
	queued           int
	flushing, unsent bool
	reading          bool
	cancelling       bool
	wbuf             int
	seqNext, swapped uint64
	readerWrites     uint64
}

func auditDWState(c *Conn) auditDWSnap {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return auditDWSnap{
		queued: c.queued, flushing: c.flushing, unsent: c.unsent.Load(), reading: c.reading.Load(),
		cancelling: c.cancelling, wbuf: len(c.wbuf), seqNext: c.seqNext, swapped: c.swappedSeq,
		readerWrites: c.readerWrites,
	}
}

// auditDWWaitFor polls cond for up to d.
func auditDWWaitFor(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

type auditDWResult struct {
	v   int64
	err error
	at  time.Time
}

// auditDWHeld sets up the state: rows of a small query are returned to
// the test and not iterated (the head holds the turn in user code), and
// an echo (value cv) is queued and written behind them. It returns the
// rows, the echo's result channel and the count of the writes of bytes
// left for the reader so far.
func auditDWHeld(t *testing.T, ctx context.Context, c *Conn, cv int64) (*Rows, chan auditDWResult, uint64) {
	t.Helper()
	// The echo's statement is described first: each caller below is then
	// one request (a statement being described makes the next caller of
	// the same text wait for the description, outside the queue).
	var w int64
	if err := c.QueryRow(ctx, "SELECT $1::int8", int64(-1)).Scan(&w); err != nil || w != -1 {
		t.Fatalf("warm-up: %d %v", w, err)
	}
	rows, err := c.Query(ctx, "SELECT g::int8 FROM generate_series(1,3) g")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan auditDWResult, 1)
	go func() {
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", cv).Scan(&got)
		ch <- auditDWResult{got, err, time.Now()}
	}()
	if !auditDWWaitFor(2*time.Second, func() bool {
		s := auditDWState(c)
		return s.queued == 2 && !s.flushing && s.wbuf == 0 && s.swapped == s.seqNext
	}) {
		rows.Close()
		t.Fatalf("the echo behind the held rows was not written: %+v", auditDWState(c))
	}
	return rows, ch, auditDWState(c).readerWrites
}

// auditDWDeferred waits until a third request is queued and its bytes
// were left for the reader: still unsent, or written since base by the
// timer that bounds their wait (deferMax; the reader is not reading), or
// fails the test.
func auditDWDeferred(t *testing.T, c *Conn, rows *Rows, base uint64) {
	t.Helper()
	if !auditDWWaitFor(2*time.Second, func() bool {
		s := auditDWState(c)
		return s.queued == 3 && !s.flushing
	}) {
		rows.Close()
		t.Fatalf("the third request was not queued: %+v", auditDWState(c))
	}
	if s := auditDWState(c); !(s.unsent && s.wbuf > 0) && s.readerWrites == base {
		rows.Close()
		t.Fatalf("scenario not reached: the third request's bytes were not left for the reader: %+v", s)
	}
}

// auditDWCheckRows iterates the held rows and checks them.
func auditDWCheckRows(t *testing.T, rows *Rows) {
	t.Helper()
	var got []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Errorf("held rows: scan: %v", err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil || fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("held rows: %v %v", got, err)
	}
}

func auditDWTable(t *testing.T, ctx context.Context, o *Conn) string {
	t.Helper()
	tbl := fmt.Sprintf("audit_deferwrite_%d_%d", time.Now().UnixNano(), rand.IntN(1e6))
	if _, err := o.Exec(ctx, "CREATE TABLE "+tbl+" (k int8 PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Exec(context.Background(), "DROP TABLE "+tbl) })
	return tbl
}

// auditDWWarmInsert describes the INSERT on c (with a key the counts
// leave out), so that the INSERT below is one request.
func auditDWWarmInsert(t *testing.T, ctx context.Context, c interface {
	Exec(context.Context, string, ...any) (CommandTag, error)
}, tbl string) {
	t.Helper()
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(-1)); err != nil {
		t.Fatal(err)
	}
}

func auditDWCount(t *testing.T, ctx context.Context, o *Conn, tbl string) int64 {
	t.Helper()
	var n int64
	if err := o.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE k > 0").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAuditDeferWriteHeldHeadReachesServer: a statement queued behind a
// head whose Rows user code holds must still reach the server (before
// 86f9a11 the caller wrote it after a yield; the server runs pipelined
// statements while earlier replies wait to be read). User code that,
// while it holds Rows, waits for the effect of another goroutine's
// statement on the same Conn (seen from another session, a lock it
// releases, a row it inserts) must not deadlock with the driver.
func TestAuditDeferWriteHeldHeadReachesServer(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each", "unix"} {
		t.Run(dsn, func(t *testing.T) {
			var c *Conn
			if dsn == "unix" {
				c = connect(t, srv.SocketDSN())
			} else {
				c = connect(t, srv.DSN(dsn))
			}
			o := connect(t, srv.DSN())
			ctx := testCtx(t)
			tbl := auditDWTable(t, ctx, o)
			auditDWWarmInsert(t, ctx, c, tbl)

			rows, cch, base := auditDWHeld(t, ctx, c, 1001)
			dch := make(chan auditDWResult, 1)
			go func() {
				tag, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(7))
				dch <- auditDWResult{tag.RowsAffected(), err, time.Now()}
			}()
			auditDWDeferred(t, c, rows, base)

			// The holder of the rows waits (bounded) for the INSERT to be
			// visible from another session, as user code waiting for a
			// goroutine's effect would.
			start := time.Now()
			seen := auditDWWaitFor(2*time.Second, func() bool { return auditDWCount(t, ctx, o, tbl) == 1 })
			waited := time.Since(start)
			st := auditDWState(c)
			auditDWCheckRows(t, rows)

			for _, ch := range []chan auditDWResult{cch, dch} {
				select {
				case r := <-ch:
					if want := map[bool]int64{true: 1001, false: 1}[ch == cch]; r.err != nil || r.v != want {
						t.Errorf("want %d, got %d %v", want, r.v, r.err)
					}
				case <-time.After(3 * time.Second):
					t.Fatalf("a caller still waits 3 s after the rows were closed: %+v", auditDWState(c))
				}
			}
			if n := auditDWCount(t, ctx, o, tbl); n != 1 {
				t.Errorf("insert ran %d times", n)
			}
			auditQuiescent(t, c)
			if !seen {
				t.Errorf("a statement queued behind held Rows did not reach the server in %v: its bytes were left unsent for a reader that is not reading (%+v); user code that waits for its effect before closing the Rows deadlocks", waited.Round(time.Millisecond), st)
			}
		})
	}
}

// TestAuditDeferWriteReaderWrites: the bytes left for a reader that is
// not reading (the head's rows held by user code) are written all the
// same (by the timer that bounds their wait, deferMax, or by the reader
// once the rows are read), and both callers behind the rows get their
// own values within a bound.
func TestAuditDeferWriteReaderWrites(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each", "unix"} {
		t.Run(dsn, func(t *testing.T) {
			var c *Conn
			if dsn == "unix" {
				c = connect(t, srv.SocketDSN())
			} else {
				c = connect(t, srv.DSN(dsn))
			}
			ctx := testCtx(t)
			rows, cch, base := auditDWHeld(t, ctx, c, 7001)
			dch := make(chan auditDWResult, 1)
			go func() {
				var got int64
				err := c.QueryRow(ctx, "SELECT $1::int8", int64(7002)).Scan(&got)
				dch <- auditDWResult{got, err, time.Now()}
			}()
			auditDWDeferred(t, c, rows, base)
			before := auditReaderWrites(c)
			auditDWCheckRows(t, rows)
			for _, want := range []int64{7001, 7002} {
				ch := cch
				if want == 7002 {
					ch = dch
				}
				select {
				case r := <-ch:
					if r.err != nil || r.v != want {
						t.Errorf("sent %d, got %d %v", want, r.v, r.err)
					}
				case <-time.After(3 * time.Second):
					t.Fatalf("caller %d still waits 3 s after the rows were closed: bytes left unsent while the reader waits? %+v", want, auditDWState(c))
				}
			}
			if after := auditReaderWrites(c); after == base {
				t.Errorf("nobody wrote the bytes left for the reader (readerWrites %d, %d before the rows were read)", after, before)
			}
			auditQuiescent(t, c)
		})
	}
}

// TestAuditDeferWriteUnsentCtx: callers whose ctx ends while their bytes
// wait for the reader (then for the timer, deferMax), and their replies
// behind the held rows, get their ctx error promptly; their statement
// runs at most once;
// callers queued after them, and the held rows, get their own values.
func TestAuditDeferWriteUnsentCtx(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
			o := connect(t, srv.DSN())
			ctx := testCtx(t)
			tbl := auditDWTable(t, ctx, o)
			auditDWWarmInsert(t, ctx, c, tbl)

			rows, cch, base := auditDWHeld(t, ctx, c, 2001)
			const d = 150 * time.Millisecond
			dctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			deadline, _ := dctx.Deadline()
			dch := make(chan auditDWResult, 1)
			go func() {
				_, err := c.Exec(dctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(9))
				dch <- auditDWResult{0, err, time.Now()}
			}()
			auditDWDeferred(t, c, rows, base)

			// More callers with short deadlines queue behind (some of
			// them write at once, overdueLocked, some are left unsent).
			var wg sync.WaitGroup
			var late, own, ctxErrs atomic.Int64
			for i := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := int64(3000 + i)
					qctx, cancel := context.WithTimeout(ctx, time.Duration(20+30*i)*time.Millisecond)
					defer cancel()
					dl, _ := qctx.Deadline()
					var got int64
					err := c.QueryRow(qctx, "SELECT $1::int8", v).Scan(&got)
					switch {
					case err == nil && got == v:
						own.Add(1)
					case err != nil && errors.Is(err, context.DeadlineExceeded):
						ctxErrs.Add(1)
						if over := time.Since(dl); over > 500*time.Millisecond {
							late.Add(1)
							t.Errorf("short caller %d: ctx error %v past its deadline", v, over)
						}
					default:
						t.Errorf("short caller sent %d, got %d %v", v, got, err)
					}
				}()
			}
			select {
			case r := <-dch:
				if !errors.Is(r.err, context.DeadlineExceeded) {
					t.Errorf("unsent insert whose ctx ended: %v", r.err)
				}
				if over := r.at.Sub(deadline); over > 500*time.Millisecond {
					t.Errorf("unsent insert: ctx error %v past its deadline", over)
				}
			case <-time.After(d + 2*time.Second):
				t.Errorf("unsent insert: no answer %v after its deadline", time.Since(deadline))
				rows.Close()
				<-dch
			}
			wg.Wait()
			// Later callers with a live ctx queue behind the abandoned ones.
			lch := make(chan auditDWResult, 4)
			for i := range 4 {
				go func() {
					var got int64
					err := c.QueryRow(ctx, "SELECT $1::int8", int64(4000+i)).Scan(&got)
					if err == nil && got != int64(4000+i) {
						err = fmt.Errorf("sent %d, got %d", 4000+i, got)
					}
					lch <- auditDWResult{got, err, time.Now()}
				}()
			}
			time.Sleep(20 * time.Millisecond)
			auditDWCheckRows(t, rows)
			if r := <-cch; r.err != nil || r.v != 2001 {
				t.Errorf("echo behind the rows: %d %v", r.v, r.err)
			}
			for range 4 {
				select {
				case r := <-lch:
					if r.err != nil {
						t.Errorf("later caller: %v", r.err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("later caller still waiting 5 s after the rows were closed: %+v", auditDWState(c))
				}
			}
			auditQuiescent(t, c)
			if n := auditDWCount(t, ctx, o, tbl); n > 1 {
				t.Errorf("abandoned insert ran %d times", n)
			}
			var v int64
			if err := c.QueryRow(ctx, "SELECT 77::int8").Scan(&v); err != nil || v != 77 {
				t.Errorf("after: %d %v", v, err)
			}
			t.Logf("short callers: own %d, ctx errors %d", own.Load(), ctxErrs.Load())
		})
	}
}

// TestAuditDeferWriteEnd: the connection ends (pg_terminate_backend, or
// Close) while a caller's bytes wait for the reader behind held rows.
// Once the rows are closed, every caller returns within a bound, with
// its own value or an error; nothing is left queued or unsent.
func TestAuditDeferWriteEnd(t *testing.T) {
	for _, how := range []string{"terminate", "close"} {
		t.Run(how, func(t *testing.T) {
			c := connect(t, srv.DSN())
			o := connect(t, srv.DSN())
			ctx := testCtx(t)
			pid := c.PID()
			rows, cch, base := auditDWHeld(t, ctx, c, 5001)
			res := make(chan auditDWResult, 8)
			echo := func(v int64) {
				var got int64
				err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
				if err == nil && got != v {
					err = fmt.Errorf("sent %d, got %d", v, got)
				}
				res <- auditDWResult{v, err, time.Now()}
			}
			go echo(5002)
			auditDWDeferred(t, c, rows, base)
			// 5002's bytes wait for the reader, or were written by the
			// timer (deferMax), when the session ends; either way it gets
			// its own value or an error (a caller queued now would write
			// them: overdueLocked).
			if how == "terminate" {
				if _, err := o.Exec(ctx, "SELECT pg_terminate_backend($1)", int32(pid)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			} else {
				c.Close()
			}
			for v := int64(5003); v < 5008; v++ {
				go echo(v)
			}
			time.Sleep(20 * time.Millisecond)
			// The holder iterates and closes its rows (already received).
			for rows.Next() {
			}
			rows.Close()
			timeout := time.After(5 * time.Second)
			select {
			case r := <-cch:
				if r.err == nil && r.v != 5001 {
					t.Errorf("echo 5001 got %d", r.v)
				}
			case <-timeout:
				t.Fatalf("the echo behind the rows still waits 5 s after the end: %+v", auditDWState(c))
			}
			var errs int
			for range 6 {
				select {
				case r := <-res:
					if r.err != nil {
						errs++
					} else if how == "close" {
						t.Errorf("caller %d got its value after Close", r.v)
					}
				case <-timeout:
					t.Fatalf("callers still wait 5 s after the end: %+v", auditDWState(c))
				}
			}
			if !c.IsClosed() {
				t.Errorf("the connection is not closed after %s", how)
			}
			s := auditDWState(c)
			if s.queued != 0 {
				t.Errorf("requests left queued: %+v", s)
			}
			t.Logf("%d of 6 callers failed; %+v", errs, s)
		})
	}
}

// TestAuditDeferWriteCancelHead: the holder of a streaming head cancels
// its ctx mid-iteration (the drain may send a CancelRequest, holding
// writes: cancelling) while an echo is in flight and another's bytes wait
// for the reader; pg_cancel_backend from another session hits the
// connection meanwhile in the second variant. Each echo gets its own
// value or an error, within a bound; the connection stays usable.
func TestAuditDeferWriteCancelHead(t *testing.T) {
	for _, killer := range []bool{false, true} {
		t.Run(fmt.Sprintf("pg_cancel=%v", killer), func(t *testing.T) {
			c := connect(t, srv.DSN("cancel_grace=1ms"))
			o := connect(t, srv.DSN())
			ctx := testCtx(t)
			hctx, hcancel := context.WithCancel(ctx)
			defer hcancel()
			rows, err := c.Query(hctx, "SELECT g::int8 FROM generate_series(1,400) g, pg_sleep(0.002) s")
			if err != nil {
				t.Fatal(err)
			}
			res := make(chan auditDWResult, 16)
			echo := func(v int64) {
				var got int64
				err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
				if err == nil && got != v {
					err = fmt.Errorf("sent %d, got %d: ANOTHER CALLER'S VALUE", v, got)
				}
				res <- auditDWResult{v, err, time.Now()}
			}
			go echo(6001)
			auditDWWaitFor(time.Second, func() bool { s := auditDWState(c); return s.queued == 2 && !s.flushing })
			go echo(6002)
			auditDWWaitFor(time.Second, func() bool { s := auditDWState(c); return s.queued == 3 && !s.flushing })
			for v := int64(6003); v < 6010; v++ {
				go echo(v)
			}
			n := 0
			for rows.Next() {
				if n++; n == 5 {
					if killer {
						o.Exec(ctx, "SELECT pg_cancel_backend($1)", int32(c.PID()))
					}
					hcancel()
				}
			}
			rows.Close()
			timeout := time.After(8 * time.Second)
			for range 9 {
				select {
				case r := <-res:
					if r.err != nil {
						var pe *PgError
						if !errors.As(r.err, &pe) || pe.Code != "57014" {
							t.Errorf("echo %d: %v", r.v, r.err)
						} else {
							t.Logf("echo %d canceled: %v", r.v, r.err)
						}
					}
				case <-timeout:
					t.Fatalf("echoes still wait 8 s: %+v", auditDWState(c))
				}
			}
			var v int64
			if err := c.QueryRow(ctx, "SELECT 88::int8").Scan(&v); err != nil || v != 88 {
				t.Errorf("after: %d %v", v, err)
			}
			auditQuiescent(t, c)
		})
	}
}

// TestAuditDeferWriteNoStall: echo goroutines on one Conn with heads
// that hold their rows in user code for a moment, short-ctx callers, and
// a monitor that checks, under wmu, the rule "nothing stays unsent while
// the reader waits on the socket": the reader in a read with bytes
// unsent, nobody writing and no cancel holding writes, must not persist
// with no progress. Every echo is the caller's own; the reader must
// have written bytes callers left it (or the test proves nothing).
func TestAuditDeferWriteNoStall(t *testing.T) {
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			c := connect(t, srv.DSN(dsn, "cancel_grace=1ms"))
			ctx := testCtx(t)
			var seq atomic.Int64
			l := newAuditLoad(t, 1500*time.Millisecond, 10)
			stop := make(chan struct{})
			monDone := make(chan struct{})
			var stalls atomic.Int64
			go func() {
				defer close(monDone)
				var since time.Time
				var at auditDWSnap
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					s := auditDWState(c)
					bad := s.reading && s.unsent && !s.flushing && !s.cancelling && s.wbuf > 0
					if !bad || s.swapped != at.swapped || s.seqNext != at.seqNext {
						since, at = time.Time{}, s
						if bad {
							since = time.Now()
						}
						continue
					}
					if !since.IsZero() && time.Since(since) > 300*time.Millisecond {
						stalls.Add(1)
						l.fail("bytes unsent for %v while the reader reads the socket: %+v", time.Since(since), s)
						since = time.Time{}
					}
				}
			}()
			l.spawn(40, func() {
				v := seq.Add(1)
				var got int64
				if err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
					l.fail("echo: sent %d got %d %v", v, got, err)
				}
			})
			l.spawn(3, func() {
				v := seq.Add(1)
				rows, err := c.Query(ctx, "SELECT $1::int8 + g FROM generate_series(0,2) g", v)
				if err != nil {
					l.fail("held: %v", err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				var i int64
				for rows.Next() {
					var got int64
					rows.Scan(&got)
					if got != v+i {
						l.fail("held: sent %d got %d at %d", v, got, i)
					}
					i++
				}
				if err := rows.Err(); err != nil || i != 3 {
					l.fail("held: %d rows %v", i, err)
				}
			})
			l.spawn(6, func() {
				v := seq.Add(1)
				qctx, cancel := context.WithTimeout(ctx, time.Duration(50+rand.IntN(3000))*time.Microsecond)
				defer cancel()
				dl, _ := qctx.Deadline()
				var got int64
				err := c.QueryRow(qctx, "SELECT $1::int8", v).Scan(&got)
				switch {
				case err == nil && got == v:
				case err != nil && errors.Is(err, context.DeadlineExceeded):
					if over := time.Since(dl); over > time.Second {
						l.fail("short: ctx error %v past its deadline", over)
					}
				default:
					l.fail("short: sent %d got %d %v", v, got, err)
				}
			})
			l.wait()
			close(stop)
			<-monDone
			rw := auditReaderWrites(c)
			t.Logf("%d statements, %d reader writes", seq.Load(), rw)
			if rw == 0 && !t.Failed() {
				t.Errorf("the reader wrote nothing callers left it: the test exercised nothing")
			}
			var v int64
			if err := c.QueryRow(ctx, "SELECT 99::int8").Scan(&v); err != nil || v != 99 {
				t.Fatalf("after: %d %v", v, err)
			}
			auditQuiescent(t, c)
		})
	}
}

// TestAuditDeferWritePool: the held-head scenario through a Pool of one
// connection: a statement routed behind rows user code holds must reach
// the server while the rows are held.
func TestAuditDeferWritePool(t *testing.T) {
	p := newTestPool(t, "pool_max_conns=1")
	o := connect(t, srv.DSN())
	ctx := testCtx(t)
	tbl := auditDWTable(t, ctx, o)
	auditDWWarmInsert(t, ctx, p, tbl)
	if _, err := p.Exec(ctx, "SELECT $1::int8", int64(-1)); err != nil {
		t.Fatal(err)
	}
	rows, err := p.Query(ctx, "SELECT g::int8 FROM generate_series(1,3) g")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got int64
			v := int64(8000 + i)
			if err := p.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
				t.Errorf("echo: sent %d got %d %v", v, got, err)
			}
		}()
		time.Sleep(5 * time.Millisecond)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := p.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(1)); err != nil {
			t.Errorf("insert: %v", err)
		}
	}()
	seen := auditDWWaitFor(2*time.Second, func() bool { return auditDWCount(t, ctx, o, tbl) == 1 })
	auditDWCheckRows(t, rows)
	wg.Wait()
	if n := auditDWCount(t, ctx, o, tbl); n != 1 {
		t.Errorf("insert ran %d times", n)
	}
	if !seen {
		t.Errorf("a statement routed behind held Rows did not reach the server within 2 s")
	}
}
