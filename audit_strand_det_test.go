package pgline

// Audit of 995b187 with a stranded transaction block made on purpose, so
// that every path of the refusal machinery runs every time instead of a
// few times a second under a storm. A run chained to the next (its Sync
// replaced by the named BEGIN and COMMIT of statement_cache_mode=prepare)
// deallocates the named COMMIT from inside a PL/pgSQL function: the
// server runs the statement, BEGIN opens the block, and the Bind of the
// missing COMMIT fails (26000), which leaves the session in an aborted
// block nobody holds, exactly as a cancel's signal landing there does.
// (26000 there also reads as a pooler's sign, and the connection turns to
// describe mode: one strand per connection.) The requests are queued
// while writes are held back as during a CancelRequest (c.cancelling), so
// that their order, and which runs share a Sync, is fixed.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestAuditStrandDetSmoke: the stranding run, a run chained to it
// (skipped, sent again), a simple query (refused, sent again), and two
// chained runs in a later Sync group (the first refused, the second
// skipped). Each caller gets its own value.
func TestAuditStrandDetSmoke(t *testing.T) {
	c := auditStrandConn(t)
	echo := func(name string, v int64) auditStrandStep {
		return auditStrandStep{name: name, requests: 1, start: func(ctx context.Context) error {
			var got int64
			err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got)
			if err == nil && got != v {
				err = fmt.Errorf("sent %d, got %d", v, got)
			}
			return err
		}}
	}
	simple := auditStrandStep{name: "simple query", requests: 1, start: func(ctx context.Context) error {
		var got int64
		_, err := c.simpleQuery(ctx, nil, "SELECT 77", nil)
		_ = got
		return err
	}}
	auditStrand(t, c, echo("chained to the stranding run", 1), simple, echo("first of a later group", 2), echo("second of a later group", 3))
}

// TestAuditStrandDetInserts: INSERTs by QueryRow, Exec with arguments and
// a simple query, chained to the stranding run, refused, and skipped in a
// refused group: each runs exactly once.
func TestAuditStrandDetInserts(t *testing.T) {
	c := auditStrandConn(t)
	tbl, admin := auditStrandTable(t, "ins")
	ins := func(name string, v int64, how int) auditStrandStep {
		return auditStrandStep{name: name, requests: 1, start: func(ctx context.Context) error {
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
	auditStrand(t, c,
		ins("chained", 1, 0), ins("chained 2", 2, 1),
		ins("simple", 3, 2),
		ins("later group 1", 4, 1), ins("later group 2", 5, 0), ins("later group 3", 6, 1),
		ins("simple 2", 7, 2),
		ins("alone", 8, 0))
	got := fmt.Sprint(auditRows(t, admin, tbl))
	if want := "[0 0 1 2 3 4 5 6 7 8]"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestAuditStrandDetBatch: a batch refused by the block, independent or
// AllOrNothing, is sent again whole (nothing of it ran, and it has no
// transaction control): every statement succeeds, and its row exists
// once; one with a COMMIT among its statements is not (its first
// statement reports errRefused). Nothing of a statement reported failed
// exists.
func TestAuditStrandDetBatch(t *testing.T) {
	c := auditStrandConn(t)
	tbl, admin := auditStrandTable(t, "batch")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(0)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	okKeys := map[int64]bool{}
	batch := func(name string, all bool, base int64) auditStrandStep {
		return auditStrandStep{name: name, requests: 1, start: func(ctx context.Context) error {
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
	txControl := auditStrandStep{name: "with COMMIT", requests: 1, start: func(ctx context.Context) error {
		var b Batch
		withCommit(&b)
		br := c.SendBatch(ctx, &b)
		defer br.Close()
		if _, err := br.Exec(); !errors.Is(err, errRefused) {
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
	auditStrand(t, c, auditEcho(c, "chained", 1), batch("independent", false, 10), batch("all or nothing", true, 20), txControl, auditEcho(c, "after", 2))
	rows := auditRows(t, admin, tbl)
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

// TestAuditStrandDetGateHolders: a caller that takes the connection for
// itself (a Tx, CopyFrom, CopyTo) with its first request refused by the
// block: sent again, it runs once, in its own transaction.
func TestAuditStrandDetGateHolders(t *testing.T) {
	for _, kind := range []string{"tx", "txopts", "copyfrom", "copyto", "copyfrom-in-tx"} {
		t.Run(kind, func(t *testing.T) {
			c := auditStrandConn(t)
			tbl, admin := auditStrandTable(t, "gate")
			ctx := testCtx(t)
			if _, err := admin.Exec(ctx, "INSERT INTO "+tbl+" SELECT generate_series(1000, 1004)"); err != nil {
				t.Fatal(err)
			}
			// Described first (CopyFrom's column describe is never cached).
			var copied bytesBuffer
			var step auditStrandStep
			switch kind {
			case "tx", "txopts":
				step = auditStrandStep{name: kind, requests: 1, start: func(ctx context.Context) error {
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
				step = auditStrandStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					n, err := c.CopyFrom(ctx, Identifier{tbl}, []string{"k"}, CopyFromRows([][]any{{int64(1)}, {int64(2)}}))
					if err == nil && n != 2 {
						err = fmt.Errorf("copied %d rows", n)
					}
					return err
				}}
			case "copyfrom-in-tx":
				step = auditStrandStep{name: kind, requests: 1, start: func(ctx context.Context) error {
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
				step = auditStrandStep{name: kind, requests: 1, start: func(ctx context.Context) error {
					tag, err := c.CopyTo(ctx, &copied, "COPY (SELECT k FROM "+tbl+" ORDER BY k) TO STDOUT")
					if err == nil && tag.String() != "COPY 5" {
						err = fmt.Errorf("tag %q", tag.String())
					}
					return err
				}}
			}
			behind := auditEcho(c, "behind, at the gate", 8)
			behind.requests = 0 // waits for the holder
			auditStrand(t, c, auditEcho(c, "chained", 7), step, behind)
			got := fmt.Sprint(auditRows(t, admin, tbl))
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

// TestAuditStrandDetShortCtx: callers whose ctx ends while their request
// waits behind the stranding group (a Tx's BEGIN, whose end queues a
// ROLLBACK before the one of the strand; an echo; an INSERT): each gets
// its ctx's error by its deadline, nothing of the INSERT exists, and the
// callers behind get their own values.
func TestAuditStrandDetShortCtx(t *testing.T) {
	c := auditStrandConn(t)
	tbl, admin := auditStrandTable(t, "short")
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", int64(0)); err != nil {
		t.Fatal(err)
	}
	short := func(name string, f func(ctx context.Context) error) auditStrandStep {
		return auditStrandStep{name: name, requests: 1, start: func(ctx context.Context) error {
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
	behind := auditEcho(c, "behind the Tx", 3)
	behind.requests = 0
	// The short callers' ctx ends while writes are held: sleep past it.
	wait := auditStrandStep{name: "wait", start: func(context.Context) error { return nil }}
	steps := []auditStrandStep{auditEcho(c, "chained", 1), insert, echo, begin, behind}
	for range 6 {
		steps = append(steps, wait)
	}
	auditStrand(t, c, steps...)
	if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[0]" {
		// The INSERT was refused (its ctx ended before its turn, so it was
		// not sent again): it must not exist.
		t.Errorf("rows %s", got)
	}
}

// TestAuditStrandDetRawTxText: transaction control given as text by
// callers sharing the Conn, queued behind the stranding group: a raw
// "BEGIN" (refused, sent again: it opens the caller's block after the
// ROLLBACK), a "ROLLBACK" (which the aborted block accepts: it ends the
// stranded block itself) and a multi-statement text with its own BEGIN
// and COMMIT (refused as a whole, sent again, committed once).
func TestAuditStrandDetRawTxText(t *testing.T) {
	c := auditStrandConn(t)
	tbl, admin := auditStrandTable(t, "raw")
	multi := auditStrandStep{name: "BEGIN; INSERT; COMMIT", requests: 1, start: func(ctx context.Context) error {
		_, err := c.Exec(ctx, "BEGIN; INSERT INTO "+tbl+" VALUES (5); COMMIT")
		return err
	}}
	rollback := auditStrandStep{name: "raw ROLLBACK", requests: 1, start: func(ctx context.Context) error {
		_, err := c.Exec(ctx, "ROLLBACK")
		return err
	}}
	auditStrand(t, c, auditEcho(c, "chained", 1), multi, rollback, auditEcho(c, "after", 2))
	if got := fmt.Sprint(auditRows(t, admin, tbl)); got != "[5]" {
		t.Errorf("rows %s, want [5]", got)
	}
}

// TestBatchSendAgainFailedFreesPoolSlot: a Pool's batch whose statements,
// refused by a stranded block, could not be sent again (resendRefused:
// the first batch's reply read and handed on, the second's send failed)
// still gives its pool connection back on Close: a pool of one slot then
// serves the next statement, and Pool.Close, which waits for the
// statements in flight, returns.
func TestBatchSendAgainFailedFreesPoolSlot(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=1 pool_max_pipeline=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !poolClosesWithin(p, 5*time.Second) {
			t.Error("Pool.Close hangs: a slot was never given back")
		}
	}()
	var b Batch
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	br := p.SendBatch(ctx, &b)
	if br.pooled == nil || br.req == nil {
		t.Fatalf("the batch holds no pool connection (%v)", br.err)
	}
	// The state resendRefused leaves when the second send fails.
	if err := br.release(); err != nil {
		t.Fatal(err)
	}
	sendErr := errors.New("the batch sent again failed")
	br.err = sendErr
	if err := br.Close(); err != sendErr {
		t.Fatalf("Close: %v, want the send's error", err)
	}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(qctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("the next statement on a pool of one slot: %d, %v (the batch kept its slot)", n, err)
	}
}
