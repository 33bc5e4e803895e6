package pgline

// Storms through PgBouncer: random deadlines (pgline's own cancels),
// callers without deadline and an independent client cancelling its own
// statements, in transaction and session mode. Opt-in: storm(t).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// bouncerStorm runs, for dur, goroutines on a Pool through b whose
// calls end by random deadlines (pgline's own cancels: meant for them,
// landing on whatever PgBouncer links the client to), goroutines without
// deadline on the same Pool (victims: each must get its own value or an
// error that is not a bare 57014), and an independent client (its own
// Conn through b) that cancels its own statements all the time. Every
// INSERT has its own id: none may run twice, and every reported success
// must have its row.
func bouncerStorm(t *testing.T, b *pgtest.PgBouncer, table string, dur time.Duration, extra ...string) {
	admin := connect(t, srv.DSN())
	ctx := testCtx(t)
	freshIDTable(t, admin, table)
	p, err := NewPool(ctx, b.DSN(append([]string{"pool_max_conns=2"}, extra...)...))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other := bouncerConn(t, b, extra...)

	stop := time.Now().Add(dur)
	var nextID atomic.Int64
	var mu sync.Mutex
	okIDs := map[int64]bool{}
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	var stats struct{ ctxErr, byOther, ok, otherCancels, maxVictim atomic.Int64 }
	noteLatency := func(start time.Time) {
		d := int64(time.Since(start))
		if time.Duration(d) > time.Second && os.Getenv("PGLINE_BOUNCER_LOG") != "" {
			t.Logf("slow victim call: %s .. %s", start.Format("15:04:05.000"), time.Now().Format("15:04:05.000"))
		}
		for {
			m := stats.maxVictim.Load()
			if d <= m || stats.maxVictim.CompareAndSwap(m, d) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	// Cancelers on the Pool.
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for time.Now().Before(stop) {
				d := time.Duration(5+rng.IntN(40)) * time.Millisecond
				cctx, cancel := context.WithTimeout(ctx, d)
				var v int
				want := rng.IntN(1 << 20)
				start := time.Now()
				err := p.QueryRow(cctx, "SELECT $1::int FROM pg_sleep($2::float8)", want, float64(rng.IntN(40))/1000).Scan(&v)
				if late := time.Since(start) - d; late > 500*time.Millisecond { // -race on a small, loaded machine: stalls of 300 ms seen
					report("canceler: returned %v after its deadline (%v)", late, err)
				}
				cancel()
				switch {
				case err == nil && v != want:
					report("canceler: got %d, want %d", v, want)
				case err == nil:
				case cctx.Err() != nil:
					stats.ctxErr.Add(1)
				case errors.Is(err, ErrCanceledByOther):
					stats.byOther.Add(1)
				default:
					report("canceler (ctx alive): %v", err)
				}
			}
		}(g)
	}
	// Victims: no deadline.
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for time.Now().Before(stop) {
				start := time.Now()
				if rng.IntN(2) == 0 {
					id := nextID.Add(1)
					_, err := p.Exec(ctx, "INSERT INTO "+table+" SELECT $1::int FROM pg_sleep($2::float8)", id, float64(rng.IntN(20))/1000)
					noteLatency(start)
					switch {
					case err == nil:
						stats.ok.Add(1)
						mu.Lock()
						okIDs[id] = true
						mu.Unlock()
					case errors.Is(err, ErrCanceledByOther):
						stats.byOther.Add(1)
					default:
						report("victim insert %d: %v", id, err)
					}
					continue
				}
				want := rng.IntN(1 << 20)
				var v int
				err := p.QueryRow(ctx, "SELECT $1::int FROM pg_sleep($2::float8)", want, float64(rng.IntN(20))/1000).Scan(&v)
				noteLatency(start)
				switch {
				case err == nil && v != want:
					report("victim select: got %d, want %d", v, want)
				case err == nil:
					stats.ok.Add(1)
				case errors.Is(err, ErrCanceledByOther):
					stats.byOther.Add(1)
				default:
					report("victim select: %v", err)
				}
			}
		}(g)
	}
	// The independent client, cancelling its own statements.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(99, 1))
		for time.Now().Before(stop) {
			cctx, cancel := context.WithTimeout(ctx, time.Duration(5+rng.IntN(30))*time.Millisecond)
			_, err := other.Exec(cctx, "SELECT pg_sleep(0.03)")
			cancel()
			if err != nil {
				stats.otherCancels.Add(1)
			}
			if other.IsClosed() {
				report("independent client closed: %v", err)
				return
			}
		}
	}()
	if os.Getenv("PGLINE_BOUNCER_DIAG") != "" {
		for i := 0; i < 3; i++ {
			time.Sleep(1500 * time.Millisecond)
			t.Logf("clients:\n%s\nservers:\n%s", bouncerAdmin(t, b, "SHOW CLIENTS"), bouncerAdmin(t, b, "SHOW SERVERS"))
		}
	}
	wg.Wait()
	t.Logf("ok %d, ctx errors %d, ErrCanceledByOther %d, independent client's ctx errors %d, slowest victim call %v",
		stats.ok.Load(), stats.ctxErr.Load(), stats.byOther.Load(), stats.otherCancels.Load(), time.Duration(stats.maxVictim.Load()))
	for _, pr := range problems {
		t.Error(pr)
	}
	rows, err := admin.Query(ctx, "SELECT id, count(*)::int FROM "+table+" GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		seen[id] = true
		if n > 1 {
			t.Errorf("INSERT of id %d ran %d times", id, n)
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for id := range okIDs {
		if !seen[id] {
			t.Errorf("INSERT of id %d reported success, no row", id)
		}
	}
}

// TestBouncerStorm_Transaction: the storm through PgBouncer in
// transaction mode, 3 server connections shared by the 2 pgline
// connections and the independent client. (With 2 server connections, a
// pipelining client rarely has no Sync outstanding, so PgBouncer never
// releases its server: the third client waits in PgBouncer's queue for
// the whole storm. Calls with a deadline keep it; those without wait.)
func TestBouncerStorm_Transaction(t *testing.T) {
	storm(t)
	b := startSmallBouncer(t, "transaction", "default_pool_size = 3")
	bouncerStorm(t, b, "pgbouncer_storm_tx", 4*time.Second)
}

// TestBouncerStorm_EagerCancel: the transaction-mode storm with
// cancel_grace=1ms, so that pgline sends many CancelRequests (through
// PgBouncer) while statements of its own and of others follow.
func TestBouncerStorm_EagerCancel(t *testing.T) {
	storm(t)
	b := startSmallBouncer(t, "transaction", "default_pool_size = 3")
	bouncerStorm(t, b, "pgbouncer_storm_eager", 4*time.Second, "cancel_grace=1ms")
	t.Logf("cancels forwarded by PgBouncer: %d, dropped (client not linked): %d",
		strings.Count(b.Log(), "started sending cancel request"), strings.Count(b.Log(), "cancel request for idle client"))
}

// TestBouncerStorm_Session: the same in session mode, for comparison.
func TestBouncerStorm_Session(t *testing.T) {
	storm(t)
	b := startSmallBouncer(t, "session", "default_pool_size = 4")
	bouncerStorm(t, b, "pgbouncer_storm_ses", 3*time.Second)
}
