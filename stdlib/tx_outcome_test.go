package stdlib_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline"
)

func TestTxSQLTxOptions(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 2)
	for _, c := range []struct {
		level sql.IsolationLevel
		want  string
	}{
		{sql.LevelDefault, "read committed"},
		{sql.LevelReadCommitted, "read committed"},
		{sql.LevelRepeatableRead, "repeatable read"},
		{sql.LevelSerializable, "serializable"},
	} {
		for _, ro := range []bool{false, true} {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: c.level, ReadOnly: ro})
			if err != nil {
				t.Fatal(err)
			}
			var iso, rdo string
			if err := tx.QueryRowContext(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')").Scan(&iso, &rdo); err != nil {
				t.Fatal(err)
			}
			if iso != c.want || (rdo == "on") != ro {
				t.Errorf("level %v ro %v: got %s %s", c.level, ro, iso, rdo)
			}
			tx.Rollback()
		}
	}
	if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelLinearizable}); err == nil {
		t.Error("linearizable accepted")
	}
}

func TestTxSQLCommitAfterFailure(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	tbl := testTable(t, db, "(id int, CONSTRAINT u UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
	// a failed statement, then Commit
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO "+tbl+" VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT 1/0"); err == nil {
		t.Fatal("no error")
	}
	if err := tx.Commit(); err == nil {
		t.Error("Commit after a failed statement returned nil")
	} else if errors.Is(err, driver.ErrBadConn) {
		t.Errorf("Commit error is ErrBadConn: %v", err)
	}
	// deferred violation at commit
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO " + tbl + " VALUES (5), (5)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Error("Commit with a deferred violation returned nil")
	}
	if n := rowCount(t, db, tbl); n != 0 {
		t.Errorf("%d rows", n)
	}
	// the connection is back outside any transaction
	var inTx bool
	if err := db.QueryRow("SELECT txid_current_if_assigned() IS NOT NULL").Scan(&inTx); err != nil {
		t.Fatal(err)
	}
	if inTx {
		t.Error("next statement ran inside a transaction")
	}
}

// A backend killed between the statements of a database/sql Tx: the next
// statement of the Tx must fail, never run on another connection, and the
// Tx must not commit.
func TestTxSQLKilledMidTx(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 3)
	tbl := testTable(t, db, "(id int)")
	mon := openDB(t, 1)
	for round := 0; round < 4; round++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := tx.QueryRow("SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO "+tbl+" VALUES ($1)", 1); err != nil {
			t.Fatal(err)
		}
		mon.Exec("SELECT pg_terminate_backend($1)", pid)
		time.Sleep(50 * time.Millisecond)
		var err2 error
		var pid2 int
		switch round {
		case 0:
			_, err2 = tx.Exec("INSERT INTO "+tbl+" VALUES ($1)", 2)
		case 1:
			_, err2 = tx.Exec("INSERT INTO " + tbl + " VALUES (2)")
		case 2:
			err2 = tx.QueryRow("SELECT pg_backend_pid()").Scan(&pid2)
		case 3:
			err2 = nil // straight to Commit
		}
		if round < 3 && err2 == nil {
			t.Errorf("round %d: statement after the kill succeeded (pid2 %d, pid %d)", round, pid2, pid)
		}
		cerr := tx.Commit()
		if cerr == nil {
			t.Errorf("round %d: Commit succeeded on a killed backend", round)
		}
		if n := rowCount(t, db, tbl); n != 0 {
			t.Fatalf("round %d: %d rows", round, n)
		}
	}
}

// database/sql retries statements failing with driver.ErrBadConn. Under
// repeated pg_terminate_backend no statement may run twice, no Commit may
// return nil without committing, nor ErrBadConn after committing.
func TestTxSQLKillStorm(t *testing.T) {
	storm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	app := "sql_commit_storm"
	db := openDB(t, 4, "application_name="+app)
	tbl := testTable(t, db, "(id int, k int)")
	mon := openDB(t, 1)
	var next atomic.Int64
	type res struct {
		id   int64
		kind int
		err  error
	}
	results := make(chan res, 100000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := next.Add(1)
				kind := int(id % 3)
				var err error
				switch kind {
				case 0:
					_, err = db.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES ($1, 0)", id)
				case 1:
					_, err = db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 0)", tbl, id))
				case 2:
					var tx *sql.Tx
					tx, err = db.BeginTx(ctx, nil)
					if err == nil {
						_, err = tx.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES ($1, 1)", id)
						if err == nil {
							_, err = tx.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES ($1, 2)", id)
						}
						if err == nil {
							err = tx.Commit()
						} else {
							tx.Rollback()
						}
					}
				}
				results <- res{id, kind, err}
			}
		}()
	}
	end := time.Now().Add(6 * time.Second)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(5+rand.Intn(20)) * time.Millisecond)
		mon.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name=$1", app)
	}
	close(stop)
	wg.Wait()
	close(results)
	counts := map[int64]int{}
	rows, err := mon.Query("SELECT id, count(*) FROM " + tbl + " GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var n int
		rows.Scan(&id, &n)
		counts[id] = n
	}
	rows.Close()
	var ok, bad, other, fails int
	for r := range results {
		want := 1
		if r.kind == 2 {
			want = 2
		}
		got := counts[r.id]
		switch {
		case got > want:
			t.Errorf("id %d kind %d: %d rows (ran twice), err %v", r.id, r.kind, got, r.err)
			fails++
		case r.err == nil:
			ok++
			if got != want {
				t.Errorf("id %d kind %d: success, %d rows", r.id, r.kind, got)
				fails++
			}
		case errors.Is(r.err, driver.ErrBadConn) || pgline.SafeToRetry(r.err):
			bad++
			if got != 0 {
				t.Errorf("id %d kind %d: ErrBadConn/SafeToRetry %v but %d rows", r.id, r.kind, r.err, got)
				fails++
			}
		default:
			other++
		}
		if fails > 20 {
			break
		}
	}
	t.Logf("ok %d, badconn %d, other %d", ok, bad, other)
}

// database/sql cancels a Tx whose ctx ends: the connection must come back
// outside the transaction, and nothing of the Tx committed.
func TestTxSQLTxCtxCanceled(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	tbl := testTable(t, db, "(id int)")
	for round := 0; round < 5; round++ {
		tctx, cancel := context.WithCancel(ctx)
		tx, err := db.BeginTx(tctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(tctx, "INSERT INTO "+tbl+" VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := tx.ExecContext(tctx, "INSERT INTO "+tbl+" SELECT 2 FROM pg_sleep(0.3)")
			done <- err
		}()
		time.Sleep(time.Duration(round*30) * time.Millisecond)
		cancel()
		<-done
		cerr := tx.Commit()
		if cerr == nil {
			t.Errorf("round %d: Commit nil after ctx cancel", round)
		}
		// the one connection is reused
		if _, err := db.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES (100)"); err != nil {
			t.Fatal(err)
		}
		var n1, n100 int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE id<>100), count(*) FILTER (WHERE id=100) FROM "+tbl).Scan(&n1, &n100); err != nil {
			t.Fatal(err)
		}
		if n1 != 0 || n100 != 1 {
			t.Fatalf("round %d: tx rows %d, outside rows %d", round, n1, n100)
		}
		mon := openDB(t, 1)
		var m int
		mon.QueryRow("SELECT count(*) FROM " + tbl).Scan(&m)
		if m != 1 {
			t.Fatalf("round %d: other session sees %d rows", round, m)
		}
		db.Exec("DELETE FROM " + tbl)
	}
}

// CREATE INDEX CONCURRENTLY killed after its first transaction committed:
// database/sql must not be told ErrBadConn (it would run it again).
func TestTxSQLCreateIndexConcurrentlyKilled(t *testing.T) {
	ctx := testCtx(t)
	app := "sql_commit_cic"
	db := openDB(t, 2, "application_name="+app)
	mon := openDB(t, 2)
	tbl := testTable(t, mon, "(id int)")
	idx := tbl + "_idx"
	htx, err := mon.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer htx.Rollback()
	if _, err := htx.Exec("INSERT INTO " + tbl + " VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+idx+" ON "+tbl+" (id)")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		mon.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name=$1 AND wait_event_type='Lock'", app).Scan(&n)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("CIC never waited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mon.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name=$1 AND wait_event_type='Lock'", app)
	var cerr error
	select {
	case cerr = <-done:
	case <-time.After(3 * time.Second):
		htx.Rollback()
		cerr = <-done
	}
	htx.Rollback()
	var valid sql.NullBool
	mon.QueryRow("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)", idx).Scan(&valid)
	t.Logf("err %v; index valid %v", cerr, valid)
	if !valid.Valid {
		t.Fatal("no index left: scenario did not happen")
	}
	if cerr == nil && !valid.Bool {
		t.Error("ExecContext returned success but the index is INVALID: database/sql ran it again after an ErrBadConn")
	}
	if errors.Is(cerr, driver.ErrBadConn) {
		t.Errorf("ErrBadConn although the statement committed its first transaction: %v", cerr)
	}
}
