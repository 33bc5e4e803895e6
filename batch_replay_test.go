package pgline

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatchReplayScansOffTurn: once a batch's statement is sent again (a
// CancelRequest meant for another statement hit it), the rest of the
// batch's reply is read back from memory (BatchResults.resend) while the
// connection serves others. Scanning it must not touch what the
// connection's turn holder uses: the shared description of a statement
// (its scan plans, its last command tag), nor, in describe mode, put the
// description it reads in its replay in the connection's cache. Here
// goroutines scan the same statement into *int32 while the batch scans
// its replay into *int64: under -race, a shared plan cache is a data race
// (a torn scan plan would decode with another type's code); every value
// must be right either way.
func TestBatchReplayScansOffTurn(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) { testBatchReplayScansOffTurn(t, mode) })
	}
}

func testBatchReplayScansOffTurn(t *testing.T, mode string) {
	c := auditConn(t, "statement_cache_mode="+mode)
	admin := auditConn(t)
	ctx := testCtx(t)
	seq := "replay_once_" + mode
	if _, err := c.Exec(ctx, "DROP SEQUENCE IF EXISTS "+seq+"; CREATE SEQUENCE "+seq); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT $1::int4"
	// B0 sleeps the first time only: sent again, it returns at once.
	b0 := "SELECT pg_sleep(CASE WHEN nextval('" + seq + "') = 1 THEN 3 ELSE 0 END) /* replay_b0 */"
	// Prepared beforehand, the batch is queued at once (behind A), not
	// after a describe of its statements.
	for _, sql := range []string{q, b0} {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	aDone := startAbandoned(t, c) // the driver cancels A after B is queued
	time.Sleep(5 * time.Millisecond)
	b := &Batch{}
	b.Queue(b0)
	const n = 50
	for i := range n {
		b.Queue(q, int32(i))
	}
	batchErr := make(chan error, 1)
	var resent atomic.Bool
	sent := make(chan struct{})
	go func() {
		br := c.SendBatch(ctx, b)
		close(sent)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			batchErr <- fmt.Errorf("B0: %w", err)
			return
		}
		resent.Store(br.released)
		for i := range n {
			rows, err := br.Query()
			if err != nil {
				batchErr <- fmt.Errorf("statement %d: %w", i+1, err)
				return
			}
			var v int64
			for rows.Next() {
				if err := rows.Scan(&v); err != nil {
					batchErr <- fmt.Errorf("statement %d: %w", i+1, err)
					return
				}
			}
			if err := rows.Err(); err != nil || v != int64(i) {
				batchErr <- fmt.Errorf("statement %d: %d, %v; want %d", i+1, v, err, i)
				return
			}
		}
		batchErr <- nil
	}()

	// Others use the connection once the batch is queued, scanning the
	// same statement into another type, until a while after the batch is
	// done.
	<-sent
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var hammerErr atomic.Value
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int32(g * 1000); ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				var v int32
				if err := c.QueryRow(ctx, q, k).Scan(&v); err != nil || v != k {
					if !errors.Is(err, ErrCanceledByOther) { // A's cancel may land on anyone queued
						hammerErr.Store(fmt.Errorf("QueryRow(%d): %d, %v", k, v, err))
						return
					}
				}
			}
		}()
	}

	if waitRunning(t, admin, c.PID(), "replay_b0") {
		time.Sleep(100 * time.Millisecond)
		// A cancel landing on B0 while the driver's cancel for A is
		// under way: B0 is sent again.
		if _, err := admin.Exec(ctx, "SELECT pg_cancel_backend($1)", int(c.PID())); err != nil {
			t.Fatal(err)
		}
	} else {
		// The driver's cancel for A landed on B0 itself (A had ended on
		// the server): B0 was sent again at once.
		t.Log("B0 not seen running")
	}
	t.Logf("A: %v", <-aDone)
	err := <-batchErr
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if e := hammerErr.Load(); e != nil {
		t.Fatal(e)
	}
	if !resent.Load() {
		t.Fatal("B0 was not sent again: the replay path was not taken")
	}
}
