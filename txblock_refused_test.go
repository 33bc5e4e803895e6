package pgline

// Requests refused by a stranded block (25P02: nothing of them ran) are
// sent again whole, from their first sent statement, once per refusal and
// at most maxCancelRetries times, unless one of their statements is
// transaction control that may have run (mayResendRefused,
// resendRefused); their callers get their own results, each statement
// runs once, and a ctx that ends while the resend waits is reported at
// once. The block is stranded on purpose (strandRefusing) so that the
// refused request sits between the failed text and pgline's ROLLBACK.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestRefusedBatchWithTxControl: a batch refused by the stranded block, with
// transaction control among its statements that cannot have run:
//
//   - AllOrNothing, any statements: the server refuses the first and
//     skips everything up to the batch's one Sync (a COMMIT after it is
//     never executed);
//   - independent, with statements sqllex counts as transaction control
//     but that cannot end a block (PREPARE name AS, DO, CALL): the
//     aborted block refuses them like any other.
//
// Nothing of the batch ran, so it can be sent again whole, and each
// statement must report its own result. mayResendRefused refuses any
// batch with sqllex.Info.TransactionControl from the first sent statement
// on: the caller gets errRefused (another request's block) and
// ErrBatchAborted; in an independent batch the last statement is sent
// again alone (mayResend), without the ones before it: EXECUTE then fails
// with 26000, the PREPARE it needs refused.
func TestRefusedBatchWithTxControl(t *testing.T) {
	createDeallocFunc(t) // strand_dealloc
	const ins = "INSERT INTO {t} VALUES (1)"
	for _, tc := range []struct {
		name string
		all  bool
		sqls []string
		undo string
		rows int64
	}{
		{"all/BEGIN INSERT COMMIT", true, []string{"BEGIN", ins, "COMMIT"}, "", 1},
		{"all/SAVEPOINT RELEASE", true, []string{"BEGIN", "SAVEPOINT sp_release", ins, "RELEASE sp_release", "COMMIT"}, "", 1},
		{"all/DO", true, []string{"DO $$BEGIN " + ins + "; END$$", ins}, "", 2},
		{"independent/PREPARE EXECUTE", false, []string{"PREPARE refusal_p AS " + ins, "EXECUTE refusal_p"},
			"SELECT strand_dealloc('refusal_p')", 1},
		{"independent/DO", false, []string{"DO $$BEGIN " + ins + "; END$$", ins}, "", 2},
		{"independent/CALL", false, []string{"CALL {t}_p(1)", ins}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN())
			tbl, admin := refusalTable(t, "txc")
			ctx := testCtx(t)
			if _, err := admin.Exec(ctx, "CREATE PROCEDURE "+tbl+"_p(v int8) LANGUAGE sql AS $$ INSERT INTO "+tbl+" VALUES (v) $$"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Exec(context.Background(), "DROP PROCEDURE "+tbl+"_p") })
			build := func(b *Batch) {
				for _, s := range tc.sqls {
					b.Queue(strings.ReplaceAll(s, "{t}", tbl))
				}
			}
			undo := []string{"DELETE FROM " + tbl}
			if tc.undo != "" {
				undo = append(undo, tc.undo)
			}
			warmBatch(t, c, tc.all, build, undo...)
			errs := strandRefusing(t, c, nil, batchStep(c, tc.name, tc.all, build))
			if errs[0] != nil {
				t.Errorf("batch: %v", errs[0])
			} else if n := rowCount(t, admin, tbl+" WHERE k = $1", 1); n != tc.rows {
				t.Errorf("%d rows, want %d", n, tc.rows)
			}
			wantUsable(t, ctx, c)
		})
	}
}

// TestRefusedBatchSessionEffectsOnce: a batch of statements whose effects
// outlive their transaction (nextval, SET, a session-level advisory
// lock, LISTEN, CREATE TEMP TABLE), refused by the stranded block and
// sent again whole, independent or AllOrNothing, its first statement read
// by Exec, QueryRow or Query, or not read at all (Close): each statement
// runs exactly once (the sequence moved by one, the lock held once, the
// temporary table created without 42P07) and reports success, and
// nextval's caller gets its own value. (AllOrNothing and Exec reads of
// INSERTs: TestStrandedBatchSentAgainWhole.)
func TestRefusedBatchSessionEffectsOnce(t *testing.T) {
	for _, tc := range []struct {
		all  bool
		read string
	}{{false, "exec"}, {false, "queryrow"}, {false, "query"}, {false, "close"}, {true, "close"}} {
		all, read := tc.all, tc.read
		t.Run(fmt.Sprintf("all=%v/%s", all, read), func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			seq := fmt.Sprintf("refusal_seq_%d", time.Now().UnixNano())
			if _, err := c.Exec(ctx, "CREATE SEQUENCE "+seq); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(context.Background(), "DROP SEQUENCE "+seq) })
			build := func(b *Batch) {
				b.Queue("SELECT nextval('" + seq + "')")
				b.Queue("SET pgline_test.refusal_v = 'x'")
				b.Queue("SELECT pg_advisory_lock(4242)")
				b.Queue("LISTEN refusal_ch")
				b.Queue("CREATE TEMP TABLE refusal_tmp (a int)")
			}
			warmBatch(t, c, all, build, "SELECT setval('"+seq+"', 1, false)", "RESET pgline_test.refusal_v",
				"SELECT pg_advisory_unlock_all()", "UNLISTEN *", "DROP TABLE refusal_tmp")
			var first int64
			var resends int
			step := queuedStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
				b := &Batch{AllOrNothing: all}
				build(b)
				br := c.SendBatch(ctx, b)
				defer func() { resends = int(br.rep.Resends.Interfered) }()
				var err error
				switch read {
				case "exec":
					var tag CommandTag
					if tag, err = br.Exec(); err == nil && tag.String() != "SELECT 1" {
						err = fmt.Errorf("tag %q", tag.String())
					}
					first = 1
				case "queryrow":
					err = br.QueryRow().Scan(&first)
				case "query":
					var rows *Rows
					if rows, err = br.Query(); err == nil {
						for rows.Next() {
							err = rows.Scan(&first)
						}
						if e := rows.Err(); e != nil {
							err = e
						}
					}
				case "close":
					first = 1
					return br.Close()
				}
				if err != nil {
					br.Close()
					return fmt.Errorf("statement 0: %w", err)
				}
				for i := 1; i < b.Len(); i++ {
					if _, err := br.Exec(); err != nil {
						br.Close()
						return fmt.Errorf("statement %d: %w", i, err)
					}
				}
				return br.Close()
			}}
			errs := strandRefusing(t, c, nil, step)
			if errs[0] != nil {
				t.Fatalf("batch: %v", errs[0])
			}
			if resends != 1 {
				t.Fatalf("sent again %d times, want 1 (the path under test was not taken)", resends)
			}
			var last int64
			var v string
			var unlock1, unlock2 bool
			var channels, tmp int64
			if err := c.QueryRow(ctx, "SELECT last_value, current_setting('pgline_test.refusal_v'), "+
				"(SELECT count(*) FROM pg_listening_channels() ch WHERE ch = 'refusal_ch'), "+
				"(SELECT count(*) FROM pg_class WHERE relname = 'refusal_tmp' AND relpersistence = 't' AND pg_table_is_visible(oid)) FROM "+seq).
				Scan(&last, &v, &channels, &tmp); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, "SELECT pg_advisory_unlock(4242)").Scan(&unlock1); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, "SELECT pg_advisory_unlock(4242)").Scan(&unlock2); err != nil {
				t.Fatal(err)
			}
			if last != 1 || first != 1 || v != "x" || channels != 1 || tmp != 1 || !unlock1 || unlock2 {
				t.Errorf("nextval ran to %d (the caller got %d), setting %q, listening %d, temp tables %d, lock held once %v twice %v; want 1 1 x 1 1 true false",
					last, first, v, channels, tmp, unlock1, unlock2)
			}
			wantUsable(t, ctx, c)
		})
	}
}

// TestRefusedBatchPrepareFailedFirst: an independent batch whose first
// statement fails to prepare (42P01: not sent, its own error), its next
// ones refused by the block: sent again from the first sent statement,
// which runs once, as does the one after; the first keeps its own error.
func TestRefusedBatchPrepareFailedFirst(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := refusalTable(t, "prepfail")
	ctx := testCtx(t)
	build := func() *Batch {
		b := &Batch{}
		b.Queue("SELECT * FROM refusal_no_such_table")
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(1))
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(2))
		return b
	}
	c.SendBatch(ctx, build()).Close() // the INSERTs prepared
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		// The batch's describe of its first statement goes first, then the
		// slow strander; the batch itself is queued once the describe is
		// answered, while the strander runs.
		holdWrites(c)
		var wg sync.WaitGroup
		var errs [3]error
		var resends int
		wg.Add(2)
		go func() {
			defer wg.Done()
			br := c.SendBatch(ctx, build())
			for i := range errs {
				_, errs[i] = br.Exec()
			}
			resends = int(br.rep.Resends.Interfered)
			br.Close()
		}()
		waitQueued(t, c, 1)
		go func() {
			defer wg.Done()
			c.Exec(ctx, slowStranderSQL)
		}()
		waitQueued(t, c, 2)
		releaseWrites(c)
		wg.Wait()
		if resends == 0 && attempt < 5 {
			t.Logf("attempt %d: the batch was not refused (%v)", attempt, errs)
			c.Exec(ctx, "DELETE FROM "+tbl)
			continue
		}
		if pgCode(errs[0]) != "42P01" {
			t.Errorf("statement 0: %v, want its own 42P01", errs[0])
		}
		for i, err := range errs[1:] {
			if err != nil {
				t.Errorf("statement %d: %v", i+1, err)
			}
		}
		if resends != 1 {
			t.Errorf("sent again %d times, want 1", resends)
		}
		if got := fmt.Sprint(kValues(t, admin, tbl)); got != "[1 2]" {
			t.Errorf("rows %s, want [1 2]", got)
		}
		break
	}
	wantUsable(t, ctx, c)
}

// TestRefusedBatchRefusedAgain: the batch, sent again, is queued behind
// a text that strands its block once more: refused again, it is sent
// again again, and runs once.
func TestRefusedBatchRefusedAgain(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := refusalTable(t, "again")
	ctx := testCtx(t)
	build := twoInsertsBatch(t, c, tbl)
	strands := c.s.Block.Strands.Load()
	holdWrites(c)
	head, goOn := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var errs [2]error
	var resends int
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.Exec(ctx, stranderSQL)
	}()
	waitQueued(t, c, 1)
	go func() {
		defer wg.Done()
		br := c.SendBatch(ctx, build())
		close(head) // refused, the ROLLBACK queued behind it
		<-goOn
		for i := range errs {
			_, errs[i] = br.Exec()
		}
		resends = int(br.rep.Resends.Interfered)
		br.Close()
	}()
	waitQueued(t, c, 2)
	releaseWrites(c)
	<-head
	n := queuedRequests(c)
	go func() {
		defer wg.Done()
		c.Exec(ctx, slowStranderSQL) // behind the ROLLBACK, before the batch sent again
	}()
	waitQueued(t, c, n+1)
	close(goOn)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
	if resends != 2 || c.s.Block.Strands.Load()-strands != 2 {
		t.Errorf("sent again %d times, blocks stranded %d; want 2, 2", resends, c.s.Block.Strands.Load()-strands)
	}
	if got := fmt.Sprint(kValues(t, admin, tbl)); got != "[1 2]" {
		t.Errorf("rows %s, want [1 2]", got)
	}
	wantUsable(t, ctx, c)
}

// TestRefusedBatchResendsBounded: a block that refuses the batch every
// time it is sent (forced: the session's own aborted block read as a
// stranded one) ends the resends after maxCancelRetries: the caller gets
// errRefused (nothing ran) for each statement, promptly.
func TestRefusedBatchResendsBounded(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	build := func() *Batch {
		b := &Batch{}
		b.Queue("SELECT 1")
		b.Queue("SELECT 2")
		b.Queue("SELECT 3")
		return b
	}
	if err := c.SendBatch(ctx, build()).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "SELECT 1/0")
	end, state := c.s.Block.End, c.s.Block.Strand
	c.s.Block.End, c.s.Block.Strand = 1<<62, session.StrandOpen
	br := c.SendBatch(ctx, build())
	for i := range 3 {
		if _, err := br.Exec(); !errors.Is(err, session.ErrRefused) {
			t.Errorf("statement %d: %v, want errRefused", i, err)
		}
	}
	br.Close()
	if br.rep.Resends.Interfered != session.MaxCancelRetries {
		t.Errorf("sent again %d times, want %d", br.rep.Resends.Interfered, session.MaxCancelRetries)
	}
	c.s.Block.End, c.s.Block.Strand = end, state
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	wantUsable(t, ctx, c)
}

// TestRefusedBatchCtxEndsInResend: the batch's ctx ends while the batch,
// sent again, waits for its turn behind a slow statement: its caller gets
// its ctx's error at once (not errRefused, another's outcome), every
// statement after it too, Close returns, the statements ran at most once,
// and the connection stays usable.
func TestRefusedBatchCtxEndsInResend(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := refusalTable(t, "ctxresend")
	ctx := testCtx(t)
	build := twoInsertsBatch(t, c, tbl)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	holdWrites(c)
	head, goOn := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var errs [2]error
	var closeErr error
	var took time.Duration
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.Exec(ctx, stranderSQL)
	}()
	waitQueued(t, c, 1)
	go func() {
		defer wg.Done()
		br := c.SendBatch(bctx, build())
		close(head)
		<-goOn
		start := time.Now()
		_, errs[0] = br.Exec()
		took = time.Since(start)
		_, errs[1] = br.Exec()
		closeErr = br.Close()
	}()
	waitQueued(t, c, 2)
	releaseWrites(c)
	<-head
	n := queuedRequests(c)
	go func() {
		defer wg.Done()
		c.Exec(ctx, "SELECT pg_sleep(0.5)") // behind the ROLLBACK, before the batch sent again
	}()
	waitQueued(t, c, n+1)
	close(goOn)
	time.AfterFunc(100*time.Millisecond, cancel)
	wg.Wait()
	t.Logf("statements %v; Close %v; first answered after %v", errs, closeErr, took)
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("statement %d: %v, want the ctx's error", i, err)
		}
	}
	if took > 400*time.Millisecond {
		t.Errorf("answered after %v, not when its ctx ended", took)
	}
	wantUsable(t, ctx, c)
	for k := int64(1); k <= 2; k++ {
		if n := rowCount(t, admin, tbl+" WHERE k = $1", k); n > 1 {
			t.Errorf("row %d: %d times", k, n)
		}
	}
}

// TestRefusedDescribeSentAgain: the first use of a statement queued
// behind a text that strands its block: its describe is refused (25P02,
// nothing ran) and described again behind the ROLLBACK, and its caller
// gets its own value. Queued behind a caller's text that ends the
// stranded block and begins another within one group (ROLLBACK; BEGIN;
// ...), which then fails, the describe is refused by that caller's block,
// as any statement queued behind a raw BEGIN runs in its block: it gets
// an error, never a wrong value, and pgline's ROLLBACK, which ends the
// caller's block, closes the connection (strandRolledBack).
func TestRefusedDescribeSentAgain(t *testing.T) {
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprint("group=", group), func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			var steps []queuedStep
			if group {
				steps = append(steps, callStep("group", func(ctx context.Context) error {
					c.Exec(ctx, "ROLLBACK; BEGIN; SELECT 1/0")
					return nil
				}))
			}
			// A text of its own per run: never described on c before.
			sql := fmt.Sprintf("SELECT $1::int8 + 0 AS echo_col_%d", time.Now().UnixNano())
			var got int64
			steps = append(steps, callStep("first use", func(ctx context.Context) error {
				return c.QueryRow(ctx, sql, int64(7)).Scan(&got)
			}))
			errs := strandRefusing(t, c, nil, steps...)
			if group {
				first := errs[len(errs)-1]
				t.Logf("first use: %d, %v", got, first)
				if first == nil && got != 7 || first != nil && got != 0 {
					t.Errorf("sent 7, got %d (%v)", got, first)
				}
				if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
					t.Error("the ROLLBACK ended the caller's block, and the connection stays open")
				}
				return
			}
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s: %v", steps[i].name, err)
				}
			}
			if got != 7 {
				t.Errorf("sent 7, got %d", got)
			}
			wantUsable(t, ctx, c)
		})
	}
}

// TestStrayCancelBatchResendOrder: a CancelRequest meant for a given-up
// statement may land on the first statement of an independent batch queued
// behind it; pgline sends that statement again, after the rest of the
// batch ran. The batch's later statements must not run before it.
func TestStrayCancelBatchResendOrder(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id int, v int)")
	hits := 0
	for i := 0; i < 150 && hits < 3; i++ {
		xctx, xcancel := context.WithTimeout(ctx, 2*time.Millisecond)
		sleep := 0.094 + float64(i%13)/1000
		xdone := make(chan struct{})
		go func() {
			c.Exec(xctx, fmt.Sprintf("SELECT pg_sleep(%.3f)", sleep))
			close(xdone)
		}()
		time.Sleep(500 * time.Microsecond)
		b := &Batch{}
		b.Queue("INSERT INTO "+tbl+" SELECT $1, 0 FROM pg_sleep(0.01)", i)
		b.Queue("UPDATE "+tbl+" SET v = v + 1 WHERE id = $1", i)
		br := c.SendBatch(ctx, b)
		_, e1 := br.Exec()
		tag2, e2 := br.Exec()
		br.Close()
		<-xdone
		xcancel()
		if errors.Is(e1, ErrCanceledByOther) || errors.Is(e2, ErrCanceledByOther) {
			hits++
			t.Logf("iter %d: stray cancel reported: %v / %v", i, e1, e2)
			continue
		}
		if e1 != nil || e2 != nil {
			t.Logf("iter %d: %v / %v", i, e1, e2)
			continue
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT v FROM "+tbl+" WHERE id = $1", i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != 1 || tag2.RowsAffected() != 1 {
			hits++
			t.Errorf("iter %d: batch INSERT then UPDATE: UPDATE tag %q, v = %d: the INSERT ran after the UPDATE", i, tag2, v)
		}
	}
	t.Logf("cancels %d", c.s.CancelClock.Load())
}
