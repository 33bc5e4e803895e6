package pgline

// The caller's own transaction block next to a stranded one: a block
// begun (by a raw BEGIN, a text or a batch) after the stranded block
// ended but before pgline's ROLLBACK ran is the caller's. A 25P02 there
// is its own block's error, not a refusal to send again outside the
// block; pgline's ROLLBACK must not end it silently (the connection is
// closed instead: strandRolledBack), and a Tx begun behind a refused
// text is a real transaction whose Rollback undoes its rows. The block is
// stranded on purpose, with writes held (strandRefusing).

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestCallerBlockNotTakenForStranded: the stranded block is ended early by a
// statement queued before pgline's ROLLBACK (another caller's raw
// ROLLBACK, or the batch's own COMMIT, which an aborted block accepts),
// and the batch then opens a block of its own (BEGIN) before that
// ROLLBACK runs. The ROLLBACK, queued at the tail when the strand was
// seen, ends whatever block is open when it runs: the caller's.
//
//   - refusal misread: a statement of the caller's block fails, and the
//     server refuses the last (25P02) in that block, its caller's own.
//     pgline read every 25P02 queued before its ROLLBACK as the stranded
//     block's (refused: req.seq < strandEnd), so the last statement was
//     sent again alone (mayResend), after the ROLLBACK, outside the
//     caller's block, and reported success: its row was committed
//     although its block failed. Now a 25P02 counts as a refusal only
//     while the stranded block stands (Conn.strandOpen), and the
//     caller's COMMIT does not report that it committed.
//   - rolled back: the caller's block succeeds, the ROLLBACK ends it, and
//     the caller's COMMIT (no transaction in progress) reported success:
//     the row the caller committed did not exist. Now the ROLLBACK's
//     reply closes the connection (strandRolledBack), and the COMMIT
//     fails.
func TestCallerBlockNotTakenForStranded(t *testing.T) {
	t.Run("refusal misread", func(t *testing.T) {
		c := connect(t, srv.DSN())
		tbl, admin := refusalTable(t, "ownblock")
		build := func(b *Batch) {
			b.Queue("BEGIN")
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(1))
			b.Queue("SELECT 1/0")
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(2))
		}
		ctx := testCtx(t)
		warm := &Batch{}
		build(warm)
		c.SendBatch(ctx, warm).Close() // prepared; fails at 1/0
		for _, sql := range []string{"ROLLBACK", "DELETE FROM " + tbl} {
			if _, err := c.Exec(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
		rollback := queuedStep{name: "raw ROLLBACK", requests: 1, start: func(ctx context.Context) error {
			_, err := c.Exec(ctx, "ROLLBACK")
			return err
		}}
		var errs [4]error
		batch := queuedStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
			b := &Batch{}
			build(b)
			br := c.SendBatch(ctx, b)
			for i := range errs {
				_, errs[i] = br.Exec()
			}
			return br.Close()
		}}
		strandRefusing(t, c, nil, rollback, batch)
		t.Logf("statements: %v", errs)
		if errs[0] != nil || errs[1] != nil || pgCode(errs[2]) != "22012" {
			t.Fatalf("the batch did not run as planned: %v", errs)
		}
		if pgCode(errs[3]) != "25P02" {
			t.Errorf("last statement: %v, want its own block's 25P02", errs[3])
		}
		if got := kValues(t, admin, tbl); len(got) != 0 {
			t.Errorf("rows %v, want none: the caller's block failed", got)
		}
		// pgline's ROLLBACK ended the caller's block: its COMMIT must not
		// report that it committed (nor is the connection usable: see
		// strandRolledBack).
		if tag, err := c.Exec(ctx, "COMMIT"); err == nil && tag.String() == "COMMIT" {
			t.Errorf("the caller's COMMIT of its failed block: %q, want an error or ROLLBACK", tag)
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		c := connect(t, srv.DSN())
		tbl, admin := refusalTable(t, "ownblock2")
		build := func(b *Batch) {
			b.Queue("COMMIT")
			b.Queue("BEGIN")
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(1))
		}
		warmBatch(t, c, false, build, "ROLLBACK", "DELETE FROM "+tbl)
		ctx := testCtx(t)
		var errs [3]error
		batch := queuedStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
			b := &Batch{}
			build(b)
			br := c.SendBatch(ctx, b)
			for i := range errs {
				_, errs[i] = br.Exec()
			}
			return br.Close()
		}}
		strandRefusing(t, c, nil, batch)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("statement %d: %v", i, err)
			}
		}
		_, err := c.Exec(ctx, "COMMIT")
		t.Logf("COMMIT: %v", err)
		if n := rowCount(t, admin, tbl+" WHERE k = $1", 1); err == nil && n != 1 {
			t.Errorf("the caller's BEGIN, INSERT and COMMIT succeeded; its row exists %d times, want 1", n)
		}
	})
}

// TestCallerBlockBegunInStrandGroup: the stranded block is ended, and a new
// block begun and aborted, within one ReadyForQuery group: a text
// "ROLLBACK; BEGIN; INSERT 1; SELECT 1/0" given to Exec, or an
// all-or-nothing Batch [COMMIT, BEGIN, INSERT 1, SELECT 1/0]. Its
// caller's next statements, queued (from other goroutines) before
// pgline's ROLLBACK, are refused by the caller's own failed block. The
// status read is 'E' before and after the group, so strandOpen stays
// set: each 25P02 is read as the stranded block's refusal
// (Conn.refused), and the statement sent again behind the ROLLBACK runs
// outside the block and reports success, its row committed although its
// block failed. And the ROLLBACK, which strandRolledBack lets through
// (strandOpen), ends the caller's block: its COMMIT reports "COMMIT"
// (the server's warning only) instead of ROLLBACK. Now a request nobody
// holds with transaction control, one of whose statements ran, ends the
// stranded block for pgline (noteStrandEnded), and a run its Sync group
// skipped in the caller's block is not sent again outside it
// (errSkippedInBlock).
func TestCallerBlockBegunInStrandGroup(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch bool // the group is an all-or-nothing Batch, not a text
		next  string
	}{
		{"text/simple", false, "simple"},
		{"text/chained runs", false, "chained"},
		{"batch/independent batch", true, "batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN())
			tbl, admin := strandTable(t, "s3group")
			ctx := testCtx(t)
			ins := "INSERT INTO " + tbl + " VALUES ($1)"
			group := func(ctx context.Context) error {
				if !tc.batch {
					_, err := c.Exec(ctx, "ROLLBACK; BEGIN; INSERT INTO "+tbl+" VALUES (1); SELECT 1/0")
					return err
				}
				b := &Batch{AllOrNothing: true}
				b.Queue("COMMIT")
				b.Queue("BEGIN")
				b.Queue(ins, int64(1))
				b.Queue("SELECT 1/0")
				return c.SendBatch(ctx, b).Close()
			}
			// Prepared: each call below is one request.
			group(ctx)
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, ins, int64(0)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "DELETE FROM "+tbl); err != nil {
				t.Fatal(err)
			}
			steps := []queuedStep{callStep("the group", group)}
			for k := int64(2); k <= 3; k++ {
				var f func(ctx context.Context) error
				switch tc.next {
				case "simple":
					f = func(ctx context.Context) error {
						_, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d)", tbl, k))
						return err
					}
				case "chained": // the second takes the first's Sync
					f = func(ctx context.Context) error { _, err := c.Exec(ctx, ins, k); return err }
				case "batch":
					f = func(ctx context.Context) error {
						b := &Batch{}
						b.Queue(ins, k)
						br := c.SendBatch(ctx, b)
						_, err := br.Exec()
						br.Close()
						return err
					}
				}
				steps = append(steps, callStep(fmt.Sprintf("INSERT %d", k), f))
			}
			c.s.Wmu.Lock()
			shared := c.s.Shared
			c.s.Wmu.Unlock()
			errs := strandRefusing(t, c, nil, steps...)
			c.s.Wmu.Lock()
			shared = c.s.Shared - shared
			c.s.Wmu.Unlock()
			t.Logf("group: %v; INSERT 2: %v; INSERT 3: %v; runs that took a Sync: %d", errs[0], errs[1], errs[2], shared)
			if pgCode(errs[0]) != "22012" {
				t.Fatalf("the group: %v, want 22012", errs[0])
			}
			for i, err := range errs[1:] {
				if !isFailedInBlock(err) {
					t.Errorf("INSERT %d, queued in its caller's failed block: %v, want 25P02 or the connection closed", i+2, err)
				}
			}
			if got := kValues(t, admin, tbl); len(got) != 0 {
				t.Errorf("rows %v committed, want none: their block failed", got)
			}
			wantCommitFailed(t, c)
		})
	}
}

// TestCallerBlockAfterRawRollbackSecondStrand: a caller's raw ROLLBACK
// ends the stranded block before pgline's ROLLBACK, a raw BEGIN begins the
// caller's block (strandForeign set: that ROLLBACK would close the
// connection), and its INSERT 1 runs in it. Then another caller's text
// "BEGIN; SELECT 1/0; COMMIT", which runs in that block and fails, is
// taken for a second stranded block, found before the first ROLLBACK ran:
// rollBackStranded leaves the end to that ROLLBACK, but replyGroupEnded
// sets strandOpen again and clears strandForeign. The caller's INSERT 2,
// refused by its own (now failed) block, is read as a refusal and sent
// again behind the ROLLBACK, which ends the caller's block silently:
// INSERT 2 is committed on its own, INSERT 1 is gone, and the caller's
// COMMIT reports "COMMIT". Now strandForeign stays set when the strand
// found reuses the pending ROLLBACK.
func TestCallerBlockAfterRawRollbackSecondStrand(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := strandTable(t, "s3second")
	exec := func(name, sql string) queuedStep {
		return callStep(name, func(ctx context.Context) error { _, err := c.Exec(ctx, sql); return err })
	}
	errs := strandRefusing(t, c, nil,
		exec("raw ROLLBACK", "ROLLBACK"),
		exec("raw BEGIN", "BEGIN"),
		exec("INSERT 1", "INSERT INTO "+tbl+" VALUES (1)"),
		exec("second strander", stranderSQL),
		exec("INSERT 2", "INSERT INTO "+tbl+" VALUES (2)"))
	t.Logf("ROLLBACK %v; BEGIN %v; INSERT 1 %v; second strander %v; INSERT 2 %v; closed %v",
		errs[0], errs[1], errs[2], errs[3], errs[4], c.IsClosed())
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || pgCode(errs[3]) != "22012" {
		t.Fatalf("the scenario did not run as planned: %v", errs)
	}
	if !isFailedInBlock(errs[4]) {
		t.Errorf("INSERT 2, queued in its caller's failed block: %v, want 25P02 or the connection closed", errs[4])
	}
	if got := kValues(t, admin, tbl); len(got) != 0 {
		t.Errorf("rows %v committed, want none: their block failed", got)
	}
	wantCommitFailed(t, c)
}

// TestCallerTxBehindRefusedText: a text that ends its block ("BEGIN; ...;
// COMMIT") queued behind a stranded block is refused by it (25P02 at its
// BEGIN, status 'E'); its ReadyForQuery still reads as a block it
// stranded (endsBlock, status != 'I'), and a second ROLLBACK used to be
// queued at the tail of the queue: behind a Tx whose BEGIN got there in
// between, whose block it rolled back (its later statements ran in
// autocommit, its Rollback undid nothing, TxStatus said 'I' inside it).
// The Tx must be a real transaction: none of its rows survive its
// Rollback, and the refused text's row exists iff it reported success.
func TestCallerTxBehindRefusedText(t *testing.T) {
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_double")
	c := connect(t, srv.DSN())
	strands := c.s.Block.Strands.Load()

	var wg sync.WaitGroup
	var errS, errA error
	// S: a text that strands its own block after 300 ms.
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errS = c.Exec(ctx, "BEGIN; SELECT pg_sleep(0.3); SELECT 1/0; COMMIT")
	}()
	waitQueued(t, c, 1)
	time.Sleep(50 * time.Millisecond) // S written, running on the server
	holdWrites(c)
	released := false
	defer func() {
		if !released {
			releaseWrites(c)
		}
	}()
	// A: another caller's block-ending text, queued behind S (held).
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errA = c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" VALUES (100); COMMIT")
	}()
	waitQueued(t, c, 2)
	// S's ReadyForQuery: the ROLLBACK of its block is queued (held) behind A.
	deadline := time.Now().Add(3 * time.Second)
	for c.s.Block.Strands.Load() == strands {
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
	waitQueued(t, c, 3) // A, ROLLBACK, BEGIN
	releaseWrites(c)
	released = true
	<-begun
	if errB != nil {
		t.Fatalf("Begin: %v", errB)
	}
	t.Logf("in the Tx: TxStatus %c, rollbacks in flight %d, blocks rolled back %d", c.TxStatus(), c.s.Block.Rollbacks.Load(), c.s.Block.Strands.Load()-strands)
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1)"); err != nil {
		t.Fatalf("tx insert: %v", err)
	}
	inBlock := !runsOutsideBlock(t, ctx, tx)
	if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES (2)"); err != nil {
		t.Fatalf("tx insert: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	wg.Wait()
	t.Logf("S: %v; A: %v; blocks rolled back %d", errS, errA, c.s.Block.Strands.Load()-strands)
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

// TestCallerTxBehindRefusedTextConcurrent: the same without held writes, on a
// Conn shared by goroutines doing ordinary things: one whose text fails
// in its own block (BEGIN; SELECT 1/0; COMMIT), two whose texts succeed
// (BEGIN; INSERT; COMMIT), two running Tx that insert and roll back. No
// row of a rolled-back Tx may survive.
func TestCallerTxBehindRefusedTextConcurrent(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	tbl := intTable(t, "txblk_dstorm")
	c := connect(t, srv.DSN())
	strands := c.s.Block.Strands.Load()
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
	t.Logf("rolled-back Tx %d, texts %d (failed %d), blocks rolled back %d; rows of rolled-back Tx committed: %d", txs, texts, fails, c.s.Block.Strands.Load()-strands, leaked)
	if leaked > 0 {
		t.Errorf("%d rows of rolled-back transactions were committed", leaked)
	}
}
