package pgline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A Pool routes no statement behind a connection whose head is held by
// user code (open Rows) or blocked, while another connection can take it
// or can be opened.

// TestPoolNestedQueryInRowsLoop: three goroutines each iterate the Rows of
// a Pool.Query and run a Pool.QueryRow per row, on a Pool of 4 (so one
// connection is always free of open Rows), each nested call with a 2 s
// deadline: none may wait for its deadline. Before, 3 to 4 of 1,500 nested
// calls did (for ever without a deadline): a nested statement was routed
// behind another goroutine's outer Rows, counted open only once its Query
// had returned, while that goroutine's nested statement waited behind
// these Rows. pgxpool gives each call a connection of its own and never
// waits here.
func TestPoolNestedQueryInRowsLoop(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=4")
	const goroutines, rounds, perRound = 3, 25, 40 // 3,000 nested calls
	var stalled, ran atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				rows, err := p.Query(ctx, "SELECT generate_series(1, $1::int)", perRound)
				if err != nil {
					t.Errorf("outer Query: %v", err)
					return
				}
				for rows.Next() {
					var i, v int
					if err := rows.Scan(&i); err != nil {
						t.Errorf("outer Scan: %v", err)
						break
					}
					nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					err := p.QueryRow(nctx, "SELECT $1::int + 1", i).Scan(&v)
					cancel()
					switch {
					case errors.Is(err, context.DeadlineExceeded):
						stalled.Add(1)
					case err != nil:
						t.Errorf("nested QueryRow: %v", err)
					case v != i+1:
						t.Errorf("nested QueryRow: %d, want %d", v, i+1)
					}
					ran.Add(1)
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					t.Errorf("outer Rows: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := stalled.Load(); n > 0 {
		t.Fatalf("%d of %d nested calls waited for their deadline", n, ran.Load())
	}
}

// TestPoolReadInsideLockingTx: a Pool transaction locks a row, a statement
// routed by the Pool blocks on that lock, and the transaction then reads
// through the Pool (Pool.QueryRow, not the Tx) before it commits. The read
// must not be queued behind the blocked statement, which waits for the
// commit that waits for the read: before, on a cold Pool, the read and
// the blocked statement both waited for their deadlines (2 of 2 runs).
//
// On a warm Pool, 12 readers run throughout. Before, 3 of 12 readers
// stalled for the lock's whole duration (pgxpool: 111 ms, none stalled):
// the blocked statement's connection, with one request in flight, kept
// getting reads. Reads routed in the first moments after it, before its
// silence tells it from a statement about to answer, still wait for the
// lock (a burst of readers arriving then); none started 20 ms after it
// may, nor wait for its deadline.

func TestPoolReadInsideLockingTx(t *testing.T) {
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS heldhead_lock; CREATE TABLE heldhead_lock (id int PRIMARY KEY, v int); INSERT INTO heldhead_lock VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, "pool_max_conns=4")
			quit := make(chan struct{})
			var readers sync.WaitGroup
			var readerStalls, readerEarly, readerLate atomic.Int64
			var blockedAt atomic.Int64 // UnixNano, once the blocked statement is sent
			if warm {
				// Open the Pool's connections, and keep readers running.
				var open sync.WaitGroup
				for range 4 {
					open.Add(1)
					go func() {
						defer open.Done()
						if _, err := p.Exec(ctx, "SELECT pg_sleep(0.05)"); err != nil {
							t.Error(err)
						}
					}()
				}
				open.Wait()
				readersRan := make(chan struct{}, 12)
				for range 12 {
					readers.Add(1)
					go func() {
						defer readers.Done()
						for {
							select {
							case <-quit:
								return
							case <-time.After(5 * time.Millisecond):
							}
							rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
							var v int
							start := time.Now()
							err := p.QueryRow(rctx, "SELECT v FROM heldhead_lock WHERE id = 1").Scan(&v)
							cancel()
							if time.Since(start) > 250*time.Millisecond { // waited for the lock
								if at := blockedAt.Load(); at != 0 && start.Sub(time.Unix(0, at)) > 20*time.Millisecond {
									readerLate.Add(1)
								} else {
									readerEarly.Add(1)
								}
							}
							select {
							case readersRan <- struct{}{}:
							default:
							}
							if errors.Is(err, context.DeadlineExceeded) {
								readerStalls.Add(1)
							} else if err != nil {
								t.Errorf("reader: %v", err)
								return
							}
						}
					}()
				}
				// Let the readers run a while first, so that every
				// connection has prepared their statement: a statement
				// is sent once its connection has described it, so the
				// first reads routed to a connection before the blocked
				// statement would be sent after it.
				for range 12 {
					<-readersRan
				}
				time.Sleep(100 * time.Millisecond)
			}
			defer func() {
				close(quit)
				readers.Wait()
				if n := readerStalls.Load(); n > 0 {
					t.Errorf("%d readers waited for their deadline", n)
				}
				if n := readerLate.Load(); n > 0 {
					t.Errorf("%d reads started 20 ms after the blocked statement waited for the lock", n)
				}
				if warm {
					t.Logf("%d reads started with it waited for the lock", readerEarly.Load())
				}
			}()

			tx, err := p.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "SELECT v FROM heldhead_lock WHERE id = 1 FOR UPDATE"); err != nil {
				t.Fatal(err)
			}
			blocked := make(chan error, 1)
			go func() {
				bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				// Stored here, not before the goroutine starts: under load
				// it may start late, and reads before the UPDATE is sent
				// are not late.
				blockedAt.Store(time.Now().UnixNano())
				_, err := p.Exec(bctx, "UPDATE heldhead_lock SET v = v + 1 WHERE id = 1")
				blocked <- err
			}()
			if waitActivity(t, admin, 30*time.Second, "wait_event_type = 'Lock' AND starts_with(query, $1)", "UPDATE heldhead_lock") == 0 {
				t.Fatal("the UPDATE never waited for the lock")
			}
			if warm {
				time.Sleep(500 * time.Millisecond) // the transaction's work, while the readers run
			}

			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			start := time.Now()
			var v int
			err = p.QueryRow(rctx, "SELECT v FROM heldhead_lock WHERE id = 1").Scan(&v)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("the transaction's read through the Pool after %v: %v", took, err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-blocked; err != nil {
				t.Fatalf("the statement blocked on the lock: %v", err)
			}
			t.Logf("the read took %v", took)
		})
	}
}
