package pgline

// A CancelRequest's signal (anyone's: pg_cancel_backend from another
// session, or pgline's own for an ended ctx) may land between the BEGIN
// and the COMMIT that replace a shared Sync (see pipeline.go), or in the
// ROLLBACK or COMMIT ending a transaction. The session is then in an
// aborted transaction block that no caller holds: unless pgline rolls it
// back, every statement after it fails with 25P02, for ever.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// cancelStorm signals pid's statements from another session, with pauses
// of up to maxPause, until stop is closed.
func cancelStorm(t *testing.T, ctx context.Context, pid uint32, maxPause time.Duration, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	return signalLoop(t, maxPause, stop, func(killer *Conn) error {
		_, err := killer.Exec(ctx, "SELECT pg_cancel_backend($1)", int32(pid))
		return err
	})
}

// signalLoop runs signal on a session of its own, with pauses of up to
// maxPause, until stop is closed or signal fails.
func signalLoop(t *testing.T, maxPause time.Duration, stop <-chan struct{}, signal func(killer *Conn) error) *sync.WaitGroup {
	t.Helper()
	killer := connect(t, srv.DSN())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := signal(killer); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(rand.N(maxPause))
		}
	}()
	return &wg
}

// wantUsable checks that c runs a statement outside any transaction after a
// storm (a late signal may still cancel one: one more try).
func wantUsable(t *testing.T, ctx context.Context, c *Conn) {
	t.Helper()
	var v int64
	err := c.QueryRow(ctx, "SELECT 4242::int8").Scan(&v)
	if err != nil {
		err = c.QueryRow(ctx, "SELECT 4242::int8").Scan(&v)
	}
	if err != nil || v != 4242 || c.TxStatus() != 'I' {
		t.Fatalf("after the storm: %d, %v, TxStatus %c", v, err, c.TxStatus())
	}
}

// TestCancelStormSharedSyncs: goroutines sharing Syncs on one Conn under
// a storm of signals from another session, with simple queries, COPYs and
// batches among them. A caller may get its own statement's 57014, never a
// 25P02 from a transaction block it did not open (but errRefused, for a
// batch the blocks refused more than maxCancelRetries times in a row:
// each refusal sends it again whole); and the Conn ends outside any
// transaction.
func TestCancelStormSharedSyncs(t *testing.T) {
	storm(t)
	for _, mode := range []string{"", "statement_cache_mode=describe"} { // named, unnamed BEGIN and COMMIT
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			c := connect(t, srv.DSN(mode))
			if _, err := c.Exec(ctx, "CREATE TEMP TABLE storm_copy (v int8)"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
			l := newLoopLoad(t, time.Second, 10)
			var seq, oks, canceled atomic.Int64
			l.spawn(40, func() {
				v := seq.Add(1)
				var got int64
				err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
				switch {
				case err == nil && got == v:
					oks.Add(1)
				case pgCode(err) == "57014":
					canceled.Add(1)
				default:
					l.fail("sent %d, got %d, %v", v, got, err)
				}
			})
			l.spawn(4, func() {
				if _, err := c.Exec(ctx, "SELECT 1"); err != nil && pgCode(err) != "57014" {
					l.fail("simple query: %v", err)
				}
			})
			l.spawn(1, func() {
				_, err := c.CopyFrom(ctx, Identifier{"storm_copy"}, []string{"v"}, CopyFromRows([][]any{{1}, {2}}))
				if err != nil && pgCode(err) != "57014" {
					l.fail("COPY: %v", err)
				}
			})
			l.spawn(2, func() {
				var b Batch
				vs := []int64{seq.Add(1), seq.Add(1), seq.Add(1)}
				for _, v := range vs {
					b.Queue("SELECT $1::int8", v)
				}
				br := c.SendBatch(ctx, &b)
				defer br.Close()
				for i, v := range vs {
					var got int64
					err := br.QueryRow().Scan(&got)
					switch {
					case err == nil && got == v:
					case pgCode(err) == "57014", errors.Is(err, ErrBatchAborted):
					case errors.Is(err, session.ErrRefused) && i < len(vs)-1:
					default:
						l.fail("batch statement %d: sent %d, got %d, %v", i, v, got, err)
					}
				}
			})
			l.wait()
			close(stop)
			storm.Wait()
			t.Logf("ok %d, 57014 %d, blocks rolled back %d", oks.Load(), canceled.Load(), c.s.Block.Strands.Load())
			wantUsable(t, ctx, c)
			if oks.Load() == 0 {
				t.Fatal("no statement succeeded")
			}
		})
	}
}

// TestCancelStormTxEnd: transactions committed and rolled back on a Conn
// that other goroutines share, under a storm of signals. A signal landing
// in the COMMIT or ROLLBACK before it ends the block leaves the session in
// the aborted transaction: the Tx's end must roll it back before anyone
// else's statement runs. Echo callers never get a 25P02, and a
// transaction's statement gets one only after an earlier one of its own
// failed.
func TestCancelStormTxEnd(t *testing.T) {
	storm(t)
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	stop := make(chan struct{})
	storm := cancelStorm(t, ctx, c.PID(), 300*time.Microsecond, stop)
	l := newLoopLoad(t, time.Second, 10)
	var seq, oks, txs atomic.Int64
	l.spawn(20, func() {
		v := seq.Add(1)
		var got int64
		err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
		switch {
		case err == nil && got == v:
			oks.Add(1)
		case pgCode(err) == "57014":
		default:
			l.fail("sent %d, got %d, %v", v, got, err)
		}
	})
	l.spawn(2, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			if pgCode(err) != "57014" {
				l.fail("begin: %v", err)
			}
			return
		}
		failed := false
		for range 3 {
			var got int64
			v := seq.Add(1)
			err := tx.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
			switch {
			case err == nil && got == v:
			case pgCode(err) == "57014":
				failed = true
			case pgCode(err) == "25P02" && failed:
			default:
				l.fail("in a transaction: sent %d, got %d, %v", v, got, err)
			}
		}
		if rand.N(2) == 0 {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err == nil || pgCode(err) == "57014" || errors.Is(err, ErrTxRolledBack) {
			txs.Add(1)
		} else {
			l.fail("end: %v", err)
		}
	})
	l.wait()
	close(stop)
	storm.Wait()
	t.Logf("ok %d, transactions %d, blocks rolled back %d", oks.Load(), txs.Load(), c.s.Block.Strands.Load())
	wantUsable(t, ctx, c)
}

// A caller's raw ROLLBACK text, queued after a text that strands its
// block and before a Tx's BEGIN, ends the block before the ROLLBACK pgline
// queues for it (see rollBackStranded) runs. The BEGIN then succeeds, and
// that ROLLBACK, behind it, would end the Tx's block: its statements would
// commit one by one and its Rollback undo nothing. BeginTx begins again.
func TestStrandRawRollbackBeforeBegin(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE strand_rb (v int)"); err != nil {
		t.Fatal(err)
	}
	strand, raw := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "BEGIN; SELECT pg_sleep(0.3); SELECT 1/0; COMMIT")
		strand <- err
	}()
	waitQueued(t, c, 1)
	go func() {
		_, err := c.Exec(ctx, "ROLLBACK")
		raw <- err
	}()
	waitQueued(t, c, 2)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-strand; pgCode(err) != "22012" {
		t.Fatalf("the stranding text: %v", err)
	}
	if err := <-raw; err != nil {
		t.Fatalf("the raw ROLLBACK: %v", err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO strand_rb VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if st := c.TxStatus(); st != 'T' {
		t.Errorf("TxStatus %c inside the transaction", st)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM strand_rb").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows of a rolled-back transaction persisted", n)
	}
	if s := c.s.Block.Strands.Load(); s != 1 {
		t.Errorf("%d strands, want 1", s)
	}
}
