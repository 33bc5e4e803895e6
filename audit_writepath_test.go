package pgline

// Audit of the write path (flushLocked, writeLocked, flushRest,
// writeFailed): deadlines kept while the server does not read,
// SafeToRetry only for requests none of whose bytes reached the socket,
// every caller its own result, no goroutine left behind after Close.

import (
	"context"
	"crypto/md5"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// writeFakeServer listens on loopback; each connection completes the
// startup (over TLS when useTLS, answering SSLRequest with 'S') and then
// runs serve. CancelRequests are read and dropped. It returns the DSN.
func writeFakeServer(t *testing.T, useTLS bool, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	var cert tls.Certificate
	if useTLS {
		cert = testServerCert(t)
	}
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, raw)
			mu.Unlock()
			go func() {
				defer raw.Close()
				var c net.Conn = raw
				for {
					_, body, err := wire.ReadFrontendMessage(c, true)
					if err != nil || len(body) < 4 {
						return
					}
					switch binary.BigEndian.Uint32(body) {
					case wire.CancelRequestCode:
						return
					case wire.SSLRequestCode:
						if !useTLS {
							c.Write([]byte{'N'})
							continue
						}
						c.Write([]byte{'S'})
						ts := tls.Server(raw, &tls.Config{Certificates: []tls.Certificate{cert}})
						if ts.Handshake() != nil {
							return
						}
						mu.Lock()
						conns = append(conns, ts)
						mu.Unlock()
						c = ts
						continue
					}
					break
				}
				if _, err := c.Write(authOKReady()); err != nil {
					return
				}
				serve(c)
			}()
		}
	}()
	mode := "disable"
	if useTLS {
		mode = "require"
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return "host=127.0.0.1 port=" + strconv.Itoa(port) + " user=u dbname=d password=x sslmode=" + mode +
		" connect_timeout=10 statement_cache_mode=prepare cancel_timeout=500ms"
}

// writePathGoroutines lists the goroutines still in the write path or a
// drain (a flusher blocked in Write after Close would show here).
func writePathGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"(*Conn).flushLoop", "(*Conn).flushRest", "(*Conn).writeLocked", "(*Conn).drainAbandoned", "(*Conn).writeQueued"} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

func noWritePathGoroutines(t *testing.T) {
	t.Helper()
	var left []string
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if left = writePathGoroutines(); len(left) == 0 {
			return
		}
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
				c.wmu.Lock()
				flushing = c.flushing && len(c.wbuf) > 0
				c.wmu.Unlock()
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

// TestConnKilledMidWriteSafeToRetry: many goroutines INSERT rows with large
// values (partial writes, flushers) while the backend is killed
// (pg_terminate_backend) or the Conn closed at a random moment. A request
// reported SafeToRetry must not have run; a success must have; retrying
// the SafeToRetry ones must not make any row appear twice.
func TestConnKilledMidWriteSafeToRetry(t *testing.T) {
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS audit_write_kill; CREATE TABLE audit_write_kill(id int, pad text)"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	round := 0
	var safe, failed, ok int
	for name, dsn := range transportDSNs() {
		for _, how := range []string{"terminate", "close"} {
			for range 4 {
				round++
				s, f, o := killMidWriteRound(t, admin, dsn, how, round, time.Duration(rng.IntN(60))*time.Millisecond)
				safe, failed, ok = safe+s, failed+f, ok+o
				if t.Failed() {
					t.Fatalf("%s/%s round %d failed", name, how, round)
				}
			}
		}
	}
	t.Logf("outcomes: %d ok, %d SafeToRetry, %d other errors", ok, safe, failed)
	if safe == 0 || failed == 0 {
		t.Errorf("scenario not exercised: %d SafeToRetry, %d other errors", safe, failed)
	}
}

func killMidWriteRound(t *testing.T, admin *Conn, dsn, how string, round int, delay time.Duration) (safe, failed, ok int) {
	ctx := testCtx(t)
	c, err := Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pid := c.PID()
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pad := strings.Repeat(string(rune('a'+i%26)), (50+i*13%300)<<10)
			if i%5 == 0 {
				pad = "small"
			}
			_, errs[i] = c.Exec(ctx, "INSERT INTO audit_write_kill VALUES ($1, $2)", round*1000+i, pad)
		}()
	}
	time.Sleep(delay)
	switch how {
	case "terminate":
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(pid)); err != nil {
			t.Fatal(err)
		}
	case "close":
		c.Close()
	}
	wg.Wait()
	// The backend must be gone before counting (after Close it may still
	// run what it received).
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var alive int
		if err := admin.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE pid = $1", int(pid)).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if alive == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("backend still alive")
		}
	}
	counts := map[int]int{}
	rows, err := admin.Query(ctx, "SELECT id FROM audit_write_kill WHERE id / 1000 = $1", round)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		counts[id-round*1000]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var retry []int
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
			if counts[i] != 1 {
				t.Errorf("%s round %d insert %d: success, but %d rows", how, round, i, counts[i])
			}
		case SafeToRetry(err):
			safe++
			if counts[i] != 0 {
				t.Errorf("%s round %d insert %d: SafeToRetry (%v), but it ran (%d rows)", how, round, i, err, counts[i])
			}
			retry = append(retry, i)
		default:
			failed++
			if counts[i] > 1 {
				t.Errorf("%s round %d insert %d: %d rows", how, round, i, counts[i])
			}
		}
	}
	if len(retry) > 0 {
		c2, err := Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		for _, i := range retry {
			if _, err := c2.Exec(ctx, "INSERT INTO audit_write_kill VALUES ($1, 'retry')", round*1000+i); err != nil {
				t.Fatal(err)
			}
		}
		var dup int
		if err := admin.QueryRow(ctx, "SELECT count(*)::int FROM (SELECT id FROM audit_write_kill WHERE id / 1000 = $1 GROUP BY id HAVING count(*) > 1) d", round).Scan(&dup); err != nil {
			t.Fatal(err)
		}
		if dup != 0 {
			t.Errorf("%s round %d: %d ids inserted twice after retrying the SafeToRetry ones", how, round, dup)
		}
	}
	return safe, failed, ok
}

func md5Hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// largeValueOp runs one operation of kind k for goroutine g, step i,
// and checks its result is the caller's own: md5 of a large unique value
// (Query or simple protocol), a transaction, a COPY FROM STDIN.
func largeValueOp(ctx context.Context, c *Conn, table string, g, i int, rng *rand.Rand, withCopy bool) error {
	id := g*10000 + i
	val := fmt.Sprintf("%d:", id) + strings.Repeat(string(rune('A'+rng.IntN(26))), rng.IntN(400<<10))
	k := rng.IntN(6)
	if !withCopy && k == 4 {
		k = 0
	}
	switch k {
	case 0, 1:
		var got string
		var gotID int
		if err := c.QueryRow(ctx, "SELECT md5($1::text), $2::int", val, id).Scan(&got, &gotID); err != nil {
			return err
		}
		if got != md5Hex(val) || gotID != id {
			return fmt.Errorf("md5 %s id %d, want %s id %d: another caller's reply", got, gotID, md5Hex(val), id)
		}
	case 2:
		var got string
		if err := c.QueryRow(ctx, "SELECT $1::text", val[:min(len(val), 2000)]).Scan(&got); err != nil {
			return err
		}
		if got != val[:min(len(val), 2000)] {
			return fmt.Errorf("echo mismatch")
		}
	case 3:
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES ($1, $2)", id, val); err != nil {
			return err
		}
		var got string
		if err := tx.QueryRow(ctx, "SELECT md5(v) FROM "+table+" WHERE id = $1", id).Scan(&got); err != nil {
			return err
		}
		if got != md5Hex(val) {
			return fmt.Errorf("tx: md5 %s, want %s", got, md5Hex(val))
		}
		return tx.Commit(ctx)
	case 4:
		rows := [][]any{{id, val}, {-id, "x"}}
		n, err := c.CopyFrom(ctx, Identifier{table}, []string{"id", "v"}, CopyFromRows(rows))
		if err != nil {
			return err
		}
		if n != 2 {
			return fmt.Errorf("copy: %d rows", n)
		}
		var got string
		if err := c.QueryRow(ctx, "SELECT md5(v) FROM "+table+" WHERE id = $1", id).Scan(&got); err != nil {
			return err
		}
		if got != md5Hex(val) {
			return fmt.Errorf("copy: md5 %s, want %s", got, md5Hex(val))
		}
	case 5:
		tag, err := c.Exec(ctx, "SELECT md5('"+val+"') WHERE md5('"+val+"') = '"+md5Hex(val)+"'")
		if err != nil {
			return err
		}
		if tag.String() != "SELECT 1" {
			return fmt.Errorf("simple: tag %q, want SELECT 1", tag)
		}
	}
	return nil
}

// TestWriteLargeValuesOwnResults: many goroutines on one Conn send values up to
// 400 KiB (partial writes, flushers, TLS flushers), mixed with
// transactions and COPY FROM STDIN; each result is the caller's own.
// Then the same with ctxs that end at random moments: a result is the
// caller's own or its own ctx's error.
func TestWriteLargeValuesOwnResults(t *testing.T) {
	for name, dsn := range transportDSNs() {
		for _, withDeadline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deadline=%v", name, withDeadline), func(t *testing.T) {
				largeValueStorm(t, connect(t, dsn), "audit_write_own_"+name, 16, 10, 99, withDeadline)
			})
		}
	}
}

// TestWriteLargeValuesPgBouncer: the same through PgBouncer (transaction
// pooling): large values from many goroutines, each result its own.
func TestWriteLargeValuesPgBouncer(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	c := connect(t, b.DSN("statement_cache_mode=describe"))
	largeValueStorm(t, c, "audit_write_own_bouncer", 12, 8, 5, false)
}

// largeValueStorm runs ops operations of largeValueOp from each of
// goroutines goroutines on c, on table (created afresh), under ctxs that
// end at random moments when withDeadline: each result is the caller's
// own, or its own ctx's error. The connection works afterwards.
func largeValueStorm(t *testing.T, c *Conn, table string, goroutines, ops int, seed uint64, withDeadline bool) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+"(id int, v text)"); err != nil {
		t.Fatal(err)
	}
	defer deadlockWatchdog(t, c, 25*time.Second)()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var timeouts int
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), seed))
			for i := range ops {
				ctx, cancel := context.Background(), func() {}
				if withDeadline {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(5+rng.IntN(150))*time.Millisecond)
				}
				err := largeValueOp(ctx, c, table, g, i, rng, !withDeadline)
				cancel()
				if withDeadline && err != nil {
					if e := ownOutcomeErr(ctx, err); e != nil {
						t.Errorf("goroutine %d op %d: %v", g, i, e)
						return
					}
					mu.Lock()
					timeouts++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Errorf("goroutine %d op %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var v int
	if err := c.QueryRow(testCtx(t), "SELECT $1::int", 777).Scan(&v); err != nil || v != 777 {
		t.Fatalf("after: %d %v", v, err)
	}
	if withDeadline {
		t.Logf("%d ops ended by their ctx", timeouts)
	}
}

// TestDrainWaitsForUnsentHead: the head's statement is still in
// the write buffer (its writer has not run yet: a flusher goroutine not
// yet scheduled, played here by holding the writer's role) when its ctx
// ends. Its drain must not cancel and hold writes (cancelHeld) before the
// statement was sent: the reply could then never come, and cancel_timeout
// later the connection would close under the requests behind.
func TestDrainWaitsForUnsentHead(t *testing.T) {
	c := connect(t, srv.DSN("cancel_timeout=2s cancel_grace=0s"))
	bg := context.Background()
	c.wmu.Lock()
	c.flushing = true // a writer that has not run yet
	c.wmu.Unlock()
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	_, err := c.Exec(ctx, "SELECT 1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec: %v; want its ctx's error", err)
	}
	time.Sleep(300 * time.Millisecond) // the drain probes meanwhile
	c.wmu.Lock()
	c.flushing = false
	start := c.takeWriterLocked()
	c.wmu.Unlock()
	if !start {
		t.Fatal("writes are held (a cancel for a statement never sent)")
	}
	go c.flushLoop()
	var v int
	if err := c.QueryRow(bg, "SELECT 42").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after: %d, %v", v, err)
	}
}
