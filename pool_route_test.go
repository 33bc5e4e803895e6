package pgline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestPoolWaitersFIFO: statements waiting for a slot get one in the order
// they arrived. One connection with one slot, held by open Rows; 20
// statements queue one after the other; the order in which the server
// runs them (a sequence) must be their arrival order.
func TestPoolWaitersFIFO(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1", "pool_max_pipeline=1")
	if _, err := p.Exec(ctx, "DROP SEQUENCE IF EXISTS fifo_seq; CREATE SEQUENCE fifo_seq"); err != nil {
		t.Fatal(err)
	}
	held, err := p.Query(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	ran := make([]int64, n) // the sequence value each statement got
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.QueryRow(ctx, "SELECT nextval('fifo_seq'), $1::int", i).Scan(&ran[i], new(int)); err != nil {
				errs <- fmt.Errorf("statement %d: %w", i, err)
			}
		}()
		for p.Stat().Waiting != i+1 {
			if ctx.Err() != nil {
				t.Fatalf("statement %d never waited: %+v", i, p.Stat())
			}
			time.Sleep(time.Millisecond)
		}
	}
	held.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		if ran[i] <= ran[i-1] {
			t.Fatalf("statements ran in the order %v, want their arrival order", ran)
		}
	}
	if st := p.Stat(); st.Waiting != 0 || st.InFlight != 0 {
		t.Errorf("after the statements: %+v", st)
	}
}

// TestPoolWaiterCtxEnds: a waiting statement whose ctx ends leaves the
// queue (the others are served in order), and a slot given to it as its
// ctx ended goes to the next.
func TestPoolWaiterCtxEnds(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1", "pool_max_pipeline=1")
	held, err := p.Query(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var v int
		done <- p.QueryRow(short, "SELECT 1").Scan(&v)
	}()
	if err := <-done; !session.SafeToRetry(err) || short.Err() == nil {
		t.Fatalf("waiting past its deadline: %v", err)
	}
	if st := p.Stat(); st.Waiting != 0 {
		t.Fatalf("the statement whose ctx ended is still queued: %+v", st)
	}
	held.Close()
	var v int
	if err := p.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after: %d %v", v, err)
	}
}

// TestPoolTakersFIFO: Begin calls waiting for a connection of their own
// get one in arrival order, one wake-up each (issue 14: before, every
// freed connection woke them all and the fastest won, starving some for
// seconds).
func TestPoolTakersFIFO(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	if _, err := p.Exec(ctx, "DROP SEQUENCE IF EXISTS take_fifo_seq; CREATE SEQUENCE take_fifo_seq"); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	ran := make([]int64, n) // the sequence value each transaction got
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := p.Begin(ctx)
			if err != nil {
				errs <- fmt.Errorf("transaction %d: %w", i, err)
				return
			}
			defer tx.Rollback(ctx)
			if err := tx.QueryRow(ctx, "SELECT nextval('take_fifo_seq')").Scan(&ran[i]); err != nil {
				errs <- fmt.Errorf("transaction %d: %w", i, err)
				return
			}
			if err := tx.Commit(ctx); err != nil {
				errs <- fmt.Errorf("transaction %d: %w", i, err)
			}
		}()
		for p.Stat().AcquireWaiting != i+1 {
			if ctx.Err() != nil {
				t.Fatalf("transaction %d never waited: %+v", i, p.Stat())
			}
			time.Sleep(time.Millisecond)
		}
	}
	held.Release()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		if ran[i] <= ran[i-1] {
			t.Fatalf("transactions ran in the order %v, want their arrival order", ran)
		}
	}
	if st := p.Stat(); st.AcquireWaiting != 0 || st.AcquiredConns != 0 || st.TotalConns != 1 {
		t.Errorf("after the transactions: %+v", st)
	}
}

// TestPoolTakerCtxEnds: an Acquire whose ctx ends while it waits leaves
// the line with its ctx's error (SafeToRetry: nothing was sent); the next
// in line gets the connection; statements routed meanwhile are not held
// up for ever by the connection set aside (draining) for the waiters.
func TestPoolTakerCtxEnds(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !session.SafeToRetry(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past its deadline: %v", err)
	}
	if st := p.Stat(); st.AcquireWaiting != 0 {
		t.Fatalf("the Acquire whose ctx ended is still in line: %+v", st)
	}
	next := make(chan error, 1)
	go func() {
		c, err := p.Acquire(ctx)
		if err == nil {
			var v int
			err = c.QueryRow(ctx, "SELECT 5").Scan(&v)
			c.Release()
		}
		next <- err
	}()
	for p.Stat().AcquireWaiting != 1 {
		time.Sleep(time.Millisecond)
	}
	held.Release()
	if err := <-next; err != nil {
		t.Fatalf("the next in line: %v", err)
	}
	var v int
	if err := p.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
		t.Fatalf("a statement afterwards: %d, %v", v, err)
	}
}
