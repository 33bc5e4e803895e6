package pgline

// A reading caller's ctx ends: Next and Scan stop promptly with its error,
// every row before was the reply's own, the statements queued behind get
// their own answers, and a ctx watch never outlives its request.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// deadlockWatchdog closes c and dumps the goroutines when the test has
// not ended after d (a deadlock), and returns the stop function.
func deadlockWatchdog(t *testing.T, c *Conn, d time.Duration) func() {
	done := make(chan struct{})
	timer := time.AfterFunc(d, func() {
		select {
		case <-done:
		default:
			buf := make([]byte, 1<<20)
			t.Errorf("deadlock: no progress after %v:\n%s", d, buf[:runtime.Stack(buf, true)])
			c.Close()
		}
	})
	return func() { timer.Stop(); close(done) }
}

// ownOutcomeErr checks a caller's outcome: its own value, or (when its
// ctx can end) its own ctx's error, never someone else's cancel.
func ownOutcomeErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrCanceledByOther) {
		return fmt.Errorf("another caller's cancel: %w", err)
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return fmt.Errorf("not its own ctx's error (ctx: %v): %w", ctx.Err(), err)
}

// TestRowsCtxEndsWhileIterating: a reply of ~3 MB that spans
// many reads is iterated slowly; its ctx ends at a random point, in the
// read buffer or while a read waits on the socket. Next stops promptly
// with ctx's error, every row before was the reply's own, and the
// statements queued behind get their own answers. Over TCP, TLS (a read
// interrupted mid-record) and the Unix socket.
func TestRowsCtxEndsWhileIterating(t *testing.T) {
	dsns := map[string]string{"tcp": srv.DSN(), "tls": srv.DSN("sslmode=require"), "unix": srv.SocketDSN()}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			c := connect(t, dsn)
			defer deadlockWatchdog(t, c, 30*time.Second)()
			bg := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			for round := range 12 {
				ctx, cancel := context.WithCancel(bg)
				rows, err := c.Query(ctx, "SELECT g, repeat(chr(65 + g % 26), 150) FROM generate_series(1, 20000) g")
				if err != nil {
					t.Fatal(err)
				}
				behind := make(chan error, 4)
				for j := range 4 {
					go func() {
						var v int
						want := round*10 + j
						err := c.QueryRow(bg, "SELECT $1::int", want).Scan(&v)
						if err == nil && v != want {
							err = fmt.Errorf("got %d, want %d", v, want)
						}
						behind <- err
					}()
				}
				stopAt := 1 + rng.IntN(19000)
				var cancelled time.Time
				n := 0
				for {
					ended := ctx.Err() != nil
					if !rows.Next() {
						break
					}
					if ended {
						t.Fatalf("round %d: Next returned row %d after the ctx ended (at row %d)", round, n+1, stopAt)
					}
					var g int
					var s string
					if err := rows.Scan(&g, &s); err != nil {
						t.Fatalf("round %d: Scan: %v", round, err)
					}
					n++
					if g != n || len(s) != 150 || s[0] != byte(65+g%26) {
						t.Fatalf("round %d: row %d is (%d, %q...)", round, n, g, s[:min(len(s), 3)])
					}
					if n == stopAt {
						if rng.IntN(2) == 0 {
							cancel()
						} else {
							// From another goroutine, while Next may wait on the socket.
							d := time.Duration(rng.IntN(300)) * time.Microsecond
							go func() { time.Sleep(d); cancel() }()
						}
						cancelled = time.Now()
					}
					if n%1000 == 0 {
						time.Sleep(100 * time.Microsecond)
					}
				}
				returned := time.Now()
				if n == 20000 {
					// The ctx may end, on a loaded machine, only after the
					// last row: then Next stops at the reply's end with
					// the ctx's error, as it must once the ctx has ended.
					if err := rows.Err(); err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() != nil) {
						t.Fatalf("round %d: all rows, then %v", round, err)
					}
				} else if !errors.Is(rows.Err(), context.Canceled) {
					t.Fatalf("round %d: stopped after %d rows with %v, want context.Canceled", round, n, rows.Err())
				} else if d := returned.Sub(cancelled); d > 500*time.Millisecond {
					t.Fatalf("round %d: Next returned %v after the ctx ended", round, d)
				}
				rows.Close()
				cancel()
				for range 4 {
					if err := <-behind; err != nil {
						t.Fatalf("round %d: a statement behind: %v", round, err)
					}
				}
			}
			if c.IsClosed() {
				t.Fatal("connection closed")
			}
		})
	}
}

// TestRowsDeadlineServerStallsMidReply: the first rows of a reply arrive
// at once, then the server stalls (pg_sleep at row 300). The caller reads
// slowly through the buffered rows while its deadline passes: Next
// returns the deadline's error at it, whether the end comes while rows
// are still buffered or while the read waits on the socket, and the
// statement queued behind gets its own answer.
func TestRowsDeadlineServerStallsMidReply(t *testing.T) {
	c := connect(t, srv.DSN())
	defer deadlockWatchdog(t, c, 30*time.Second)()
	bg := context.Background()
	for _, d := range []time.Duration{5 * time.Millisecond, 40 * time.Millisecond, 150 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(bg, d)
		start := time.Now()
		rows, err := c.Query(ctx, "SELECT g, repeat('r', 100), pg_sleep(CASE WHEN g = 300 THEN 2 ELSE 0 END) FROM generate_series(1, 400) g")
		behind := make(chan error, 1)
		go func() {
			var v int
			err := c.QueryRow(bg, "SELECT $1::int", int(d)).Scan(&v)
			if err == nil && v != int(d) {
				err = fmt.Errorf("got %d, want %d", v, int(d))
			}
			behind <- err
		}()
		n := 0
		if err == nil {
			for {
				ended := ctx.Err() != nil
				if !rows.Next() {
					break
				}
				if ended {
					t.Fatalf("%v: row %d after the deadline", d, n+1)
				}
				var g int
				var s string
				if err := rows.Scan(&g, &s, nil); err != nil {
					t.Fatal(err)
				}
				if n++; g != n {
					t.Fatalf("%v: row %d is %d", d, n, g)
				}
				time.Sleep(100 * time.Microsecond)
			}
			err = rows.Err()
			rows.Close()
		}
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v: %d rows, then %v; want context.DeadlineExceeded", d, n, err)
		}
		if took > d+500*time.Millisecond {
			t.Errorf("%v deadline: returned after %v (%d rows)", d, took, n)
		}
		if err := <-behind; err != nil {
			t.Fatalf("%v: the statement behind: %v", d, err)
		}
	}
}

// TestRowsOpenOthersCtxEnd: a goroutine holds Rows open (the
// head) and pauses; others queue behind it, half with deadlines that end
// during the pause. Those return their ctx's error at their deadline,
// the rows go on to the end with nothing missing, and the Background
// callers behind get their own values.
func TestRowsOpenOthersCtxEnd(t *testing.T) {
	c := connect(t, srv.DSN())
	defer deadlockWatchdog(t, c, 30*time.Second)()
	bg := context.Background()
	for round := range 4 {
		hctx, hcancel := context.WithTimeout(bg, 10*time.Second)
		rows, err := c.Query(hctx, "SELECT g, md5(g::text) FROM generate_series(1, 5000) g")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		check := func() {
			var g int
			var s string
			if err := rows.Scan(&g, &s); err != nil {
				t.Fatal(err)
			}
			n++
			if g != n || len(s) != 32 {
				t.Fatalf("round %d: row %d is (%d, %q)", round, n, g, s)
			}
		}
		for n < 2500 && rows.Next() {
			check()
		}
		type res struct {
			deadline time.Duration
			took     time.Duration
			err      error
		}
		results := make(chan res, 30)
		for j := range 30 {
			go func() {
				var d time.Duration
				ctx, cancel := bg, context.CancelFunc(func() {})
				if j%2 == 0 {
					d = time.Duration(20+j) * time.Millisecond
					ctx, cancel = context.WithTimeout(bg, d)
				}
				defer cancel()
				start := time.Now()
				want := round*100 + j
				var v int
				var err error
				switch j % 3 {
				case 0:
					err = c.QueryRow(ctx, "SELECT $1::int", want).Scan(&v)
				case 1:
					var tag CommandTag
					tag, err = c.Exec(ctx, "SELECT $1::int", want)
					v = want
					if err == nil && tag.String() != "SELECT 1" {
						err = fmt.Errorf("tag %q", tag)
					}
				default:
					b := &Batch{}
					b.Queue("SELECT $1::int", want)
					br := c.SendBatch(ctx, b)
					err = br.QueryRow().Scan(&v)
					if cerr := br.Close(); err == nil {
						err = cerr
					}
				}
				if err == nil && v != want {
					err = fmt.Errorf("got %d, want %d", v, want)
				}
				results <- res{d, time.Since(start), ownOutcomeErr(ctx, err)}
			}()
		}
		time.Sleep(300 * time.Millisecond) // the deadlines end while the rows are open
		for rows.Next() {
			check()
		}
		if err := rows.Err(); err != nil || n != 5000 {
			t.Fatalf("round %d: %d rows, %v", round, n, err)
		}
		hcancel()
		for range 30 {
			r := <-results
			if r.err != nil {
				t.Errorf("round %d: %v", round, r.err)
			}
			if r.deadline > 0 && r.took > r.deadline+250*time.Millisecond {
				t.Errorf("round %d: a caller with a %v deadline returned after %v", round, r.deadline, r.took)
			}
		}
	}
}

// TestCtxWatchRecycledRequest: statements whose ctx is cancelled at random
// times around their end (before, during, just after the caller
// returned, while the reader is handed on) share the Conn with Background
// statements that wait on the socket (pg_sleep). A watch left armed, or
// armed by a later read after its request was recycled, would put a past
// read deadline on someone else's read: the Background statements must
// all succeed with their own value and the connection stay open.
func TestCtxWatchRecycledRequest(t *testing.T) {
	c := connect(t, srv.DSN())
	defer deadlockWatchdog(t, c, 30*time.Second)()
	bg := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var cancellers sync.WaitGroup
	for g := range 8 {
		cancellers.Add(1)
		go func() {
			defer cancellers.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := g*100000 + i
				ctx, cancel := context.WithCancel(bg)
				done := make(chan struct{})
				go func() {
					if d := rng.IntN(400); d > 0 {
						time.Sleep(time.Duration(d) * time.Microsecond)
					}
					cancel()
					close(done)
				}()
				var v int
				var err error
				if i%3 == 0 {
					rows, qerr := c.Query(ctx, "SELECT $1::int FROM generate_series(1, 50)", id)
					err = qerr
					if qerr == nil {
						for rows.Next() {
							if rows.Scan(&v); v != id {
								err = fmt.Errorf("got %d, want %d", v, id)
							}
						}
						if rows.Err() != nil {
							err = rows.Err()
						}
						rows.Close()
					}
				} else {
					err = c.QueryRow(ctx, "SELECT $1::int", id).Scan(&v)
					if err == nil && v != id {
						err = fmt.Errorf("got %d, want %d", v, id)
					}
				}
				<-done
				if err = ownOutcomeErr(ctx, err); err != nil {
					t.Errorf("cancelled caller %d: %v", g, err)
					return
				}
				// Paced: callers that leave at once could queue requests
				// faster than the connection drains them.
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				id := -(g*1000 + i)
				var v int
				err := c.QueryRow(bg, "SELECT $1::int FROM pg_sleep(0.002)", id).Scan(&v)
				if err == nil && v != id {
					err = fmt.Errorf("got %d, want %d", v, id)
				}
				if err != nil {
					t.Errorf("background caller %d, statement %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	cancellers.Wait()
	if c.IsClosed() {
		t.Fatal("connection closed")
	}
	t.Logf("%d requests, %d CancelRequest", c.s.SeqNext, c.s.CancelClock.Load()/2)
}

// slowStreamWriter takes every write, delay after it is called.
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
			c := connect(t, srv.DSN())
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
