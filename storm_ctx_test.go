package pgline

// Storms of operations of every kind on a Conn or a Pool under ctxs that
// end at random moments: every outcome is the caller's own value or its
// own ctx's error, a 57014 with the ctx alive is ErrCanceledByOther,
// committed effects happen once, and the connection keeps working.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// stormDB is what a storm runs on: a *Conn or a *Pool.
type stormDB interface {
	Query(ctx context.Context, sql string, args ...any) (*Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) *Row
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
	SendBatch(ctx context.Context, b *Batch) *BatchResults
	Begin(ctx context.Context) (*Tx, error)
	CopyFrom(ctx context.Context, table Identifier, columns []string, src CopyFromSource) (int64, error)
}

// stormStats gathers a storm's counts, the broken rules, and what each
// insert's caller was told about it.
type stormStats struct {
	mu       sync.Mutex
	ops      map[string]int
	problems []string
	okIDs    map[int]string // ids whose insert the caller was told succeeded
	noIDs    map[int]string // ids whose insert the caller was told did not persist (rolled back)
}

// bad notes a broken rule.
func (st *stormStats) bad(format string, args ...any) {
	st.mu.Lock()
	st.problems = append(st.problems, fmt.Sprintf(format, args...))
	st.mu.Unlock()
}

// count counts one operation of kind k.
func (st *stormStats) count(k string) {
	st.mu.Lock()
	st.ops[k]++
	st.mu.Unlock()
}

// checkErr applies the rules to an error returned just now by an op of ctx.
func (st *stormStats) checkErr(op string, ctx context.Context, err error, ddl time.Time, hasDdl bool) {
	st.checkErrAt(op, ctx, err, ddl, hasDdl, time.Now())
}

// checkErrAt applies the rules to an error an op of ctx returned at
// returned.
func (st *stormStats) checkErrAt(op string, ctx context.Context, err error, ddl time.Time, hasDdl bool, returned time.Time) {
	if hasDdl && returned.After(ddl.Add(500*time.Millisecond)) { // -race on a small, loaded machine: stalls of 300 ms seen
		st.bad("%s: returned %v after its deadline (err=%v)", op, returned.Sub(ddl), err)
	}
	if err == nil {
		return
	}
	var pgErr *PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" {
		if ctx.Err() == nil && !errors.Is(err, ErrCanceledByOther) {
			st.bad("%s: 57014 with its ctx alive, not ErrCanceledByOther: %v", op, err)
		}
		if ctx.Err() == nil && errors.Is(err, ErrCanceledByOther) {
			st.count("canceledByOther")
		}
	}
	if ctx.Err() != nil {
		if !errors.Is(err, ctx.Err()) && !errors.As(err, &pgErr) && !errors.Is(err, ErrTxClosed) && !errors.Is(err, ErrTxRolledBack) {
			st.bad("%s: ctx ended but error does not wrap it: %v", op, err)
		}
		return
	}
	// ctx alive
	if errors.Is(err, ErrClosed) || strings.Contains(err.Error(), "timeout") {
		st.bad("%s: ctx alive, connection-level error: %v", op, err)
	} else if !errors.Is(err, ErrCanceledByOther) && !errors.Is(err, ErrTxRolledBack) {
		st.bad("%s: ctx alive, unexpected error: %v", op, err)
	}
}

// stormCtx returns a ctx that never ends (10 s), is canceled at a random
// moment, or times out at a random moment, with its deadline when it has
// one.
func stormCtx(r *rand.Rand) (context.Context, context.CancelFunc, time.Time, bool) {
	switch r.IntN(4) {
	case 0:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		return ctx, cancel, time.Time{}, false
	case 1:
		ctx, cancel := context.WithCancel(context.Background())
		d := time.Duration(r.IntN(40)) * time.Millisecond
		t := time.AfterFunc(d, cancel)
		return ctx, func() { t.Stop(); cancel() }, time.Now().Add(d), true
	default:
		d := time.Duration(r.IntN(60)) * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), d)
		return ctx, cancel, time.Now().Add(d), true
	}
}

// runStorm runs opsPer operations of the given kinds from each of workers
// goroutines on db (inserting into table), under stormCtx ctxs, checks
// each outcome (checkErr, own values, row counts) and fails the test if
// the storm hangs for 120 s.
func runStorm(t *testing.T, db stormDB, workers, opsPer int, table string, kinds []string) *stormStats {
	st := &stormStats{ops: map[string]int{}, okIDs: map[int]string{}, noIDs: map[int]string{}}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for op := 0; op < opsPer; op++ {
				id := w*100000 + op*10
				kind := kinds[r.IntN(len(kinds))]
				ctx, cancel, ddl, hasDdl := stormCtx(r)
				sleep := fmt.Sprintf("%.3f", float64(r.IntN(30))/1000)
				name := fmt.Sprintf("w%d op%d %s", w, op, kind)
				st.count(kind)
				switch kind {
				case "QueryRow":
					var got int
					err := db.QueryRow(ctx, "SELECT $1::int, pg_sleep($2::float8)", id, sleep).Scan(&got, nil)
					if err == nil && got != id {
						st.bad("%s: got %d want %d", name, got, id)
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "Query":
					n := 1 + r.IntN(300)
					rows, err := db.Query(ctx, "SELECT $1::int, g FROM generate_series(1, $2::int) g, pg_sleep($3::float8)", id, n, sleep)
					if err == nil {
						k := r.IntN(n + 2)
						i := 0
						for i < k && rows.Next() {
							i++
							var a, g int
							if err := rows.Scan(&a, &g); err != nil {
								st.bad("%s: scan: %v", name, err)
								break
							}
							if a != id || g != i {
								st.bad("%s: row %d got (%d,%d) want (%d,%d)", name, i, a, g, id, i)
							}
							if r.IntN(50) == 0 {
								time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
							}
						}
						if r.IntN(3) == 0 {
							cancel()
						}
						rows.Close()
						err = rows.Err()
						if ctx.Err() == nil && err == nil && k > n && i != n {
							st.bad("%s: got %d rows want %d", name, i, n)
						}
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "ExecArgs":
					_, err := db.Exec(ctx, "INSERT INTO "+table+"(id) SELECT $1::int FROM pg_sleep($2::float8)", id, sleep)
					if err == nil {
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "ExecSimple":
					_, err := db.Exec(ctx, fmt.Sprintf("INSERT INTO %s(id) SELECT %d FROM pg_sleep(%s)", table, id, sleep))
					if err == nil {
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					st.checkErr(name, ctx, err, ddl, hasDdl)
				case "Batch", "BatchAll":
					b := &Batch{AllOrNothing: kind == "BatchAll"}
					for k := 0; k < 3; k++ {
						b.Queue("SELECT $1::int, pg_sleep($2::float8)", id+k, sleep)
					}
					br := db.SendBatch(ctx, b)
					var firstErr error
					for k := 0; k < 3; k++ {
						if r.IntN(8) == 0 {
							cancel()
						}
						var got int
						err := br.QueryRow().Scan(&got, nil)
						if err == nil && got != id+k {
							st.bad("%s: stmt %d got %d want %d", name, k, got, id+k)
						}
						if err != nil && firstErr == nil {
							firstErr = err
						}
					}
					cerr := br.Close()
					if firstErr == nil {
						firstErr = cerr
					}
					st.checkErr(name, ctx, firstErr, ddl, hasDdl)
				case "Tx":
					tx, err := db.Begin(ctx)
					if err != nil {
						st.checkErr(name+" begin", ctx, err, ddl, hasDdl)
						break
					}
					_, err1 := tx.Exec(ctx, "INSERT INTO "+table+"(id) SELECT $1::int FROM pg_sleep($2::float8)", id, sleep)
					at1 := time.Now()
					var got int
					err2 := tx.QueryRow(ctx, "SELECT $1::int", id+1).Scan(&got)
					at2 := time.Now()
					if err2 == nil && got != id+1 {
						st.bad("%s: tx QueryRow got %d want %d", name, got, id+1)
					}
					cctx := ctx
					if r.IntN(2) == 0 {
						cctx = context.Background()
					}
					var cerr error
					if r.IntN(4) == 0 {
						cerr = tx.Rollback(cctx)
						st.mu.Lock()
						st.noIDs[id] = name + " rollback"
						st.mu.Unlock()
					} else {
						cerr = tx.Commit(cctx)
						st.mu.Lock()
						switch {
						case cerr == nil && err1 != nil && session.SafeToRetry(err1):
							// The INSERT never reached the server, and its
							// error said so: committing the rest is right.
							st.noIDs[id] = name + " commit without the unsent INSERT"
						case cerr == nil:
							st.okIDs[id] = name + " commit"
							if err1 != nil {
								st.problems = append(st.problems, fmt.Sprintf("%s: Commit succeeded although the INSERT returned %v", name, err1))
							}
						case errors.Is(cerr, ErrTxRolledBack):
							st.noIDs[id] = name + " rolledback"
						}
						st.mu.Unlock()
					}
					// Checked as of their return, not after the Commit or
					// Rollback (without deadline half the time).
					if err1 != nil {
						st.checkErrAt(name+" exec", ctx, err1, ddl, hasDdl, at1)
					}
					if err2 != nil {
						st.checkErrAt(name+" queryrow", ctx, err2, ddl, hasDdl, at2)
					}
					if cerr != nil && !errors.Is(cerr, ErrTxRolledBack) {
						st.checkErr(name+" end", cctx, cerr, ddl, hasDdl && cctx == ctx)
					}
				case "Copy":
					rowsSrc := [][]any{{id}, {id + 1}, {id + 2}}
					n, err := db.CopyFrom(ctx, Identifier{table}, []string{"id"}, CopyFromRows(rowsSrc))
					if err == nil {
						if n != 3 {
							st.bad("%s: copied %d", name, n)
						}
						st.mu.Lock()
						st.okIDs[id] = name
						st.mu.Unlock()
					}
					// COPY may overrun by design (cancel_timeout); checked without deadline
					st.checkErr(name, ctx, err, ddl, false)
				}
				cancel()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		buf := make([]byte, 4<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("storm hung:\n%s", buf[:n])
	}
	return st
}

// verify checks the table against what the callers were told (an insert
// reported committed is there once, one rolled back is not) and reports
// the problems.
func (st *stormStats) verify(t *testing.T, db stormDB, table string) {
	ctx := testCtx(t)
	counts := map[int]int{}
	rows, err := db.Query(ctx, "SELECT id, count(*)::int FROM "+table+" GROUP BY id")
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	for rows.Next() {
		var id, n int
		rows.Scan(&id, &n)
		counts[id] = n
	}
	if rows.Err() != nil {
		t.Fatalf("verify: %v", rows.Err())
	}
	for id, name := range st.okIDs {
		if counts[id] != 1 {
			st.bad("%s: told success, id %d present %d times", name, id, counts[id])
		}
	}
	for id, name := range st.noIDs {
		if counts[id] != 0 {
			st.bad("%s: told rolled back, id %d present %d times", name, id, counts[id])
		}
	}
	for id, n := range counts {
		if n > 1 {
			st.bad("id %d present %d times", id, n)
		}
	}
	t.Logf("ops: %v", st.ops)
	for i, p := range st.problems {
		if i >= 40 {
			t.Errorf("... %d more", len(st.problems)-40)
			break
		}
		t.Errorf("%s", p)
	}
}

var allKinds = []string{"QueryRow", "Query", "ExecArgs", "ExecSimple", "Batch", "BatchAll", "Tx", "Copy"}

// stormKinds is every kind, CopyFrom included (see internal/session's
// TestDrainDescribeReplyOfCopyFrom).
var stormKinds = allKinds

// TestStormConn: 12 workers on one Conn run every kind of operation
// (stormKinds) under ctxs that never end, are canceled or end at a random
// moment; runStorm's rules hold for every outcome, the Conn works
// afterwards, and every insert reported committed is in the table once,
// every one reported rolled back is not.
func TestStormConn(t *testing.T) {
	storm(t)
	c := connect(t, srv.DSN())
	effectsTable(t, c, "storm_c")
	st := runStorm(t, c, 12, 60, "storm_c", stormKinds)
	// the connection must still work
	var one int
	err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one)
	t.Logf("after storm: closed=%v err=%v", c.IsClosed(), err)
	if err != nil {
		c = connect(t, srv.DSN())
	}
	st.verify(t, c, "storm_c")
}

// TestStormKinds: the storm one kind of operation at a time, each on a
// fresh Conn.
func TestStormKinds(t *testing.T) {
	storm(t)
	for _, k := range allKinds {
		t.Run(k, func(t *testing.T) {
			c := connect(t, srv.DSN())
			effectsTable(t, c, "storm_k")
			ops := 20
			if strings.HasPrefix(k, "Batch") {
				// Three statements of up to 30 ms each per batch, on one
				// connection: 10 batches per worker take as long as 20
				// operations of the other kinds.
				ops = 10
			}
			st := runStorm(t, c, 12, ops, "storm_k", []string{k})
			var one int
			err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one)
			t.Logf("after storm: closed=%v err=%v problems=%d", c.IsClosed(), err, len(st.problems))
			if len(st.problems) > 0 {
				t.Errorf("first: %s", st.problems[0])
			}
		})
	}
}

// TestStormPool: the storm through Pools of 2 and 4 connections.
func TestStormPool(t *testing.T) {
	storm(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, err := NewPool(testCtx(t), srv.DSN(fmt.Sprintf("pool_max_conns=%d", n)))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			table := fmt.Sprintf("storm_p%d", n)
			c := connect(t, srv.DSN())
			effectsTable(t, c, table)
			st := runStorm(t, p, 16, 50, table, stormKinds)
			st.verify(t, c, table)
		})
	}
}

// TestStormMixedOps: many goroutines on one Conn mix QueryRow,
// Query (rows read slowly), Exec, Batch and CopyTo with ctxs that are
// already done, end mid-reply, or never end. Every outcome is the
// caller's own value or its own ctx's error, a ctx's error comes at its
// deadline, and the connection keeps working.
func TestStormMixedOps(t *testing.T) {
	storm(t)
	dsns := map[string]string{"tcp": srv.DSN(), "tls": srv.DSN("sslmode=require"), "unix": srv.SocketDSN()}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			c := connect(t, dsn+" cancel_grace=20ms")
			defer deadlockWatchdog(t, c, 40*time.Second)()
			bg := context.Background()
			const late = time.Second // -race on a small machine
			var wg sync.WaitGroup
			for g := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					for i := range 30 {
						id := g*10000 + i
						ctx, cancel := bg, context.CancelFunc(func() {})
						var limit time.Duration
						switch rng.IntN(4) {
						case 0: // never ends
						case 1: // already ended
							ctx, cancel = context.WithCancel(bg)
							cancel()
						default: // ends mid-flight
							limit = time.Duration(rng.IntN(8000)) * time.Microsecond
							ctx, cancel = context.WithTimeout(bg, limit)
						}
						start := time.Now()
						kind, err := mixedOp(ctx, c, rng.IntN(6), id, rng)
						cancel()
						if err = ownOutcomeErr(ctx, err); err != nil {
							t.Errorf("goroutine %d, op %d (%s): %v", g, i, kind, err)
							return
						}
						if limit > 0 && ctx.Err() != nil && time.Since(start) > limit+late {
							t.Errorf("goroutine %d, op %d (%s): returned %v after a %v deadline", g, i, kind, time.Since(start), limit)
						}
					}
				}()
			}
			wg.Wait()
			var v int
			if err := c.QueryRow(bg, "SELECT $1::int", 777).Scan(&v); err != nil || v != 777 {
				t.Fatalf("after: %d, %v", v, err)
			}
		})
	}
}

// mixedOp runs one operation of kind k for id and checks that what
// it returned is id's.
func mixedOp(ctx context.Context, c *Conn, k, id int, rng *rand.Rand) (string, error) {
	switch k {
	case 0:
		var v int
		err := c.QueryRow(ctx, "SELECT $1::int", id).Scan(&v)
		if err == nil && v != id {
			err = fmt.Errorf("got %d, want %d", v, id)
		}
		return "QueryRow", err
	case 1:
		var v int
		err := c.QueryRow(ctx, "SELECT $1::int FROM pg_sleep($2)", id, float64(rng.IntN(3))/1000).Scan(&v)
		if err == nil && v != id {
			err = fmt.Errorf("got %d, want %d", v, id)
		}
		return "QueryRow sleep", err
	case 2:
		rows, err := c.Query(ctx, "SELECT $1::int, g, repeat('x', 200 + g % 7) FROM generate_series(1, 600) g", id)
		if err != nil {
			return "Query", err
		}
		n := 0
		for {
			ended := ctx.Err() != nil
			if !rows.Next() {
				break
			}
			if ended {
				rows.Close()
				return "Query", fmt.Errorf("row %d returned after the ctx ended", n+1)
			}
			var v, g int
			var s string
			if err := rows.Scan(&v, &g, &s); err != nil {
				rows.Close()
				return "Query", err
			}
			n++
			if v != id || g != n || len(s) != 200+g%7 {
				rows.Close()
				return "Query", fmt.Errorf("row %d: (%d, %d, %d bytes), want (%d, %d, %d bytes)", n, v, g, len(s), id, n, 200+n%7)
			}
			if n%100 == 0 {
				time.Sleep(200 * time.Microsecond)
			}
		}
		if err := rows.Err(); err != nil {
			return "Query", err
		}
		if n != 600 {
			return "Query", fmt.Errorf("%d rows, want 600", n)
		}
		return "Query", nil
	case 3:
		tag, err := c.Exec(ctx, "SELECT $1::int, pg_sleep(0.001)", id)
		if err == nil && tag.String() != "SELECT 1" {
			err = fmt.Errorf("tag %q", tag)
		}
		return "Exec", err
	case 4:
		b := &Batch{}
		for j := range 3 {
			b.Queue("SELECT $1::int", id*10+j)
		}
		br := c.SendBatch(ctx, b)
		var first error
		for j := range 3 {
			var v int
			err := br.QueryRow().Scan(&v)
			if err == nil && v != id*10+j {
				err = fmt.Errorf("batch statement %d: got %d, want %d", j, v, id*10+j)
			}
			if err != nil && first == nil {
				first = err
			}
		}
		if err := br.Close(); err != nil && first == nil {
			first = err
		}
		return "Batch", first
	default:
		var buf bytes.Buffer
		tag, err := c.CopyTo(ctx, &buf, "COPY (SELECT "+strconv.Itoa(id)+" FROM generate_series(1, 300)) TO STDOUT")
		if err == nil {
			want := strings.Repeat(strconv.Itoa(id)+"\n", 300)
			if tag.RowsAffected() != 300 || buf.String() != want {
				err = fmt.Errorf("tag %q, %d bytes, want 300 lines of %d", tag, buf.Len(), id)
			}
		}
		return "CopyTo", err
	}
}
