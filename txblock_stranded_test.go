package pgline

// A transaction block that nobody holds (stranded: a run chained to the
// next deallocates the named COMMIT of statement_cache_mode=prepare from
// inside a PL/pgSQL function, so that BEGIN opens the block and the Bind
// of the missing COMMIT fails with 26000; or a text or AllOrNothing batch
// that begins and ends its own block and fails before its COMMIT) is
// rolled back by pgline, and every caller queued behind it gets its own
// result: a request the block refused (25P02, nothing ran) is sent again
// once, behind pgline's ROLLBACK. The requests are queued while writes
// are held back as during a CancelRequest (see strandThenSteps), so that
// their order, and which runs share a Sync, is fixed.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestStrandedCallersGetOwnValues: the stranding run, a run chained to it
// (skipped, sent again), a simple query (refused, sent again), and two
// chained runs in a later Sync group (the first refused, the second
// skipped). Each caller gets its own value.
func TestStrandedCallersGetOwnValues(t *testing.T) {
	c := strandConn(t)
	simple := queuedStep{name: "simple query", requests: 1, start: func(ctx context.Context) error {
		_, err := c.simpleQuery(ctx, nil, "SELECT 77", nil)
		return err
	}}
	strandThenSteps(t, c, echoStep(c, "chained to the stranding run", 1), simple, echoStep(c, "first of a later group", 2), echoStep(c, "second of a later group", 3))
}

// TestStrandedInsertsRunOnce: INSERTs by QueryRow, Exec with arguments and
// a simple query, chained to the stranding run, refused, and skipped in a
// refused group: each runs exactly once.
func TestStrandedInsertsRunOnce(t *testing.T) {
	c := strandConn(t)
	tbl, admin := strandTable(t, "ins")
	ins := func(name string, v int64, how int) queuedStep {
		return queuedStep{name: name, requests: 1, start: func(ctx context.Context) error {
			switch how {
			case 0:
				var got int64
				return c.QueryRow(ctx, "INSERT INTO "+tbl+" VALUES ($1) RETURNING k", v).Scan(&got)
			case 1:
				_, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", v)
				return err
			default:
				_, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d)", tbl, v))
				return err
			}
		}}
	}
	// Described first: queued with writes held, they must not wait for
	// their describes.
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(0)); err != nil {
		t.Fatal(err)
	}
	var z int64
	if err := c.QueryRow(ctx, "INSERT INTO "+tbl+" VALUES ($1) RETURNING k", int64(0)).Scan(&z); err != nil {
		t.Fatal(err)
	}
	strandThenSteps(t, c,
		ins("chained", 1, 0), ins("chained 2", 2, 1),
		ins("simple", 3, 2),
		ins("later group 1", 4, 1), ins("later group 2", 5, 0), ins("later group 3", 6, 1),
		ins("simple 2", 7, 2),
		ins("alone", 8, 0))
	got := fmt.Sprint(kValues(t, admin, tbl))
	if want := "[0 0 1 2 3 4 5 6 7 8]"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestStrandedBatchSentAgainWhole: a batch refused by the block,
// independent or AllOrNothing, is sent again whole (nothing of it ran, and
// it has no transaction control): every statement succeeds, and its row
// exists once; one with a COMMIT among its statements is not (its first
// statement reports errRefused). Nothing of a statement reported failed
// exists.
func TestStrandedBatchSentAgainWhole(t *testing.T) {
	c := strandConn(t)
	tbl, admin := strandTable(t, "batch")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(0)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	okKeys := map[int64]bool{}
	batch := func(name string, all bool, base int64) queuedStep {
		return queuedStep{name: name, requests: 1, start: func(ctx context.Context) error {
			b := &Batch{AllOrNothing: all}
			for i := range int64(3) {
				b.Queue("INSERT INTO "+tbl+" VALUES ($1)", base+i)
			}
			br := c.SendBatch(ctx, b)
			defer br.Close()
			for i := range int64(3) {
				_, err := br.Exec()
				switch {
				case err == nil:
					mu.Lock()
					okKeys[base+i] = true
					mu.Unlock()
				default:
					return fmt.Errorf("statement %d: %w", i, err)
				}
			}
			return nil
		}}
	}
	// A batch with transaction control is not sent again: its COMMIT ends
	// the block that refused its first statement, and the statement after
	// it runs; the first, sent again, would run after it. Its statements
	// are prepared beforehand, so that it is one request.
	withCommit := func(b *Batch) {
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(30))
		b.Queue("COMMIT")
		b.Queue("INSERT INTO "+tbl+" VALUES ($1)", int64(31))
	}
	var warm Batch
	withCommit(&warm)
	if err := c.SendBatch(ctx, &warm).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl+" WHERE k IN (30, 31)"); err != nil {
		t.Fatal(err)
	}
	txControl := queuedStep{name: "with COMMIT", requests: 1, start: func(ctx context.Context) error {
		var b Batch
		withCommit(&b)
		br := c.SendBatch(ctx, &b)
		defer br.Close()
		if _, err := br.Exec(); !errors.Is(err, session.ErrRefused) {
			return fmt.Errorf("statement 0: %v, want errRefused", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("COMMIT: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("statement 2: %w", err)
		}
		mu.Lock()
		okKeys[31] = true
		mu.Unlock()
		return nil
	}}
	strandThenSteps(t, c, echoStep(c, "chained", 1), batch("independent", false, 10), batch("all or nothing", true, 20), txControl, echoStep(c, "after", 2))
	rows := kValues(t, admin, tbl)
	seen := map[int64]int{}
	for _, k := range rows {
		seen[k]++
	}
	for k, n := range seen {
		if k != 0 && (!okKeys[k] || n != 1) {
			t.Errorf("row %d: %d times, reported ok %v", k, n, okKeys[k])
		}
	}
	for k := range okKeys {
		if seen[k] != 1 {
			t.Errorf("row %d reported ok, found %d times", k, seen[k])
		}
	}
	if len(okKeys) != 7 {
		t.Errorf("%d statements succeeded, want 7", len(okKeys))
	}
	t.Logf("rows %v", rows)
}

// TestStrandedGateHoldersSentAgain: a caller that takes the connection for
// itself (a Tx, CopyFrom, CopyTo) with its first request refused by the
// block: sent again, it runs once, in its own transaction.
func TestStrandedGateHoldersSentAgain(t *testing.T) {
	for _, kind := range []string{"tx", "txopts", "copyfrom", "copyto", "copyfrom-in-tx"} {
		t.Run(kind, func(t *testing.T) {
			c := strandConn(t)
			tbl, admin := strandTable(t, "gate")
			ctx := testCtx(t)
			if _, err := admin.Exec(ctx, "INSERT INTO "+tbl+" SELECT generate_series(1000, 1004)"); err != nil {
				t.Fatal(err)
			}
			// Described first (CopyFrom's column describe is never cached).
			var copied bytesBuffer
			var step queuedStep
			switch kind {
			case "tx", "txopts":
				step = queuedStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					opts := TxOptions{}
					if kind == "txopts" {
						opts.IsoLevel = "serializable"
					}
					tx, err := c.BeginTx(ctx, opts)
					if err != nil {
						return fmt.Errorf("begin: %w", err)
					}
					defer tx.Rollback(ctx)
					if st := c.TxStatus(); st != 'T' {
						return fmt.Errorf("after BEGIN, TxStatus %c", st)
					}
					if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(1)); err != nil {
						return fmt.Errorf("insert: %w", err)
					}
					var n int64
					if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE k = 1").Scan(&n); err != nil || n != 1 {
						return fmt.Errorf("count in tx: %d %v", n, err)
					}
					return tx.Commit(ctx)
				}}
			case "copyfrom":
				step = queuedStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					n, err := c.CopyFrom(ctx, Identifier{tbl}, []string{"k"}, CopyFromRows([][]any{{int64(1)}, {int64(2)}}))
					if err == nil && n != 2 {
						err = fmt.Errorf("copied %d rows", n)
					}
					return err
				}}
			case "copyfrom-in-tx":
				step = queuedStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					tx, err := c.Begin(ctx)
					if err != nil {
						return fmt.Errorf("begin: %w", err)
					}
					defer tx.Rollback(ctx)
					n, err := tx.CopyFrom(ctx, Identifier{tbl}, []string{"k"}, CopyFromRows([][]any{{int64(1)}, {int64(2)}}))
					if err != nil || n != 2 {
						return fmt.Errorf("copy: %d %w", n, err)
					}
					return tx.Commit(ctx)
				}}
			case "copyto":
				step = queuedStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					tag, err := c.CopyTo(ctx, &copied, "COPY (SELECT k FROM "+tbl+" ORDER BY k) TO STDOUT")
					if err == nil && tag.String() != "COPY 5" {
						err = fmt.Errorf("tag %q", tag.String())
					}
					return err
				}}
			}
			behind := echoStep(c, "behind, at the gate", 8)
			behind.requests = 0 // waits for the holder
			strandThenSteps(t, c, echoStep(c, "chained", 7), step, behind)
			got := fmt.Sprint(kValues(t, admin, tbl))
			want := map[string]string{
				"tx": "[1 1000 1001 1002 1003 1004]", "txopts": "[1 1000 1001 1002 1003 1004]",
				"copyfrom": "[1 2 1000 1001 1002 1003 1004]", "copyfrom-in-tx": "[1 2 1000 1001 1002 1003 1004]",
				"copyto": "[1000 1001 1002 1003 1004]",
			}[kind]
			if got != want {
				t.Errorf("rows %s, want %s", got, want)
			}
			if kind == "copyto" && copied.String() != "1000\n1001\n1002\n1003\n1004\n" {
				t.Errorf("CopyTo wrote %q", copied.String())
			}
		})
	}
}

// TestStrandedShortCtxCallers: callers whose ctx ends while their request
// waits behind the stranding group (a Tx's BEGIN, whose end queues a
// ROLLBACK before the one of the strand; an echo; an INSERT): each gets
// its ctx's error by its deadline, nothing of the INSERT exists, and the
// callers behind get their own values.
func TestStrandedShortCtxCallers(t *testing.T) {
	c := strandConn(t)
	tbl, admin := strandTable(t, "short")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(0)); err != nil {
		t.Fatal(err)
	}
	short := func(name string, f func(ctx context.Context) error) queuedStep {
		return queuedStep{name: name, requests: 1, start: func(ctx context.Context) error {
			sctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := f(sctx)
			if el := time.Since(start); el > 200*time.Millisecond {
				return fmt.Errorf("answered after %v: %v", el, err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("want the ctx's error, got %v", err)
			}
			return nil
		}}
	}
	begin := short("begin", func(ctx context.Context) error {
		tx, err := c.Begin(ctx)
		if err == nil {
			tx.Rollback(ctx)
		}
		return err
	})
	echo := short("echo", func(ctx context.Context) error {
		var v int64
		return c.QueryRow(ctx, "SELECT 5::int8").Scan(&v)
	})
	insert := short("insert", func(ctx context.Context) error {
		_, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(99))
		return err
	})
	behind := echoStep(c, "behind the Tx", 3)
	behind.requests = 0
	// The short callers' ctx ends while writes are held: sleep past it.
	wait := queuedStep{name: "wait", start: func(context.Context) error { return nil }}
	steps := []queuedStep{echoStep(c, "chained", 1), insert, echo, begin, behind}
	for range 6 {
		steps = append(steps, wait)
	}
	strandThenSteps(t, c, steps...)
	if got := fmt.Sprint(kValues(t, admin, tbl)); got != "[0]" {
		// The INSERT was refused (its ctx ended before its turn, so it was
		// not sent again): it must not exist.
		t.Errorf("rows %s", got)
	}
}

// TestStrandedRawTxTextBehind: transaction control given as text by
// callers sharing the Conn, queued behind the stranding group: a raw
// "BEGIN" (refused, sent again: it opens the caller's block after the
// ROLLBACK), a "ROLLBACK" (which the aborted block accepts: it ends the
// stranded block itself) and a multi-statement text with its own BEGIN
// and COMMIT (refused as a whole, sent again, committed once).
func TestStrandedRawTxTextBehind(t *testing.T) {
	c := strandConn(t)
	tbl, admin := strandTable(t, "raw")
	multi := queuedStep{name: "BEGIN; INSERT; COMMIT", requests: 1, start: func(ctx context.Context) error {
		_, err := c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" VALUES (5); COMMIT")
		return err
	}}
	rollback := queuedStep{name: "raw ROLLBACK", requests: 1, start: func(ctx context.Context) error {
		_, err := c.Exec(ctx, "ROLLBACK")
		return err
	}}
	strandThenSteps(t, c, echoStep(c, "chained", 1), multi, rollback, echoStep(c, "after", 2))
	if got := fmt.Sprint(kValues(t, admin, tbl)); got != "[5]" {
		t.Errorf("rows %s, want [5]", got)
	}
}

// TestStrandedByFailedRawTxText: transaction control given as text, in
// one call ("BEGIN; SELECT 1/0; COMMIT", or a batch [BEGIN, 1/0,
// COMMIT]), that fails between its BEGIN and its COMMIT leaves the
// session in an aborted block nobody holds once the call has returned:
// pgline rolls it back, and the next caller's statement (another
// goroutine's) runs outside any block.
func TestStrandedByFailedRawTxText(t *testing.T) {
	for _, tc := range []struct{ name, sql string }{
		{"simple query with its own BEGIN and COMMIT", "BEGIN; SELECT 1/0; COMMIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			c := connect(t, srv.DSN())
			_, err := c.Exec(ctx, tc.sql)
			t.Logf("the call: %v; TxStatus after it %c", err, c.TxStatus())
			var v int64
			err = c.QueryRow(ctx, "SELECT 7::int8").Scan(&v)
			t.Logf("next statement (another caller's): %d %v", v, err)
			if pgCode(err) == "25P02" || c.TxStatus() != 'I' {
				t.Errorf("the next caller's statement: %v, TxStatus %c", err, c.TxStatus())
			}
		})
	}
	t.Run("batch [BEGIN, 1/0, COMMIT]", func(t *testing.T) {
		ctx := testCtx(t)
		c := connect(t, srv.DSN())
		var b Batch
		b.Queue("BEGIN")
		b.Queue("SELECT 1/0")
		b.Queue("COMMIT")
		br := c.SendBatch(ctx, &b)
		for i := range 3 {
			_, err := br.Exec()
			t.Logf("batch %d: %v", i, err)
		}
		br.Close()
		var v int64
		err := c.QueryRow(ctx, "SELECT 7::int8").Scan(&v)
		t.Logf("next statement: %d %v, TxStatus %c", v, err, c.TxStatus())
		if pgCode(err) == "25P02" || c.TxStatus() != 'I' {
			t.Errorf("the next caller's statement: %v, TxStatus %c", err, c.TxStatus())
		}
	})
}

// TestStrandedByFailedAtomicBatch: an AllOrNothing batch that begins and
// ends its own block (BEGIN ... COMMIT) and fails before its COMMIT (its
// statement fails, or a cancel's signal lands in it): the server skips
// the COMMIT up to the batch's Sync and the session stays in the aborted
// block, which nobody holds. The caller queued behind it, and every
// caller after, must get its own result, not 25P02 from that block (a
// text "BEGIN; ...; COMMIT" failing the same way is rolled back: see
// leavesStranded).
func TestStrandedByFailedAtomicBatch(t *testing.T) {
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
			holdWrites(c)
			var wg sync.WaitGroup
			var errB, errE error
			wg.Add(2)
			go func() {
				defer wg.Done()
				errB = c.SendBatch(ctx, build()).Close()
			}()
			waitQueued(t, c, 1)
			go func() {
				defer wg.Done()
				var v int64
				errE = c.QueryRow(ctx, "SELECT 7::int8").Scan(&v)
				if errE == nil && v != 7 {
					errE = fmt.Errorf("got %d", v)
				}
			}()
			waitQueued(t, c, 2)
			releaseWrites(c)
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
