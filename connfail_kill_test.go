package pgline

// The connection ends under its callers (pg_terminate_backend, Close):
// every caller returns, with its own result or an error; SafeToRetry only
// for requests none of whose bytes reached the socket.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestConnKilledMidWriteSafeToRetry: many goroutines INSERT rows with large
// values (partial writes, flushers) while the backend is killed
// (pg_terminate_backend) or the Conn closed at a random moment. A request
// reported SafeToRetry must not have run; a success must have; retrying
// the SafeToRetry ones must not make any row appear twice.
func TestConnKilledMidWriteSafeToRetry(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS write_kill; CREATE TABLE write_kill(id int, pad text)"); err != nil {
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

// killMidWriteRound runs one round of TestConnKilledMidWriteSafeToRetry:
// 40 INSERTs of round, ended by how after delay, and checks each outcome
// against the rows that ran; it returns the count of each outcome.
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
			_, errs[i] = c.Exec(ctx, "INSERT INTO write_kill VALUES ($1, $2)", round*1000+i, pad)
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
	rows, err := admin.Query(ctx, "SELECT id FROM write_kill WHERE id / 1000 = $1", round)
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
		case session.SafeToRetry(err):
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
			if _, err := c2.Exec(ctx, "INSERT INTO write_kill VALUES ($1, 'retry')", round*1000+i); err != nil {
				t.Fatal(err)
			}
		}
		var dup int
		if err := admin.QueryRow(ctx, "SELECT count(*)::int FROM (SELECT id FROM write_kill WHERE id / 1000 = $1 GROUP BY id HAVING count(*) > 1) d", round).Scan(&dup); err != nil {
			t.Fatal(err)
		}
		if dup != 0 {
			t.Errorf("%s round %d: %d ids inserted twice after retrying the SafeToRetry ones", how, round, dup)
		}
	}
	return safe, failed, ok
}

// TestConnTerminatedPipelined: pg_terminate_backend while statements are
// pipelined and while a drain runs: every caller gets its own result or an
// error, never someone else's, and returns promptly.
func TestConnTerminatedPipelined(t *testing.T) {
	for _, during := range []string{"pipelined", "drain"} {
		t.Run(during, func(t *testing.T) {
			c := connect(t, srv.DSN())
			admin := connect(t, srv.DSN())
			ctx := testCtx(t)
			c.Prepare(ctx, "SELECT $1::int, pg_sleep($2::float8)")
			if during == "drain" {
				go func() {
					actx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
					defer cancel()
					c.Exec(actx, "SELECT pg_sleep(1) /* drainme */")
				}()
				time.Sleep(5 * time.Millisecond)
			}
			var wg sync.WaitGroup
			for i := 0; i < 10; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var got int
					s := time.Now()
					err := c.QueryRow(ctx, "SELECT $1::int, pg_sleep($2::float8)", i, 0.05).Scan(&got, nil)
					if err == nil && got != i {
						t.Errorf("%d got %d", i, got)
					}
					if err != nil && time.Since(s) > 3*time.Second {
						t.Errorf("%d: slow error %v", i, time.Since(s))
					}
					t.Logf("%d: got=%d err=%v safe=%v", i, got, err, session.SafeToRetry(err))
				}()
			}
			time.Sleep(60 * time.Millisecond)
			admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int(c.PID()))
			wg.Wait()
		})
	}
}

// TestConnEndUnderLoad: the connection ends under load (Close from a
// goroutine, or pg_terminate_backend from another session) while callers
// take the yielding writer's role over. Every caller must return (no
// hang), with its own value or an error.
func TestConnEndUnderLoad(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, how := range []string{"close", "terminate"} {
		for round := 0; round < 4; round++ {
			t.Run(fmt.Sprintf("%s/%d", how, round), func(t *testing.T) {
				c := connect(t, srv.DSN())
				killer := connect(t, srv.DSN())
				ctx := testCtx(t)
				var seq, bad, oks, errs atomic.Int64
				var stop atomic.Bool
				var wg sync.WaitGroup
				for i := 0; i < 100; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for !stop.Load() {
							v := seq.Add(1)
							var got int64
							err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
							switch {
							case err == nil && got == v:
								oks.Add(1)
							case err != nil:
								errs.Add(1)
								if c.IsClosed() {
									return
								}
							default:
								bad.Add(1)
								t.Errorf("sent %d got %d", v, got)
								return
							}
						}
					}()
				}
				time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
				if how == "close" {
					c.Close()
				} else if _, err := killer.Exec(ctx, "SELECT pg_terminate_backend($1)", int32(c.PID())); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					stop.Store(true)
					t.Fatalf("callers still waiting 10 s after the connection ended (ok %d, errors %d, takeovers %d)", oks.Load(), errs.Load(), writerTakeovers(c))
				}
				t.Logf("ok %d, errors %d, takeovers %d", oks.Load(), errs.Load(), writerTakeovers(c))
			})
		}
	}
}
