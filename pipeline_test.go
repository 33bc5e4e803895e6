package pgline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPipelineConcurrentUse: many goroutines share one Conn; every reply
// reaches the goroutine that asked for it.
func TestPipelineConcurrentUse(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const workers, each = 32, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				want := w*1000 + i
				var got int
				var s string
				var err error
				switch i % 3 {
				case 0:
					err = c.QueryRow(ctx, "SELECT $1::int, $2::text", want, "w"+strconv.Itoa(w)).Scan(&got, &s)
				case 1:
					var rows *Rows
					rows, err = c.Query(ctx, "SELECT g, $2::text FROM generate_series($1::int, $1::int + 2) g", want, "w"+strconv.Itoa(w))
					if err == nil {
						n := 0
						for rows.Next() {
							var g int
							if err = rows.Scan(&g, &s); err != nil {
								break
							}
							if n == 0 {
								got = g
							}
							n++
						}
						rows.Close()
						if err == nil {
							err = rows.Err()
						}
						if err == nil && n != 3 {
							err = fmt.Errorf("%d rows", n)
						}
					}
				case 2:
					var tag CommandTag
					tag, err = c.Exec(ctx, "SELECT generate_series(1, $1::int)", want%7+1)
					got, s = want, "w"+strconv.Itoa(w)
					if err == nil && tag.RowsAffected() != int64(want%7+1) {
						err = fmt.Errorf("tag %q", tag)
					}
				}
				if err == nil && (got != want || s != "w"+strconv.Itoa(w)) {
					err = fmt.Errorf("worker %d asked %d, got %d %q", w, want, got, s)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPipelineErrorIsolation: an error in one pipelined statement does not
// abort the others (each is its own transaction, and those the server
// skipped after it are sent again): ok / error / ok.
func TestPipelineErrorIsolation(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const n = 300
	var wg sync.WaitGroup
	results := make([]error, n)
	values := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%3 == 1 {
				results[i] = c.QueryRow(ctx, "SELECT 1 / ($1::int - $1::int)", i).Scan(&values[i])
				return
			}
			results[i] = c.QueryRow(ctx, "SELECT $1::int * 2", i).Scan(&values[i])
		}()
	}
	wg.Wait()
	for i, err := range results {
		if i%3 == 1 {
			var pgErr *PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
				t.Fatalf("statement %d: got %v, want division_by_zero", i, err)
			}
			continue
		}
		if err != nil || values[i] != 2*i {
			t.Fatalf("statement %d: %d, %v", i, values[i], err)
		}
	}
}

// TestPipelinePrepareOnce: many goroutines use one new SQL text at once;
// its Parse is sent once (no 42P05 "already exists"), and when that Parse
// fails every user gets the original error, and a later use prepares
// again.
func TestPipelinePrepareOnce(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	run := func(sql string) []error {
		var wg sync.WaitGroup
		errs := make([]error, 50)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var v int
				errs[i] = c.QueryRow(ctx, sql, i).Scan(&v)
				if errs[i] == nil && v != i+1 {
					errs[i] = fmt.Errorf("got %d, want %d", v, i+1)
				}
			}()
		}
		wg.Wait()
		return errs
	}
	for _, err := range run("SELECT $1::int + 1 AS prepare_once") {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*)::int FROM pg_prepared_statements WHERE statement LIKE '%prepare_once'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d server-side statements for one SQL text, %v", n, err)
	}

	sql := "SELECT x + $1::int FROM pipeline_later"
	for i, err := range run(sql) {
		var pgErr *PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
			t.Fatalf("use %d: got %v, want the Parse's undefined_table", i, err)
		}
	}
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE pipeline_later AS SELECT 1 AS x"); err != nil {
		t.Fatal(err)
	}
	for _, err := range run(sql) {
		if err != nil {
			t.Fatalf("after the table exists: %v", err)
		}
	}
}

// TestPipelineCancelWaiting: a request whose ctx ends while it waits
// behind a slow one returns at once; the slow one and later ones are not
// affected.
func TestPipelineCancelWaiting(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	// Prepared, each call is one request: the slow one is queued first.
	for _, sql := range []string{"SELECT pg_sleep(0.5)::text || $1::text", "SELECT $1::int"} {
		if _, err := c.Prepare(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	slow := make(chan error, 1)
	go func() {
		var s string
		slow <- c.QueryRow(ctx, "SELECT pg_sleep(0.5)::text || $1::text", "done").Scan(&s)
	}()
	waitQueued(t, c, 1)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	var v int
	err := c.QueryRow(short, "SELECT $1::int", 7).Scan(&v)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 300*time.Millisecond {
		t.Fatalf("waiting request took %v to give up", took)
	}
	if err := <-slow; err != nil {
		t.Fatalf("slow statement: %v", err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int", 8).Scan(&v); err != nil || v != 8 {
		t.Fatalf("after: %d %v", v, err)
	}
}

// TestPipelineCancelStress: goroutines with tight deadlines share a Conn
// with goroutines without; a CancelRequest aimed at one request must never
// fail another (a late cancel is retried), and every answer is right.
func TestPipelineCancelStress(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < 40; i++ {
				if w%2 == 0 {
					short, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
					var s string
					c.QueryRow(short, "SELECT pg_sleep($1)::text", rng.Float64()*0.003).Scan(&s)
					cancel()
					continue
				}
				var v int
				if err := c.QueryRow(ctx, "SELECT $1::int FROM (SELECT pg_sleep(0.001)) s", i).Scan(&v); err != nil || v != i {
					errs <- fmt.Errorf("worker %d query %d: %d, %v", w, i, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPipelineRowsHoldHead: open Rows hold the reader; a statement of
// another goroutine waits until they are closed, and closing early
// discards the rest of the reply.
func TestPipelineRowsHoldHead(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	rows, err := c.Query(ctx, "SELECT g FROM generate_series(1, 100000) g")
	if err != nil {
		t.Fatal(err)
	}
	other := make(chan int, 1)
	go func() {
		var v int
		c.QueryRow(ctx, "SELECT $1::int", 5).Scan(&v)
		other <- v
	}()
	rows.Next()
	select {
	case <-other:
		t.Fatal("a statement ran while Rows held the connection")
	case <-time.After(100 * time.Millisecond):
	}
	rows.Close()
	select {
	case v := <-other:
		if v != 5 {
			t.Fatalf("got %d", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("statement still waiting after Rows.Close")
	}
}

// TestTxExclusive: statements of other goroutines never run inside a
// transaction; they wait for its end.
func TestTxExclusive(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE txe(x int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO txe VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	type result struct {
		inTx bool
		at   time.Time
		err  error
	}
	outside := make(chan result, 1)
	go func() {
		var r result
		// Inside the transaction, which inserted, a transaction ID is
		// assigned; a statement in its own implicit transaction has none.
		r.err = c.QueryRow(ctx, "SELECT pg_current_xact_id_if_assigned() IS NOT NULL").Scan(&r.inTx)
		r.at = time.Now()
		outside <- r
	}()
	time.Sleep(100 * time.Millisecond)
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*)::int FROM txe").Scan(&n); err != nil || n != 1 {
		t.Fatalf("in tx: %d %v", n, err)
	}
	committed := time.Now()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-outside
	if r.err != nil || r.inTx {
		t.Fatalf("outside statement: inTx=%v err=%v", r.inTx, r.err)
	}
	if r.at.Before(committed) {
		t.Fatal("outside statement finished before the transaction ended")
	}
	if err := tx.Rollback(ctx); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("Rollback after Commit: %v", err)
	}
}

func TestTxRollbackAndSavepoints(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE txr(x int)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.BeginTx(ctx, TxOptions{IsoLevel: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	var iso string
	if err := tx.QueryRow(ctx, "SELECT current_setting('transaction_isolation')").Scan(&iso); err != nil || iso != "serializable" {
		t.Fatalf("isolation %q %v", iso, err)
	}
	tx.Exec(ctx, "INSERT INTO txr VALUES ($1)", 1)
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp.Exec(ctx, "INSERT INTO txr VALUES ($1)", 2)
	if err := sp.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	sp2, _ := tx.Begin(ctx)
	sp2.Exec(ctx, "INSERT INTO txr VALUES ($1)", 3)
	if err := sp2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := c.QueryRow(ctx, "SELECT coalesce(sum(x), 0)::int FROM txr").Scan(&sum); err != nil || sum != 4 {
		t.Fatalf("sum %d %v (want 1+3)", sum, err)
	}

	tx, _ = c.Begin(ctx)
	tx.Exec(ctx, "INSERT INTO txr VALUES ($1)", 100)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// A failed transaction's Commit reports the rollback.
	tx, _ = c.Begin(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("no error")
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTxRolledBack) {
		t.Fatalf("Commit of a failed tx: %v", err)
	}
	if err := c.QueryRow(ctx, "SELECT coalesce(sum(x), 0)::int FROM txr").Scan(&sum); err != nil || sum != 4 {
		t.Fatalf("sum %d %v after rollbacks", sum, err)
	}
	if st := c.TxStatus(); st != 'I' {
		t.Fatalf("tx status %q", st)
	}
}

// TestCopyFromStdinViaExec: COPY FROM STDIN through Exec is refused
// cleanly (CopyFail) and the connection, shared by other goroutines, goes
// on.
func TestCopyFromStdinViaExec(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cp(x int)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v int
			if err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil || v != i {
				t.Errorf("neighbour %d: %d %v", i, v, err)
			}
		}()
	}
	_, err := c.Exec(ctx, "COPY cp FROM STDIN")
	var pgErr *PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("COPY FROM STDIN via Exec: %v", err)
	}
	wg.Wait()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCopyFromStdinViaTxExec: in a transaction, a COPY FROM STDIN given
// to Exec runs alone too: the transaction's other goroutines never
// pipeline statements behind it (which the server would take as the
// COPY's data), so each gets its own answer, or 25P02 once the refused
// COPY has aborted the transaction; none hangs.
func TestCopyFromStdinViaTxExec(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cptx(x int)"); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					want := round*1000 + g*10 + i
					var v int
					err := tx.QueryRow(ctx, "SELECT $1::int", want).Scan(&v)
					if err == nil && v != want {
						t.Errorf("got %d, want %d", v, want)
					} else if err != nil && pgCode(err) != "25P02" {
						t.Errorf("neighbour: %v", err)
					}
				}
			}()
		}
		sql := "COPY cptx FROM STDIN"
		if round%2 == 1 {
			sql = "INSERT INTO cptx VALUES (1); COPY cptx FROM STDIN" // simple protocol
		}
		if _, err := tx.Exec(ctx, sql); pgCode(err) != "57014" {
			t.Fatalf("COPY FROM STDIN via tx.Exec: %v", err)
		}
		wg.Wait()
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{}
	b.Queue("SELECT 1")
	b.Queue("COPY cptx FROM STDIN")
	br := tx.SendBatch(ctx, b)
	if _, err := br.Exec(); err == nil || !strings.Contains(err.Error(), "batch") {
		t.Fatalf("COPY FROM STDIN in a transaction's batch: %v", err)
	}
	br.Close()
	var v int
	if err := tx.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after the batch: %d, %v", v, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// pgCode returns the SQLSTATE of the *PgError in err's chain, or "".
func pgCode(err error) string {
	var pgErr *PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
