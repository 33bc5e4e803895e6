package pgline

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

// Test1000GoroutinesOneConn: every answer reaches its own caller, on one
// Conn and on a Pool.
func Test1000GoroutinesOneConn(t *testing.T) {
	c := connect(t, srv.DSN())
	p := newTestPool(t, "pool_max_conns=4")
	ctx := testCtx(t)
	for name, q := range map[string]func(context.Context, string, ...any) *Row{"conn": c.QueryRow, "pool": p.QueryRow} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			var bad sync.Map
			for i := 0; i < 1000; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var v int
					if err := q(ctx, "SELECT $1::int", i).Scan(&v); err != nil || v != i {
						bad.Store(i, fmt.Sprint(v, err))
					}
				}()
			}
			wg.Wait()
			bad.Range(func(k, v any) bool {
				t.Errorf("goroutine %v got %v", k, v)
				return true
			})
		})
	}
}

// TestLargeWritesAndRepliesShared: goroutines sharing one Conn send
// parameters larger than the socket buffers take at once while others'
// large replies are on their way. A goroutine that wrote others' bytes
// while its own reply waited to be read would deadlock with the server,
// which stops reading while nobody reads its output; every answer must
// come, and be its own. Both with a ctx that can end and without.
func TestLargeWritesAndRepliesShared(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	c := connect(t, srv.DSN())
	for _, kind := range []string{"background", "cancelable"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			if kind == "cancelable" {
				ctx = testCtx(t)
			}
			done := make(chan struct{})
			timer := time.AfterFunc(2*time.Minute, func() {
				select {
				case <-done:
				default:
					buf := make([]byte, 1<<20)
					t.Errorf("no answer after 2 minutes:\n%s", buf[:runtime.Stack(buf, true)])
					c.Close()
				}
			})
			defer timer.Stop()
			defer close(done)
			var wg sync.WaitGroup
			for g := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 6 {
						var n int
						var err error
						switch (g + i) % 3 {
						case 0: // a large parameter: 8 MB, with a small reply
							big := string(make([]byte, 8<<20+g))
							err = c.QueryRow(ctx, "SELECT length($1::bytea)", []byte(big)).Scan(&n)
							if err == nil && n != 8<<20+g {
								err = fmt.Errorf("length %d, want %d", n, 8<<20+g)
							}
						case 1: // a large reply: 8 MB
							var s string
							err = c.QueryRow(ctx, "SELECT repeat(chr(65 + $1::int), 8 << 20)", g%26).Scan(&s)
							if err == nil && (len(s) != 8<<20 || s[0] != byte('A'+g%26) || s[len(s)-1] != byte('A'+g%26)) {
								err = fmt.Errorf("a reply of %d bytes starting %q, want 8 MiB of %q", len(s), s[:min(len(s), 1)], string(rune('A'+g%26)))
							}
						default: // a small one
							err = c.QueryRow(ctx, "SELECT $1::int", g*100+i).Scan(&n)
							if err == nil && n != g*100+i {
								err = fmt.Errorf("%d, want %d", n, g*100+i)
							}
						}
						if err != nil {
							t.Errorf("goroutine %d, query %d: %v", g, i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestOkErrorOk: three goroutines, pipelined: ok / *PgError / ok.
func TestOkErrorOk(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		var r1, r3 int
		var e1, e2, e3 error
		wg.Add(3)
		go func() { defer wg.Done(); e1 = c.QueryRow(ctx, "SELECT 1").Scan(&r1) }()
		go func() { defer wg.Done(); _, e2 = c.Exec(ctx, "SELECT 1/0") }()
		go func() { defer wg.Done(); e3 = c.QueryRow(ctx, "SELECT 3").Scan(&r3) }()
		wg.Wait()
		var pgErr *PgError
		if e1 != nil || r1 != 1 || !errors.As(e2, &pgErr) || e3 != nil || r3 != 3 {
			t.Fatalf("round %d: %v %d / %v / %v %d", round, e1, r1, e2, e3, r3)
		}
	}
}

// TestSyntaxErrorTenGoroutines: one bad new statement from 10 goroutines
// at once: all get 42601; the next valid statement works.
func TestSyntaxErrorTenGoroutines(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = c.Exec(ctx, "SELEC $1::int", i) }()
	}
	wg.Wait()
	for i, err := range errs {
		var pgErr *PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Fatalf("goroutine %d: %v", i, err)
		}
	}
	var v int
	if err := c.QueryRow(ctx, "SELECT $1::int", 5).Scan(&v); err != nil || v != 5 {
		t.Fatal(v, err)
	}
}

// TestCancelOneOfFifty: cancelling one of 50 pipelined requests affects
// no other.
func TestCancelOneOfFifty(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 50)
		victim := round * 10
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				qctx := ctx
				if i == victim {
					var cancel context.CancelFunc
					qctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
					defer cancel()
				}
				var v int
				errs[i] = c.QueryRow(qctx, "SELECT $1::int FROM (SELECT pg_sleep(0.002)) s", i).Scan(&v)
				if errs[i] == nil && v != i {
					errs[i] = fmt.Errorf("got %d", v)
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if i != victim && err != nil {
				t.Fatalf("round %d: request %d failed: %v", round, i, err)
			}
		}
	}
}

// TestTxStatementsStayInside: a Tx's statements all run in its
// transaction, while other goroutines' statements run outside it.
func TestTxStatementsStayInside(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var txid int64
	if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&txid); err != nil {
		t.Fatal(err)
	}
	var out, in sync.WaitGroup
	outside := make([]int64, 20)
	inside := make([]int64, 20)
	for i := 0; i < 20; i++ {
		out.Add(1)
		in.Add(1)
		go func() { defer out.Done(); c.QueryRow(ctx, "SELECT txid_current()").Scan(&outside[i]) }()
		go func() { defer in.Done(); tx.QueryRow(ctx, "SELECT txid_current()").Scan(&inside[i]) }()
	}
	// The Tx's statements finish while the others wait; then commit.
	in.Wait()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	out.Wait()
	for i := range inside {
		if inside[i] != txid {
			t.Fatalf("tx statement %d ran in transaction %d, not %d", i, inside[i], txid)
		}
		if outside[i] == txid || outside[i] == 0 {
			t.Fatalf("outside statement %d ran in transaction %d (tx %d)", i, outside[i], txid)
		}
	}
}

// TestPoolStress: 10,000 random operations from 100 goroutines on a Pool
// of 4: every reply is the caller's own, and no goroutine is left behind.
func TestPoolStress(t *testing.T) {
	before := runtime.NumGoroutine()
	p, err := NewPool(testCtx(t), srv.DSN("pool_max_conns=4"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stuck := time.AfterFunc(20*time.Second, func() {
		buf := make([]byte, 1<<20)
		fmt.Printf("TestPoolStress stuck:\n%s\n", buf[:runtime.Stack(buf, true)])
	})
	defer stuck.Stop()
	if _, err := p.Exec(ctx, "CREATE TABLE IF NOT EXISTS stress(worker int, n int)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := 0; w < 100; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < 100; i++ {
				if err := stressOp(ctx, p, rng, w, i); err != nil {
					errs <- fmt.Errorf("worker %d op %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p.Exec(ctx, "DROP TABLE stress")
	p.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// stressOp runs one random operation and checks its reply.
func stressOp(ctx context.Context, p *Pool, rng *rand.Rand, w, i int) error {
	key := w*1000 + i
	switch rng.IntN(6) {
	case 0: // QueryRow
		var v int
		var s string
		if err := p.QueryRow(ctx, "SELECT $1::int, $2::text", key, fmt.Sprint("k", key)).Scan(&v, &s); err != nil {
			return err
		}
		if v != key || s != fmt.Sprint("k", key) {
			return fmt.Errorf("QueryRow: got %d %q", v, s)
		}
	case 1: // Query
		rows, err := p.Query(ctx, "SELECT g FROM generate_series($1::int, $1::int + 9) g", key)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var g int
			if err := rows.Scan(&g); err != nil {
				rows.Close()
				return err
			}
			if g != key+n {
				rows.Close()
				return fmt.Errorf("Query: row %d is %d", n, g)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 10 {
			return fmt.Errorf("Query: %d rows, %v", n, err)
		}
	case 2: // Exec
		tag, err := p.Exec(ctx, "INSERT INTO stress VALUES ($1, $2)", w, i)
		if err != nil || tag.RowsAffected() != 1 {
			return fmt.Errorf("Exec: %v %v", tag, err)
		}
	case 3: // Batch
		b := &Batch{}
		for j := 0; j < 5; j++ {
			b.Queue("SELECT $1::int", key+j)
		}
		br := p.SendBatch(ctx, b)
		for j := 0; j < 5; j++ {
			var v int
			if err := br.QueryRow().Scan(&v); err != nil || v != key+j {
				br.Close()
				return fmt.Errorf("Batch %d: %d %v", j, v, err)
			}
		}
		if err := br.Close(); err != nil {
			return err
		}
	case 4: // Tx
		tx, err := p.Begin(ctx)
		if err != nil {
			return err
		}
		var a, b int64
		tx.QueryRow(ctx, "SELECT txid_current()").Scan(&a)
		tx.Exec(ctx, "INSERT INTO stress VALUES ($1, $2)", w, -i)
		tx.QueryRow(ctx, "SELECT txid_current()").Scan(&b)
		if a == 0 || a != b {
			tx.Rollback(ctx)
			return fmt.Errorf("Tx: transactions %d and %d", a, b)
		}
		if rng.IntN(2) == 0 {
			return tx.Commit(ctx)
		}
		return tx.Rollback(ctx)
	case 5: // cancelled
		short, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
		var v int
		err := p.QueryRow(short, "SELECT $1::int FROM (SELECT pg_sleep(0.001)) s", key).Scan(&v)
		cancel()
		if err == nil && v != key {
			return fmt.Errorf("cancelled query answered %d, want %d", v, key)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("cancelled query: %w", err)
		}
	}
	return nil
}
