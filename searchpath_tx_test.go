package pgline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestSearchPathLocalPreparedInTx: a statement first run (prepared and
// cached) inside a transaction whose SET LOCAL search_path points at
// another schema is then run outside it, and in a second transaction with
// a third schema. Each run must read the table its own search_path names:
// the server parses a prepared statement again when search_path changed
// (PostgreSQL 9.3 and later), and pgline's cache must not stand in the
// way, in either statement cache mode. When the other schema's column
// has another type, the run outside meets the server's "cached plan must
// not change result type" and is prepared again: the value comes back
// with its own type, never decoded with the other's. Inside a transaction
// that error would abort it: there, after SET LOCAL search_path, the
// statement binds unnamed.
func TestSearchPathLocalPreparedInTx(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp_a CASCADE; DROP SCHEMA IF EXISTS sp_b CASCADE;
				DROP SCHEMA IF EXISTS sp_c CASCADE; DROP TABLE IF EXISTS public.sp_t;
				CREATE SCHEMA sp_a; CREATE SCHEMA sp_b; CREATE SCHEMA sp_c;
				CREATE TABLE sp_c.sp_t (v text); INSERT INTO sp_c.sp_t VALUES ('four');
				CREATE TABLE sp_a.sp_t (v int4); INSERT INTO sp_a.sp_t VALUES (1);
				CREATE TABLE sp_b.sp_t (v int4); INSERT INTO sp_b.sp_t VALUES (2);
				CREATE TABLE public.sp_t (v int4); INSERT INTO public.sp_t VALUES (3)`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.Exec(ctx, "DROP SCHEMA IF EXISTS sp_a CASCADE; DROP SCHEMA IF EXISTS sp_b CASCADE; DROP SCHEMA IF EXISTS sp_c CASCADE; DROP TABLE IF EXISTS public.sp_t")
			})
			const q = "SELECT v FROM sp_t WHERE $1::int4 = 1"
			inTxErr := func(schema string) (any, error) {
				t.Helper()
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
				if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+schema); err != nil {
					t.Fatal(err)
				}
				var v any
				if err := tx.QueryRow(ctx, q, 1).Scan(&v); err != nil {
					return nil, err
				}
				return v, tx.Commit(ctx)
			}
			inTx := func(schema string) any {
				t.Helper()
				v, err := inTxErr(schema)
				if err != nil {
					t.Fatalf("in a transaction with search_path %s: %v", schema, err)
				}
				return v
			}
			outside := func() any {
				t.Helper()
				var v any
				if err := c.QueryRow(ctx, q, 1).Scan(&v); err != nil {
					t.Fatalf("outside a transaction: %v", err)
				}
				return v
			}
			if v := inTx("sp_a"); v != int32(1) {
				t.Fatalf("search_path sp_a read %#v, want int32 1", v)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside, after the statement was cached under sp_a: read %#v, want int32 3 (public.sp_t)", v)
			}
			if v := inTx("sp_b"); v != int32(2) {
				t.Fatalf("search_path sp_b read %#v, want int32 2", v)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside again: read %v, want 3", v)
			}
			// The statement cached outside (int4) would be parsed again
			// by the server under sp_c (text), which refuses a named
			// statement whose result type changed (0A000, aborting the
			// transaction): after SET LOCAL search_path the transaction's
			// statements bind unnamed (Conn.boundLocked).
			if v, err := inTxErr("sp_c"); err != nil || v != "four" {
				t.Fatalf("search_path sp_c (a text column) read %#v, %v; want \"four\"", v, err)
			}
			if v := outside(); v != int32(3) {
				t.Fatalf("outside, after the statement was cached with a text column: read %#v, want int32 3", v)
			}
		})
	}
}

// TestSearchPathTxRetryAfterOutsideUse: a transaction changes search_path
// to a schema whose table has a text column, then runs a statement that
// the connection has cached under the session's search_path (an int4
// column), and another goroutine runs the same statement outside between
// the transaction's attempts, caching it again each time. Bound by name,
// the server refused every attempt (0A000, aborting the transaction);
// the first attempt must read the schema's value, for each way of
// changing search_path (a simple SET LOCAL, set_config with an argument,
// SET LOCAL before a batch), in both cache modes.
func TestSearchPathTxRetryAfterOutsideUse(t *testing.T) {
	const q = "SELECT v FROM sp2_t WHERE $1::int4 = 1"
	ways := map[string]func(ctx context.Context, tx *Tx) (any, error){
		"SET LOCAL": func(ctx context.Context, tx *Tx) (any, error) {
			if _, err := tx.Exec(ctx, "SET LOCAL search_path = sp2"); err != nil {
				return nil, err
			}
			var v any
			err := tx.QueryRow(ctx, q, 1).Scan(&v)
			return v, err
		},
		"set_config": func(ctx context.Context, tx *Tx) (any, error) {
			if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", "sp2"); err != nil {
				return nil, err
			}
			var v any
			err := tx.QueryRow(ctx, q, 1).Scan(&v)
			return v, err
		},
		"batch": func(ctx context.Context, tx *Tx) (any, error) {
			if _, err := tx.Exec(ctx, "SET LOCAL search_path = sp2"); err != nil {
				return nil, err
			}
			b := &Batch{}
			b.Queue(q, 1)
			b.Queue(q, 1)
			br := tx.SendBatch(ctx, b)
			defer br.Close()
			var v, w any
			if err := br.QueryRow().Scan(&v); err != nil {
				return nil, err
			}
			if err := br.QueryRow().Scan(&w); err != nil || w != v {
				return nil, fmt.Errorf("the batch's second run: %#v, %v; the first read %#v", w, err, v)
			}
			return v, nil
		},
	}
	for _, mode := range []string{"prepare", "describe"} {
		for name, way := range ways {
			t.Run(mode+"/"+name, func(t *testing.T) {
				c := connect(t, srv.DSN("statement_cache_mode="+mode))
				ctx := testCtx(t)
				if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp2 CASCADE; DROP TABLE IF EXISTS public.sp2_t;
					CREATE SCHEMA sp2; CREATE TABLE sp2.sp2_t (v text); INSERT INTO sp2.sp2_t VALUES ('schema');
					CREATE TABLE public.sp2_t (v int4); INSERT INTO public.sp2_t VALUES (7)`); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA IF EXISTS sp2 CASCADE; DROP TABLE IF EXISTS public.sp2_t") })
				outside := func() {
					t.Helper()
					var v any
					if err := c.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != int32(7) {
						t.Fatalf("outside: %#v, %v; want int32 7", v, err)
					}
				}
				for i := range 3 {
					outside() // another goroutine of the application, between attempts
					tx, err := c.Begin(ctx)
					if err != nil {
						t.Fatal(err)
					}
					v, err := way(ctx, tx)
					if err == nil {
						err = tx.Commit(ctx)
					}
					tx.Rollback(ctx)
					if err != nil || v != "schema" {
						t.Fatalf("attempt %d: %#v, %v; want \"schema\"", i, v, err)
					}
				}
				outside()
			})
		}
	}
}

// TestSearchPathBatchAfterPathChangeFails: in a batch, a statement after
// one that may change search_path was described before that one ran,
// under the old search_path: its parameter types may be the old tables'
// (a timestamp argument bound as the date of the session's table, a
// wrong row). Such a batch fails before anything of it is sent, with
// errPathChanged, and the transaction goes on.
func TestSearchPathBatchAfterPathChangeFails(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp3 CASCADE; DROP TABLE IF EXISTS public.sp3_t;
				CREATE SCHEMA sp3; CREATE TABLE sp3.sp3_t (v text); INSERT INTO sp3.sp3_t VALUES ('schema');
				CREATE TABLE public.sp3_t (v int4); INSERT INTO public.sp3_t VALUES (7)`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA IF EXISTS sp3 CASCADE; DROP TABLE IF EXISTS public.sp3_t") })
			const q = "SELECT v FROM sp3_t WHERE $1::int4 = 1"
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			for _, all := range []bool{false, true} {
				b := &Batch{AllOrNothing: all}
				b.Queue("SET LOCAL search_path = sp3")
				b.Queue(q, 1)
				err := tx.SendBatch(ctx, b).Close()
				if !errors.Is(err, session.ErrPathChanged) {
					t.Fatalf("AllOrNothing=%v: %v; want errPathChanged", all, err)
				}
			}
			var sp string
			if err := tx.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&sp); err != nil || sp == "sp3" {
				t.Fatalf("search_path %q, %v: the failed batch's SET ran", sp, err)
			}
			var v any
			if err := tx.QueryRow(ctx, q, 1).Scan(&v); err != nil || v != int32(7) {
				t.Fatalf("after the failed batches: %#v, %v; want int32 7", v, err)
			}
		})
	}
}

// TestSearchPathSessionSetParamType: the column compared with $1 is a date
// in public and a timestamp in another schema. A statement cached under
// the session's first search_path took a date parameter; after SET
// search_path (outside a transaction) the same text must bind the
// argument as the timestamp it now compares with (the noon row, not the
// midnight one a date would match), and after RESET as a date again.
func TestSearchPathSessionSetParamType(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp4 CASCADE; DROP TABLE IF EXISTS public.sp4_t;
				CREATE SCHEMA sp4; CREATE TABLE sp4.sp4_t (k timestamp, v int4);
				INSERT INTO sp4.sp4_t VALUES ('2024-01-01 00:00', 10), ('2024-01-01 12:00', 20);
				CREATE TABLE public.sp4_t (k date, v int4); INSERT INTO public.sp4_t VALUES ('2024-01-01', 1)`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA IF EXISTS sp4 CASCADE; DROP TABLE IF EXISTS public.sp4_t") })
			const q = "SELECT v FROM sp4_t WHERE k = $1"
			noon := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
			read := func(want int32) {
				t.Helper()
				var v int32
				if err := c.QueryRow(ctx, q, noon).Scan(&v); err != nil || v != want {
					t.Fatalf("read %d, %v; want %d", v, err, want)
				}
			}
			read(1)
			if _, err := c.Exec(ctx, "SET search_path = sp4"); err != nil {
				t.Fatal(err)
			}
			read(20)
			if _, err := c.Exec(ctx, "SELECT set_config('search_path', $1, false)", "public"); err != nil {
				t.Fatal(err)
			}
			read(1)
		})
	}
}

// TestSearchPathPoolRelease: Release resets the session (RESET ALL among
// others) and runs AfterConnect again. When nothing changed search_path,
// the connection's statements stay cached (the reset changes no type);
// when AfterConnect set it and the holder set another, a statement cached
// under the holder's search_path (a date parameter) must be described
// again under AfterConnect's, which the reset restores (a timestamp): the
// noon argument matches the noon row.
func TestSearchPathPoolRelease(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS sp5 CASCADE; DROP TABLE IF EXISTS public.sp5_t;
		CREATE SCHEMA sp5; CREATE TABLE sp5.sp5_t (k timestamp, v int4);
		INSERT INTO sp5.sp5_t VALUES ('2024-01-01 00:00', 10), ('2024-01-01 12:00', 20);
		CREATE TABLE public.sp5_t (k date, v int4); INSERT INTO public.sp5_t VALUES ('2024-01-01', 1)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA IF EXISTS sp5 CASCADE; DROP TABLE IF EXISTS public.sp5_t") })
	const q = "SELECT v FROM sp5_t WHERE k = $1"
	noon := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, afterConnect := range []bool{false, true} {
		cfg, err := ParseConfig(srv.DSN("pool_max_conns=1", "statement_cache_mode=prepare"))
		if err != nil {
			t.Fatal(err)
		}
		if afterConnect {
			cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
				_, err := c.Exec(ctx, "SET search_path = sp5")
				return err
			}
		}
		p, err := NewPoolConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var conns [2]*Conn
		for i, want := range []int32{20, 20} {
			if !afterConnect {
				want = 1
			}
			pc, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = pc.Conn
			var v int32
			if err := pc.QueryRow(ctx, q, noon).Scan(&v); err != nil || v != want {
				t.Fatalf("AfterConnect %v, acquisition %d: read %d, %v; want %d", afterConnect, i, v, err, want)
			}
			if afterConnect && i == 0 {
				if _, err := pc.Exec(ctx, "SET search_path = public"); err != nil {
					t.Fatal(err)
				}
				if err := pc.QueryRow(ctx, q, noon).Scan(&v); err != nil || v != 1 {
					t.Fatalf("under the holder's search_path: read %d, %v; want 1", v, err)
				}
			}
			pc.Release()
		}
		if conns[0] != conns[1] {
			t.Fatal("the Pool of one connection gave two")
		}
		if !afterConnect {
			cn := conns[0]
			cn.s.Wmu.Lock()
			cached := cn.s.Stmts.M[q] != nil
			cn.s.Wmu.Unlock()
			if !cached {
				t.Error("Release's reset dropped the statements of a connection whose search_path never changed")
			}
		}
		p.Close()
	}
}
