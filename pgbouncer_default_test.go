package pgline

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgline/pgline/pgtest"
)

// These tests run pgline through a real PgBouncer with the DSN's default
// settings (no statement_cache_mode): a client's statements must reach
// the server as that client wrote them, whichever server connection
// PgBouncer gives it.

// startTestPgBouncer starts a PgBouncer in front of srv with the given
// pool_mode and pgbouncer.ini settings ("key = value", see
// pgtest.Server.StartPgBouncerWith), stopped when the test ends. Without
// pgbouncer installed the test is skipped, except in CI (CI set), where
// that is a failure.
func startTestPgBouncer(t *testing.T, mode string, settings ...string) *pgtest.PgBouncer {
	t.Helper()
	if _, err := pgtest.PgBouncerPath(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatalf("%v (CI is set)", err)
	}
	b, err := srv.StartPgBouncerWith(mode, settings...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop() })
	return b
}

// replyTally counts, separately, replies that came back wrong (another
// statement's result, or another client's) and calls that failed, and
// keeps the first few of each for the report. It is safe for concurrent
// use.
type replyTally struct {
	wrong, errs atomic.Int64

	mu       sync.Mutex // protects examples
	examples []string
}

func (rt *replyTally) note(kind string, format string, args ...any) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.examples) < 12 {
		rt.examples = append(rt.examples, kind+": "+fmt.Sprintf(format, args...))
	}
}

// wrongf counts a reply that is not the caller's.
func (rt *replyTally) wrongf(format string, args ...any) {
	rt.wrong.Add(1)
	rt.note("wrong", format, args...)
}

// errf counts a failed call.
func (rt *replyTally) errf(format string, args ...any) {
	rt.errs.Add(1)
	rt.note("error", format, args...)
}

// check fails the test unless there was no wrong reply and no error.
func (rt *replyTally) check(t *testing.T) {
	t.Helper()
	if w, e := rt.wrong.Load(), rt.errs.Load(); w != 0 || e != 0 {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		t.Errorf("%d wrong replies and %d errors, want 0 and 0; first ones:", w, e)
		for _, ex := range rt.examples {
			t.Errorf("  %s", ex)
		}
	}
}

// TestPgBouncerTransactionModeOtherClientsStatements: through PgBouncer in
// transaction pooling mode with the default DSN, two clients prepare their
// own statements in transactions that overlap, so each prepares on its own
// server connection; afterwards PgBouncer hands either server connection
// to either client. Every run must still be the client's own statement:
// A's SELECT answers "from A", A's INSERT goes into t_a, and no run fails
// because the server connection does not know the client's statement.
func TestPgBouncerTransactionModeOtherClientsStatements(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	ctx := testCtx(t)
	direct := connect(t, srv.DSN())
	if _, err := direct.Exec(ctx, "DROP TABLE IF EXISTS t_a, t_b; "+
		"CREATE TABLE t_a(who text NOT NULL, n int NOT NULL); CREATE TABLE t_b(who text NOT NULL, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Exec("DROP TABLE IF EXISTS t_a, t_b") })

	type client struct {
		name, table, selectSQL, insertSQL string
		c                                 *Conn
		inserted, sum                     atomic.Int64 // the INSERTs run, and the sum of their n
	}
	a := &client{name: "A", table: "t_a",
		selectSQL: "SELECT 'from A'::text, $1::int",
		insertSQL: "INSERT INTO t_a(who, n) VALUES ($1::text, $2::int)"}
	bc := &client{name: "B", table: "t_b",
		selectSQL: "SELECT 'from B'::text, $1::int",
		insertSQL: "INSERT INTO t_b(who, n) VALUES ($1::text, $2::int)"}
	clients := []*client{a, bc}
	for _, cl := range clients {
		cl.c = connect(t, b.DSN())
	}

	var tally replyTally
	// run runs cl's SELECT and INSERT once, on q (the Conn or a Tx of it).
	run := func(cl *client, q interface {
		QueryRow(context.Context, string, ...any) *Row
		Exec(context.Context, string, ...any) (CommandTag, error)
	}, n int) {
		var s string
		var v int
		if err := q.QueryRow(ctx, cl.selectSQL, n).Scan(&s, &v); err != nil {
			tally.errf("%s: SELECT %d: %v", cl.name, n, err)
		} else if want := "from " + cl.name; s != want || v != n {
			tally.wrongf("%s: SELECT %d returned (%q, %d), want (%q, %d)", cl.name, n, s, v, want, n)
		}
		cl.inserted.Add(1)
		cl.sum.Add(int64(n))
		if tag, err := q.Exec(ctx, cl.insertSQL, cl.name, n); err != nil {
			tally.errf("%s: INSERT %d: %v", cl.name, n, err)
		} else if tag.RowsAffected() != 1 {
			tally.wrongf("%s: INSERT %d: tag %q", cl.name, n, tag)
		}
	}

	// Both transactions are open at once: PgBouncer gives each its own
	// server connection, where the client prepares its statements.
	txs := make([]*Tx, len(clients))
	for i, cl := range clients {
		tx, err := cl.c.Begin(ctx)
		if err != nil {
			t.Fatalf("%s: Begin: %v", cl.name, err)
		}
		txs[i] = tx
		run(cl, tx, 0)
	}
	for i, cl := range clients { // A commits, then B
		if err := txs[i].Commit(ctx); err != nil {
			t.Fatalf("%s: Commit: %v", cl.name, err)
		}
	}

	// Outside transactions: one statement at a time, alternating...
	n := 1
	for range 50 {
		for _, cl := range clients {
			run(cl, cl.c, n)
			n++
		}
	}
	// ... then pipelined from several goroutines per client.
	var wg sync.WaitGroup
	for _, cl := range clients {
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					run(cl, cl.c, 1000+g*100+i)
				}
			}()
		}
	}
	wg.Wait()
	tally.check(t)

	for _, cl := range clients {
		var total, others int
		var sum int64
		err := direct.QueryRow(ctx, "SELECT count(*)::int, (count(*) FILTER (WHERE who <> $1))::int, coalesce(sum(n), 0)::bigint FROM "+cl.table, cl.name).
			Scan(&total, &others, &sum)
		if err != nil {
			t.Fatal(err)
		}
		if others != 0 {
			t.Errorf("%s holds %d rows inserted by another client", cl.table, others)
		}
		if total != int(cl.inserted.Load()) || sum != cl.sum.Load() {
			t.Errorf("%s holds %d rows (sum of n %d), want %d (sum %d): %s's INSERTs went elsewhere or failed",
				cl.table, total, sum, cl.inserted.Load(), cl.sum.Load(), cl.name)
		}
	}
}

// mixedTarget is what TestPgBouncerMixedWorkload's goroutines run on: a
// Pool or a Conn.
type mixedTarget interface {
	QueryRow(ctx context.Context, sql string, args ...any) *Row
	Query(ctx context.Context, sql string, args ...any) (*Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
	SendBatch(ctx context.Context, b *Batch) *BatchResults
	Begin(ctx context.Context) (*Tx, error)
}

// TestPgBouncerMixedWorkload: through PgBouncer with the default DSN, in
// transaction and in session pooling mode, 100 goroutines share a Pool and
// two Conns and mix QueryRow, Query, Exec, Batch and transactions. Every
// reply must be the caller's own, no call may fail, and the table must
// hold exactly the rows inserted.
func TestPgBouncerMixedWorkload(t *testing.T) {
	for _, tc := range []struct {
		mode string
		// In session mode each client holds a server connection for its
		// whole session, and pgtest's PgBouncer has 3 per database and
		// user: a Pool of 1 and two Conns use them all (a 4th client would
		// wait for ever). In transaction mode the Pool takes 4.
		poolMax int
	}{
		{"transaction", 4},
		{"session", 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			testPgBouncerMixedWorkload(t, tc.mode, tc.poolMax)
		})
	}
}

func testPgBouncerMixedWorkload(t *testing.T, mode string, poolMax int) {
	b := startTestPgBouncer(t, mode)
	ctx := testCtx(t) // 30 s for everything: a hang fails the test
	table := "bouncer_mixed_" + mode
	if err := srv.Exec("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table + "(id int PRIMARY KEY, g int NOT NULL, note text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Exec("DROP TABLE IF EXISTS " + table) })
	p, err := NewPool(ctx, b.DSN(fmt.Sprintf("pool_max_conns=%d", poolMax)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	targets := []struct {
		name string
		q    mixedTarget
	}{
		{"pool", p},
		{"conn1", connect(t, b.DSN())},
		{"conn2", connect(t, b.DSN())},
	}

	insertSQL := "INSERT INTO " + table + "(id, g, note) VALUES ($1::int, $2::int, $3::text)"
	var tally replyTally
	var inserted, idSum atomic.Int64
	// insert counts an INSERT about to be run (the table must end with
	// exactly these rows, no call being allowed to fail).
	insert := func(id int) {
		inserted.Add(1)
		idSum.Add(int64(id))
	}

	const goroutines, iterations = 100, 20
	var wg sync.WaitGroup
	for g := range goroutines {
		tg := targets[g%len(targets)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := tg.q
			for i := range iterations {
				id := g*1000 + i // unique to the goroutine and iteration
				note := fmt.Sprintf("g%d-i%d", g, i)
				where := fmt.Sprintf("%s g%d i%d", tg.name, g, i)
				switch (g + i) % 5 {
				case 0: // QueryRow
					var v int
					var s string
					if err := q.QueryRow(ctx, "SELECT $1::int + 0, $2::text", id, note).Scan(&v, &s); err != nil {
						tally.errf("%s QueryRow: %v", where, err)
					} else if v != id || s != note {
						tally.wrongf("%s QueryRow: got (%d, %q), want (%d, %q)", where, v, s, id, note)
					}
				case 1: // Query with several rows
					n := 2 + (g+i)%4
					rows, err := q.Query(ctx, "SELECT g + $1::int FROM generate_series(1, $2::int) g", id, n)
					if err != nil {
						tally.errf("%s Query: %v", where, err)
						continue
					}
					k := 0
					for rows.Next() {
						k++
						var v int
						if err := rows.Scan(&v); err != nil {
							tally.errf("%s Query row %d: %v", where, k, err)
						} else if v != id+k {
							tally.wrongf("%s Query row %d: got %d, want %d", where, k, v, id+k)
						}
					}
					rows.Close()
					if err := rows.Err(); err != nil {
						tally.errf("%s Query: %v", where, err)
					} else if k != n {
						tally.wrongf("%s Query: %d rows, want %d", where, k, n)
					}
				case 2: // Exec of an INSERT
					insert(id)
					if tag, err := q.Exec(ctx, insertSQL, id, g, note); err != nil {
						tally.errf("%s Exec INSERT: %v", where, err)
					} else if tag.RowsAffected() != 1 {
						tally.wrongf("%s Exec INSERT: tag %q", where, tag)
					}
				case 3: // Batch
					batch := &Batch{}
					batch.Queue("SELECT $1::int * 2", id)
					batch.Queue(insertSQL, id, g, note)
					batch.Queue("SELECT $1::text || '!'", note)
					insert(id)
					br := q.SendBatch(ctx, batch)
					var v int
					if err := br.QueryRow().Scan(&v); err != nil {
						tally.errf("%s Batch SELECT int: %v", where, err)
					} else if v != 2*id {
						tally.wrongf("%s Batch SELECT int: got %d, want %d", where, v, 2*id)
					}
					if tag, err := br.Exec(); err != nil {
						tally.errf("%s Batch INSERT: %v", where, err)
					} else if tag.RowsAffected() != 1 {
						tally.wrongf("%s Batch INSERT: tag %q", where, tag)
					}
					var s string
					if err := br.QueryRow().Scan(&s); err != nil {
						tally.errf("%s Batch SELECT text: %v", where, err)
					} else if s != note+"!" {
						tally.wrongf("%s Batch SELECT text: got %q, want %q", where, s, note+"!")
					}
					if err := br.Close(); err != nil {
						tally.errf("%s Batch Close: %v", where, err)
					}
				case 4: // Tx: INSERT, then read it back inside the transaction
					tx, err := q.Begin(ctx)
					if err != nil {
						tally.errf("%s Begin: %v", where, err)
						continue
					}
					insert(id)
					if tag, err := tx.Exec(ctx, insertSQL, id, g, note); err != nil {
						tally.errf("%s Tx INSERT: %v", where, err)
					} else if tag.RowsAffected() != 1 {
						tally.wrongf("%s Tx INSERT: tag %q", where, tag)
					}
					var gg int
					var s string
					if err := tx.QueryRow(ctx, "SELECT g, note FROM "+table+" WHERE id = $1::int", id).Scan(&gg, &s); err != nil {
						tally.errf("%s Tx SELECT: %v", where, err)
					} else if gg != g || s != note {
						tally.wrongf("%s Tx SELECT: got (%d, %q), want (%d, %q)", where, gg, s, g, note)
					}
					if err := tx.Commit(ctx); err != nil {
						tally.errf("%s Commit: %v", where, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	tally.check(t)

	direct := connect(t, srv.DSN())
	var n, sum int64
	if err := direct.QueryRow(ctx, "SELECT count(*), coalesce(sum(id), 0)::bigint FROM "+table).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != inserted.Load() || sum != idSum.Load() {
		t.Errorf("%s holds %d rows (sum of ids %d), want %d (sum %d)", table, n, sum, inserted.Load(), idSum.Load())
	}
}
