package pgline

// Audit of 7ab901f (a Batch refused by a transaction block another
// request stranded is sent again whole, from its first sent statement,
// unless one of its statements is transaction control: mayResendRefused,
// resendRefused) and of the refusal machinery around it (refused,
// rollBackStranded, mayResend). The block is stranded on purpose: a text
// that begins and ends its own block and fails before its COMMIT
// (auditStrander) is queued with writes held, the batch behind it, so
// that the batch sits between the failed text and the ROLLBACK pgline
// queues once it reads the text's reply, and the server refuses it
// (25P02).
//
// TestAuditRefusalTxControl, TestAuditRefusalAtomicBlockLeft and
// TestAuditRefusalOwnBlock failed when written (see each); the others are
// regression tests of paths no other test takes.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditRefusalTxControl: a batch refused by the stranded block, with
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
func TestAuditRefusalTxControl(t *testing.T) {
	auditStrandFunc(t) // audit_strand_dealloc
	const ins = "INSERT INTO {t} VALUES (1)"
	for _, tc := range []struct {
		name string
		all  bool
		sqls []string
		undo string
		rows int64
	}{
		{"all/BEGIN INSERT COMMIT", true, []string{"BEGIN", ins, "COMMIT"}, "", 1},
		{"all/SAVEPOINT RELEASE", true, []string{"BEGIN", "SAVEPOINT audit_sp", ins, "RELEASE audit_sp", "COMMIT"}, "", 1},
		{"all/DO", true, []string{"DO $$BEGIN " + ins + "; END$$", ins}, "", 2},
		{"independent/PREPARE EXECUTE", false, []string{"PREPARE audit_refusal_p AS " + ins, "EXECUTE audit_refusal_p"},
			"SELECT audit_strand_dealloc('audit_refusal_p')", 1},
		{"independent/DO", false, []string{"DO $$BEGIN " + ins + "; END$$", ins}, "", 2},
		{"independent/CALL", false, []string{"CALL {t}_p(1)", ins}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN())
			tbl, admin := auditRefusalTable(t, "txc")
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
			auditWarmBatch(t, c, tc.all, build, undo...)
			errs := auditRefuse(t, c, nil, auditBatchStep(c, tc.name, tc.all, build))
			if errs[0] != nil {
				t.Errorf("batch: %v", errs[0])
			} else if n := auditCount(t, admin, tbl, 1); n != tc.rows {
				t.Errorf("%d rows, want %d", n, tc.rows)
			}
			wantUsable(t, ctx, c)
		})
	}
}

// TestAuditRefusalAtomicBlockLeft: an AllOrNothing batch that begins and
// ends its own block (BEGIN ... COMMIT) and fails before its COMMIT (its
// statement fails, or a cancel's signal lands in it): the server skips
// the COMMIT up to the batch's Sync and the session stays in the aborted
// block, which nobody holds. The caller queued behind it, and every
// caller after, must get its own result, not 25P02 from that block (a
// text "BEGIN; ...; COMMIT" failing the same way is rolled back: see
// leavesStranded).
func TestAuditRefusalAtomicBlockLeft(t *testing.T) {
	for _, tc := range []struct{ name, sql string }{
		{"statement fails", "SELECT 1/0"},
		{"cancel signal", "SELECT pg_cancel_backend(pg_backend_pid()), pg_sleep(1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			build := func() *Batch {
				b := &Batch{AllOrNothing: true}
				b.Queue("BEGIN")
				b.Queue(tc.sql)
				b.Queue("COMMIT")
				return b
			}
			c.SendBatch(ctx, build()).Close() // prepared: one request below
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			auditHoldWrites(c)
			var wg sync.WaitGroup
			var errB, errE error
			wg.Add(2)
			go func() {
				defer wg.Done()
				errB = c.SendBatch(ctx, build()).Close()
			}()
			auditWaitQueued(t, c, 1)
			go func() {
				defer wg.Done()
				var v int64
				errE = c.QueryRow(ctx, "SELECT 7::int8").Scan(&v)
				if errE == nil && v != 7 {
					errE = fmt.Errorf("got %d", v)
				}
			}()
			auditWaitQueued(t, c, 2)
			auditResumeWrites(c)
			wg.Wait()
			t.Logf("batch: %v; TxStatus %c", errB, c.TxStatus())
			if errB == nil {
				t.Fatal("the batch did not fail")
			}
			if errE != nil {
				t.Errorf("the caller behind the batch: %v", errE)
			}
			var v int64
			if err := c.QueryRow(ctx, "SELECT 8::int8").Scan(&v); err != nil {
				t.Errorf("the next caller: %v", err)
			}
		})
	}
}

// TestAuditRefusalSessionEffects: a batch of statements whose effects
// outlive their transaction (nextval, SET, a session-level advisory
// lock, LISTEN, CREATE TEMP TABLE), refused by the stranded block and
// sent again whole, independent or AllOrNothing, its first statement read
// by Exec, QueryRow or Query, or not read at all (Close): each statement
// runs exactly once (the sequence moved by one, the lock held once, the
// temporary table created without 42P07) and reports success, and
// nextval's caller gets its own value. (AllOrNothing and Exec reads of
// INSERTs: TestAuditStrandDetBatch.)
func TestAuditRefusalSessionEffects(t *testing.T) {
	for _, tc := range []struct {
		all  bool
		read string
	}{{false, "exec"}, {false, "queryrow"}, {false, "query"}, {false, "close"}, {true, "close"}} {
		all, read := tc.all, tc.read
		t.Run(fmt.Sprintf("all=%v/%s", all, read), func(t *testing.T) {
			c := connect(t, srv.DSN())
			ctx := testCtx(t)
			seq := fmt.Sprintf("audit_refusal_seq_%d", time.Now().UnixNano())
			if _, err := c.Exec(ctx, "CREATE SEQUENCE "+seq); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(context.Background(), "DROP SEQUENCE "+seq) })
			build := func(b *Batch) {
				b.Queue("SELECT nextval('" + seq + "')")
				b.Queue("SET audit.refusal_v = 'x'")
				b.Queue("SELECT pg_advisory_lock(4242)")
				b.Queue("LISTEN audit_refusal_ch")
				b.Queue("CREATE TEMP TABLE audit_refusal_tmp (a int)")
			}
			auditWarmBatch(t, c, all, build, "SELECT setval('"+seq+"', 1, false)", "RESET audit.refusal_v",
				"SELECT pg_advisory_unlock_all()", "UNLISTEN *", "DROP TABLE audit_refusal_tmp")
			var first int64
			var resends int
			step := auditStrandStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
				b := &Batch{AllOrNothing: all}
				build(b)
				br := c.SendBatch(ctx, b)
				defer func() { resends = br.refusedResends }()
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
			errs := auditRefuse(t, c, nil, step)
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
			if err := c.QueryRow(ctx, "SELECT last_value, current_setting('audit.refusal_v'), "+
				"(SELECT count(*) FROM pg_listening_channels() ch WHERE ch = 'audit_refusal_ch'), "+
				"(SELECT count(*) FROM pg_class WHERE relname = 'audit_refusal_tmp' AND relpersistence = 't' AND pg_table_is_visible(oid)) FROM "+seq).
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

// TestAuditRefusalPool: a Pool's batch (one connection) refused by the
// block a Pool's Exec stranded: sent again whole, each statement runs
// once, and the batch gives its slot back on Close (the next statement
// runs; Pool.Close returns).
func TestAuditRefusalPool(t *testing.T) {
	p, closesWithin := auditPoolOfOne(t)
	c := auditPoolConn1(t, p)
	tbl, admin := auditRefusalTable(t, "pool")
	build := func(b *Batch) {
		for k := range int64(3) {
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", k)
		}
	}
	ctx := testCtx(t)
	b := &Batch{}
	build(b)
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	var resends int
	step := auditStrandStep{name: "pool batch", requests: 1, start: func(ctx context.Context) error {
		b := &Batch{}
		build(b)
		br := p.SendBatch(ctx, b)
		for i := range b.Len() {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return fmt.Errorf("statement %d: %w", i, err)
			}
		}
		resends = br.refusedResends
		return br.Close()
	}}
	errs := auditRefuse(t, c, func(ctx context.Context) error { _, err := p.Exec(ctx, auditStrander); return err }, step)
	if errs[0] != nil {
		t.Fatalf("batch: %v", errs[0])
	}
	if resends != 1 {
		t.Fatalf("sent again %d times, want 1", resends)
	}
	if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[0 1 2]" {
		t.Errorf("rows %s, want [0 1 2]", got)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement: %d, %v", n, err)
	}
	if !closesWithin(5 * time.Second) {
		t.Error("Pool.Close hangs: the batch kept its slot")
	}
}

// TestAuditRefusalPrepareFailedFirst: an independent batch whose first
// statement fails to prepare (42P01: not sent, its own error), its next
// ones refused by the block: sent again from the first sent statement,
// which runs once, as does the one after; the first keeps its own error.
func TestAuditRefusalPrepareFailedFirst(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := auditRefusalTable(t, "prepfail")
	ctx := testCtx(t)
	build := func() *Batch {
		b := &Batch{}
		b.Queue("SELECT * FROM audit_refusal_no_such_table")
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
		auditHoldWrites(c)
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
			resends = br.refusedResends
			br.Close()
		}()
		auditWaitQueued(t, c, 1)
		go func() {
			defer wg.Done()
			c.Exec(ctx, auditSlowStrander)
		}()
		auditWaitQueued(t, c, 2)
		auditResumeWrites(c)
		wg.Wait()
		if resends == 0 && attempt < 5 {
			t.Logf("attempt %d: the batch was not refused (%v)", attempt, errs)
			c.Exec(ctx, "DELETE FROM "+tbl)
			continue
		}
		if !isCode(errs[0], "42P01") {
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
		if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[1 2]" {
			t.Errorf("rows %s, want [1 2]", got)
		}
		break
	}
	wantUsable(t, ctx, c)
}

// TestAuditRefusalRefusedAgain: the batch, sent again, is queued behind
// a text that strands its block once more: refused again, it is sent
// again again, and runs once.
func TestAuditRefusalRefusedAgain(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := auditRefusalTable(t, "again")
	ctx := testCtx(t)
	build := auditTwoInserts(t, c, tbl)
	strands := c.strands.Load()
	auditHoldWrites(c)
	head, goOn := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var errs [2]error
	var resends int
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.Exec(ctx, auditStrander)
	}()
	auditWaitQueued(t, c, 1)
	go func() {
		defer wg.Done()
		br := c.SendBatch(ctx, build())
		close(head) // refused, the ROLLBACK queued behind it
		<-goOn
		for i := range errs {
			_, errs[i] = br.Exec()
		}
		resends = br.refusedResends
		br.Close()
	}()
	auditWaitQueued(t, c, 2)
	auditResumeWrites(c)
	<-head
	n := auditQueued(c)
	go func() {
		defer wg.Done()
		c.Exec(ctx, auditSlowStrander) // behind the ROLLBACK, before the batch sent again
	}()
	auditWaitQueued(t, c, n+1)
	close(goOn)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
	if resends != 2 || c.strands.Load()-strands != 2 {
		t.Errorf("sent again %d times, blocks stranded %d; want 2, 2", resends, c.strands.Load()-strands)
	}
	if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[1 2]" {
		t.Errorf("rows %s, want [1 2]", got)
	}
	wantUsable(t, ctx, c)
}

// TestAuditRefusalBounded: a block that refuses the batch every time it
// is sent (forced: the session's own aborted block read as a stranded
// one) ends the resends after maxCancelRetries: the caller gets
// errRefused (nothing ran) for each statement, promptly.
func TestAuditRefusalBounded(t *testing.T) {
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
	end := c.strandEnd.Load()
	c.strandEnd.Store(1 << 62)
	c.strandOpen.Store(true)
	br := c.SendBatch(ctx, build())
	for i := range 3 {
		if _, err := br.Exec(); !errors.Is(err, errRefused) {
			t.Errorf("statement %d: %v, want errRefused", i, err)
		}
	}
	br.Close()
	if br.refusedResends != maxCancelRetries {
		t.Errorf("sent again %d times, want %d", br.refusedResends, maxCancelRetries)
	}
	c.strandEnd.Store(end)
	c.strandOpen.Store(false)
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	wantUsable(t, ctx, c)
}

// TestAuditRefusalOwnBlock: the stranded block is ended early by a
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
func TestAuditRefusalOwnBlock(t *testing.T) {
	t.Run("refusal misread", func(t *testing.T) {
		c := connect(t, srv.DSN())
		tbl, admin := auditRefusalTable(t, "ownblock")
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
		rollback := auditStrandStep{name: "raw ROLLBACK", requests: 1, start: func(ctx context.Context) error {
			_, err := c.Exec(ctx, "ROLLBACK")
			return err
		}}
		var errs [4]error
		batch := auditStrandStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
			b := &Batch{}
			build(b)
			br := c.SendBatch(ctx, b)
			for i := range errs {
				_, errs[i] = br.Exec()
			}
			return br.Close()
		}}
		auditRefuse(t, c, nil, rollback, batch)
		t.Logf("statements: %v", errs)
		if errs[0] != nil || errs[1] != nil || !isCode(errs[2], "22012") {
			t.Fatalf("the batch did not run as planned: %v", errs)
		}
		if !isCode(errs[3], "25P02") {
			t.Errorf("last statement: %v, want its own block's 25P02", errs[3])
		}
		if got := auditRows(t, admin, tbl); len(got) != 0 {
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
		tbl, admin := auditRefusalTable(t, "ownblock2")
		build := func(b *Batch) {
			b.Queue("COMMIT")
			b.Queue("BEGIN")
			b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(1))
		}
		auditWarmBatch(t, c, false, build, "ROLLBACK", "DELETE FROM "+tbl)
		ctx := testCtx(t)
		var errs [3]error
		batch := auditStrandStep{name: "batch", requests: 1, start: func(ctx context.Context) error {
			b := &Batch{}
			build(b)
			br := c.SendBatch(ctx, b)
			for i := range errs {
				_, errs[i] = br.Exec()
			}
			return br.Close()
		}}
		auditRefuse(t, c, nil, batch)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("statement %d: %v", i, err)
			}
		}
		_, err := c.Exec(ctx, "COMMIT")
		t.Logf("COMMIT: %v", err)
		if n := auditCount(t, admin, tbl, 1); err == nil && n != 1 {
			t.Errorf("the caller's BEGIN, INSERT and COMMIT succeeded; its row exists %d times, want 1", n)
		}
	})
}

// TestAuditRefusalCtxEndsInResend: the batch's ctx ends while the batch,
// sent again, waits for its turn behind a slow statement: its caller gets
// its ctx's error at once (not errRefused, another's outcome), every
// statement after it too, Close returns, the statements ran at most once,
// and the connection stays usable.
func TestAuditRefusalCtxEndsInResend(t *testing.T) {
	c := connect(t, srv.DSN())
	tbl, admin := auditRefusalTable(t, "ctxresend")
	ctx := testCtx(t)
	build := auditTwoInserts(t, c, tbl)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	auditHoldWrites(c)
	head, goOn := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var errs [2]error
	var closeErr error
	var took time.Duration
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.Exec(ctx, auditStrander)
	}()
	auditWaitQueued(t, c, 1)
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
	auditWaitQueued(t, c, 2)
	auditResumeWrites(c)
	<-head
	n := auditQueued(c)
	go func() {
		defer wg.Done()
		c.Exec(ctx, "SELECT pg_sleep(0.5)") // behind the ROLLBACK, before the batch sent again
	}()
	auditWaitQueued(t, c, n+1)
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
		if n := auditCount(t, admin, tbl, k); n > 1 {
			t.Errorf("row %d: %d times", k, n)
		}
	}
}
