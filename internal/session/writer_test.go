package session

// The writer's role handed over between callers (writer.flushUnlock and
// overdueLocked: a writer that yields, a caller that takes its role over):
// many goroutines share one Session, each checking the echo of its own
// unique value, so that a reply delivered to the wrong caller, a
// statement lost, doubled or reordered, or bytes of two writers
// interleaved shows. These are storms.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// takeovers reads s.Writer.Takeovers under Wmu.
func takeovers(s *Session) uint64 {
	s.Wmu.Lock()
	defer s.Wmu.Unlock()
	return s.Writer.Takeovers
}

// waitWriterIdle waits for the session to go idle and checks the
// takeover's bookkeeping: nothing queued, nobody writing or yielding.
func waitWriterIdle(t *testing.T, s *Session) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.Wmu.Lock()
		q, f, y, tail, w := s.Queued, s.Writer.Taken, s.Writer.Yielding, s.Tail, len(s.Writer.Wbuf)
		s.Wmu.Unlock()
		if q == 0 && !f && !y && tail == nil && w == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("not idle: queued %d, writer taken %v, yielding %v, tail %v, wbuf %d", q, f, y, tail != nil, w)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// echo runs sql, whose columns are cast to text, as the API's QueryRow
// does, and returns its first row's values ("" for a missing one).
func echo(ctx context.Context, s *Session, sql string, args ...any) ([]string, error) {
	rows, err := queryResendingText(ctx, s, sql, args...)
	if err == nil && len(rows) == 0 {
		err = errors.New("no rows")
	}
	if len(rows) == 0 {
		return make([]string, 2), err
	}
	return rows[0], err
}

// itoa is v in decimal.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// runEchoLoad runs g goroutines on s for d, each running SELECT $1::int8
// with values unique across the run, and reports the mismatches.
func runEchoLoad(t *testing.T, ctx context.Context, s *Session, g int, d time.Duration) (n int64) {
	t.Helper()
	var seq atomic.Int64
	var wg sync.WaitGroup
	var bad atomic.Int64
	end := time.Now().Add(d)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && bad.Load() < 10 {
				v := seq.Add(1)
				got, err := echo(ctx, s, "SELECT $1::int8::text", v)
				if err != nil || got[0] != itoa(v) {
					bad.Add(1)
					t.Errorf("sent %d, got %s, %v", v, got[0], err)
				}
			}
		}()
	}
	wg.Wait()
	return seq.Load()
}

// TestWriterTakeoverEchoesOwnValue: 2..500 goroutines on one Session,
// Syncs shared or not (pipeline_sync=each), over TCP and the Unix socket;
// every caller must read its own echo, and takeovers must actually have
// happened (or the test proves nothing).
func TestWriterTakeoverEchoesOwnValue(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each", "unix", "unix pipeline_sync=each"} {
		for _, g := range []int{2, 3, 8, 50, 500} {
			if strings.HasPrefix(dsn, "unix") && g != 50 {
				continue
			}
			t.Run(fmt.Sprintf("%s/g%d", dsn, g), func(t *testing.T) {
				var s *Session
				if strings.HasPrefix(dsn, "unix") {
					s = dialSessionUnix(t, syncEach(dsn))
				} else {
					s = dialSessionOpts(t, syncEach(dsn))
				}
				ctx := testCtx(t)
				// Rounds of a second until a takeover has happened (a
				// loaded machine may see none in one), at most five.
				wantTakeover := g >= 8 && g <= 50
				var n int64
				for round := 0; round < 5 && (round == 0 || wantTakeover && takeovers(s) == 0); round++ {
					n += runEchoLoad(t, ctx, s, g, time.Second)
				}
				tk := takeovers(s)
				t.Logf("%d statements, %d takeovers", n, tk)
				if wantTakeover && tk == 0 {
					t.Errorf("no takeover happened: the test exercised nothing")
				}
				// The session still answers in order afterwards.
				if got, err := echo(ctx, s, "SELECT 424242::int8::text"); err != nil || got[0] != "424242" {
					t.Fatalf("after: %s %v", got[0], err)
				}
				waitWriterIdle(t, s)
			})
		}
	}
}

// syncEach returns the options of pipeline_sync=each (ShareSyncs false)
// when dsn ends with it, else of pipeline_sync=shared.
func syncEach(dsn string) func(*SessionOpts) {
	return func(o *SessionOpts) { o.ShareSyncs = !strings.HasSuffix(dsn, "pipeline_sync=each") }
}

// TestWriterTakeoverPartialWrites: a takeover whose write the socket does
// not take at once leaves the rest to flushRest, which keeps the role.
// Large parameters, a head that keeps the server busy (so it stops
// reading), callers with deadlines behind it: every caller reads its own
// value, or its ctx's error within a second of its deadline.
func TestWriterTakeoverPartialWrites(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			s := dialSessionOpts(t, syncEach(dsn))
			ctx := testCtx(t)
			var seq, bad, oks, ctxErrs, maxOver atomic.Int64
			end := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for i := 0; i < 40; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						size := 10 + int(v%7)*40000
						x := strings.Repeat("x", size)
						qctx, cancel := ctx, context.CancelFunc(func() {})
						var deadline time.Time
						sql := "SELECT length($1::text)::text, $2::int8::text"
						if i%8 == 0 && v%4 == 0 {
							sql = "SELECT length($1::text)::text, $2::int8::text FROM pg_sleep(0.005)"
						}
						if i%5 == 0 {
							deadline = time.Now().Add(5 * time.Millisecond)
							qctx, cancel = context.WithDeadline(ctx, deadline)
						}
						got, err := echo(qctx, s, sql, x, v)
						cancel()
						switch {
						case err == nil && got[0] == strconv.Itoa(size) && got[1] == itoa(v):
							oks.Add(1)
						case err != nil && !deadline.IsZero() && errors.Is(err, context.DeadlineExceeded):
							ctxErrs.Add(1)
							over := time.Since(deadline)
							for m := maxOver.Load(); int64(over) > m && !maxOver.CompareAndSwap(m, int64(over)); m = maxOver.Load() {
							}
							if over > time.Second {
								bad.Add(1)
								t.Errorf("ctx error %v past the deadline", over)
							}
						default:
							bad.Add(1)
							t.Errorf("sent %d (%d bytes), got %s (%s) %v", v, size, got[1], got[0], err)
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("ok %d, ctx %d, takeovers %d, latest ctx error %v past its deadline", oks.Load(), ctxErrs.Load(), takeovers(s), time.Duration(maxOver.Load()))
			if got, err := echo(ctx, s, "SELECT 5::int8::text"); err != nil || got[0] != "5" {
				t.Fatalf("after: %s %v", got[0], err)
			}
			waitWriterIdle(t, s)
			if takeovers(s) == 0 {
				t.Logf("no takeover happened")
			}
		})
	}
}

// TestWriterTakeoverShortCtx: echo goroutines mixed with goroutines whose
// ctx ends after a random few microseconds (abandoned requests drained by
// others, cancels held with writer.pauseLocked). Every answer that
// arrives must be the caller's own; a ctx error must come within a bound
// of its deadline; the session must stay usable.
func TestWriterTakeoverShortCtx(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			s := dialSessionOpts(t, func(o *SessionOpts) {
				syncEach(dsn)(o)
				o.CancelGrace = time.Millisecond // cancel_grace=1ms
			})
			ctx := testCtx(t)
			var seq atomic.Int64
			var wg sync.WaitGroup
			var bad, late, ctxErrs, oks, maxEcho atomic.Int64
			end := time.Now().Add(time.Second)
			for i := 0; i < 200; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					short := i%8 == 0
					for time.Now().Before(end) && bad.Load() < 10 {
						v := seq.Add(1)
						qctx, cancel := ctx, context.CancelFunc(func() {})
						var deadline time.Time
						sql := "SELECT $1::int8::text"
						if short {
							d := time.Duration(rand.IntN(300)) * time.Microsecond
							deadline = time.Now().Add(d)
							qctx, cancel = context.WithDeadline(ctx, deadline)
							if rand.IntN(20) == 0 {
								sql = "SELECT $1::int8::text FROM pg_sleep(0.002)"
							}
						}
						t0 := time.Now()
						got, err := echo(qctx, s, sql, v)
						if el := int64(time.Since(t0)); !short && el > maxEcho.Load() {
							maxEcho.Store(el)
						}
						cancel()
						switch {
						case err == nil && got[0] == itoa(v):
							oks.Add(1)
						case err != nil && short && errors.Is(err, context.DeadlineExceeded):
							ctxErrs.Add(1)
							if over := time.Since(deadline); over > time.Second { // -race on a small, loaded machine
								late.Add(1)
								t.Errorf("ctx error %v after the deadline", over)
							}
						default:
							bad.Add(1)
							t.Errorf("short=%v sent %d, got %s, %v", short, v, got[0], err)
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("ok %d, ctx errors %d, takeovers %d, slowest echo %v", oks.Load(), ctxErrs.Load(), takeovers(s), time.Duration(maxEcho.Load()))
			if got, err := echo(ctx, s, "SELECT 77::int8::text"); err != nil || got[0] != "77" {
				t.Fatalf("after: %s %v", got[0], err)
			}
			waitWriterIdle(t, s)
		})
	}
}

// TestWriterTakeoverRunsEachInsertOnce: takeovers with Sync sharing and
// failures: a failing statement makes the server skip the rest of its
// Sync group, whose runs are sent again. With takeovers splitting and
// joining writes, every INSERT must run exactly once (a unique key shows
// a second run, the final count a lost one) and answer its own caller.
func TestWriterTakeoverRunsEachInsertOnce(t *testing.T) {
	storm(t)
	variants := []struct {
		name string
		set  func(*SessionOpts)
	}{
		{"", nil},
		{"pipeline_sync=each", syncEach("pipeline_sync=each")},
		{"statement_cache_mode=describe", func(o *SessionOpts) { o.CacheMode = CacheDescribe }},
		// The kit's default, as the API's auto mode is on a server without
		// a pooler.
		{"statement_cache_mode=prepare", func(o *SessionOpts) { o.CacheMode = CachePrepare }},
	}
	for _, vt := range variants {
		t.Run(vt.name, func(t *testing.T) {
			s := dialSessionOpts(t, vt.set)
			other := dialSession(t)
			ctx := testCtx(t)
			tbl := uniqueTable(t, other, "takeover_once")
			mustExec(t, ctx, other, "CREATE TABLE "+tbl+" (k int8 PRIMARY KEY)")
			var seq, bad, inserted, failed atomic.Int64
			fail := func(f string, a ...any) {
				if bad.Add(1) <= 10 {
					t.Errorf(f, a...)
				}
			}
			// Rounds of 1.5 s until a takeover has happened (a loaded
			// machine may see none in one), at most five.
			for round := 0; round < 5 && bad.Load() == 0 && (round == 0 || takeovers(s) == 0); round++ {
				insertStormRound(ctx, s, tbl, &seq, &bad, &inserted, &failed, fail)
			}
			if n, err := queryInts(ctx, other, "SELECT count(*)::text FROM "+tbl); err != nil || n[0] != inserted.Load() {
				t.Errorf("table has %v rows, %d inserts succeeded (%v)", n, inserted.Load(), err)
			}
			waitWriterIdle(t, s)
			shared, _ := syncCounts(s)
			t.Logf("inserted %d, failed %d, shared syncs %d, takeovers %d", inserted.Load(), failed.Load(), shared, takeovers(s))
			if takeovers(s) == 0 {
				t.Errorf("no takeover happened")
			}
		})
	}
}

// insertStormRound is one round of TestWriterTakeoverRunsEachInsertOnce:
// 80 goroutines for 1.5 s, one in eight running a failing division, the
// others an INSERT of a new key that must echo its own key.
func insertStormRound(ctx context.Context, s *Session, tbl string, seq, bad, inserted, failed *atomic.Int64, fail func(string, ...any)) {
	end := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 80; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && bad.Load() < 10 {
				v := seq.Add(1)
				if i%8 == 0 {
					x, err := echo(ctx, s, "SELECT (1/($1::int8 - $1::int8))::text", v)
					if sqlState(err) != "22012" {
						fail("division: %s %v", x[0], err)
					}
					failed.Add(1)
					continue
				}
				if got, err := echo(ctx, s, "INSERT INTO "+tbl+" VALUES ($1) RETURNING k::text", v); err != nil || got[0] != itoa(v) {
					fail("insert %d: got %s %v", v, got[0], err)
					continue
				}
				inserted.Add(1)
			}
		}()
	}
	wg.Wait()
}

// TestWriterTakeoverCancelStorm: takeovers under cancels: pg_cancel_backend
// from another session and abandoned heads whose drain holds writes with
// a CancelRequest (writer.pauseLocked), while echo goroutines take the
// yielding writer's role over. A caller may get 57014 or its ctx's error,
// never another caller's value; the session must stay in sync.
func TestWriterTakeoverCancelStorm(t *testing.T) {
	storm(t)
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		for _, withCtx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ctx=%v", dsn, withCtx), func(t *testing.T) {
				s := dialSessionOpts(t, func(o *SessionOpts) {
					syncEach(dsn)(o)
					o.CancelGrace = time.Millisecond // cancel_grace=1ms
				})
				killer := dialSession(t)
				// Rounds of a second until a takeover has happened (it needs
				// a writer yielding while half the queue waits: under a
				// loaded -race run, with drains holding writes, several
				// rounds may see none), for at most 40 s. A round ends
				// once its calls have: seconds after its end under load,
				// hence a ctx of the storm's own, not testCtx's 30 s.
				ctx, cancelStorm := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancelStorm()
				start := time.Now()
				var seq, bad, oks, canceled, ctxErrs atomic.Int64
				for round := 0; bad.Load() == 0 && (round == 0 || takeovers(s) == 0 && time.Since(start) < 40*time.Second); round++ {
					end := time.Now().Add(time.Second)
					var wg sync.WaitGroup
					for i := 0; i < 60; i++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for time.Now().Before(end) && bad.Load() < 10 {
								v := seq.Add(1)
								qctx, cancel := ctx, context.CancelFunc(func() {})
								sql := "SELECT $1::int8::text"
								switch {
								case withCtx && i%10 == 0:
									qctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(2000))*time.Microsecond)
									sql = "SELECT $1::int8::text FROM pg_sleep(0.001)"
								case i%4 == 0:
									sql = "SELECT $1::int8::text FROM pg_sleep(0.0005)"
								}
								got, err := echo(qctx, s, sql, v)
								cancel()
								switch {
								case err == nil && got[0] == itoa(v):
									oks.Add(1)
								case sqlState(err) == "57014":
									canceled.Add(1)
								case err != nil && qctx.Err() != nil && errors.Is(err, qctx.Err()):
									ctxErrs.Add(1)
								default:
									bad.Add(1)
									t.Errorf("sent %d got %s %v", v, got[0], err)
								}
							}
						}()
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Now().Before(end) {
							if _, _, err := queryResending(ctx, killer, "SELECT pg_cancel_backend($1)", int32(s.PID)); err != nil {
								t.Error(err)
								return
							}
							time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
						}
					}()
					wg.Wait()
				}
				t.Logf("ok %d, 57014 %d, ctx %d, takeovers %d, in %v", oks.Load(), canceled.Load(), ctxErrs.Load(), takeovers(s), time.Since(start))
				// In sync afterwards (a stray cancel may still hit: retry once).
				ctx = testCtx(t)
				got, err := echo(ctx, s, "SELECT 31337::int8::text")
				if err != nil {
					got, err = echo(ctx, s, "SELECT 31337::int8::text")
				}
				if err != nil || got[0] != "31337" {
					t.Fatalf("after: %s %v", got[0], err)
				}
				waitWriterIdle(t, s)
				if takeovers(s) == 0 {
					t.Errorf("no takeover happened")
				}
			})
		}
	}
}
