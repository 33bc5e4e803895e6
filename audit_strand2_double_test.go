package pgline

// Audit of 357f8e0 with 02a1846: a text that ends its block ("BEGIN; ...;
// COMMIT") queued behind a stranded block is refused by it (25P02 at its
// BEGIN, status 'E'); its ReadyForQuery still reads as a block it
// stranded (endsBlock, status != 'I'), and a second ROLLBACK is queued,
// at the tail of the queue then: behind whatever was queued since the
// first ROLLBACK. A Tx whose BEGIN got there in between has its block
// rolled back under it; its later statements run outside any transaction
// (autocommit) and its Rollback undoes nothing. TxStatus meanwhile says
// 'I' inside the Tx.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestAuditStrand2RefusedTextRollsBackTx(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_double")
	c := connect(t, srv.DSN())
	strands := c.strands.Load()

	var wg sync.WaitGroup
	var errS, errA error
	// S: strands its block after 300 ms (Change 2's own case).
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errS = c.Exec(ctx, "BEGIN; SELECT pg_sleep(0.3); SELECT 1/0; COMMIT")
	}()
	auditWaitQueued(t, c, 1)
	time.Sleep(50 * time.Millisecond) // S written, running on the server
	auditHoldWrites(c)
	released := false
	defer func() {
		if !released {
			auditResumeWrites(c)
		}
	}()
	// A: another caller's block-ending text, queued behind S (held).
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errA = c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" VALUES (100); COMMIT")
	}()
	auditWaitQueued(t, c, 2)
	// S's ReadyForQuery: the ROLLBACK of its block is queued (held) behind A.
	deadline := time.Now().Add(3 * time.Second)
	for c.strands.Load() == strands {
		if time.Now().After(deadline) {
			t.Fatal("S did not strand")
		}
		time.Sleep(time.Millisecond)
	}
	// A Tx begins: its BEGIN is queued behind the ROLLBACK (held).
	var tx *Tx
	var errB error
	begun := make(chan struct{})
	go func() { defer close(begun); tx, errB = c.Begin(ctx) }()
	auditWaitQueued(t, c, 3) // A, ROLLBACK, BEGIN
	auditResumeWrites(c)
	released = true
	<-begun
	if errB != nil {
		t.Fatalf("Begin: %v", errB)
	}
	t.Logf("in the Tx: TxStatus %c, rollbacks in flight %d, blocks rolled back %d", c.TxStatus(), c.rollbacks.Load(), c.strands.Load()-strands)
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)"); err != nil {
		t.Fatalf("tx insert: %v", err)
	}
	inBlock := !auditOwnTx(t, ctx, tx)
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2)"); err != nil {
		t.Fatalf("tx insert: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	wg.Wait()
	t.Logf("S: %v; A: %v; blocks rolled back %d", errS, errA, c.strands.Load()-strands)
	var inTx, a int64
	if err := c.QueryRow(ctx, "SELECT count(*) FILTER (WHERE a < 100), count(*) FILTER (WHERE a = 100) FROM "+tbl).Scan(&inTx, &a); err != nil {
		t.Fatal(err)
	}
	t.Logf("rows of the rolled-back Tx committed: %d; A's row: %d (A's error %v)", inTx, a, errA)
	if !inBlock || inTx != 0 {
		t.Errorf("the Tx ran outside a transaction block (probe in block: %v): %d of its rows survived its Rollback", inBlock, inTx)
	}
	if errA == nil && a != 1 || errA != nil && a != 0 {
		t.Errorf("A: %v, its row %d times", errA, a)
	}
	wantUsable(t, context.Background(), c)
}

// TestAuditStrand2RefusedTextStorm: the same without held writes, on a
// Conn shared by goroutines doing ordinary things: one whose text fails
// in its own block (BEGIN; SELECT 1/0; COMMIT), two whose texts succeed
// (BEGIN; INSERT; COMMIT), two running Tx that insert and roll back. No
// row of a rolled-back Tx may survive.
func TestAuditStrand2RefusedTextStorm(t *testing.T) {
	ctx := testCtx(t)
	tbl := auditIntTable(t, "audit_s2_dstorm")
	c := connect(t, srv.DSN())
	strands := c.strands.Load()
	end := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	var txs, texts, fails int64
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			c.Exec(ctx, "BEGIN; SELECT 1/0; COMMIT")
		}
	}()
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				_, err := c.Exec(ctx, fmt.Sprintf("BEGIN; INSERT INTO %s VALUES (%d); COMMIT", tbl, -(g*1000000+i+1)))
				mu.Lock()
				texts++
				if err != nil {
					fails++
					if fails == 1 {
						t.Logf("a text's error: %v", err)
					}
				}
				mu.Unlock()
				_ = g
			}
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				tx, err := c.Begin(ctx)
				if err != nil {
					continue
				}
				tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", g*1000000+2*i+1)
				tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", g*1000000+2*i+2)
				tx.Rollback(ctx)
				time.Sleep(200 * time.Microsecond)
				mu.Lock()
				txs++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var leaked int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE a > 0").Scan(&leaked); err != nil {
		t.Fatal(err)
	}
	t.Logf("rolled-back Tx %d, texts %d (failed %d), blocks rolled back %d; rows of rolled-back Tx committed: %d", txs, texts, fails, c.strands.Load()-strands, leaked)
	if leaked > 0 {
		t.Errorf("%d rows of rolled-back transactions were committed", leaked)
	}
}
