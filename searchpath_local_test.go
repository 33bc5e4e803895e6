package pgline

// SET LOCAL search_path (and what else changes it within a transaction:
// savepoints, SET LOCAL ROLE, set_config, batches) with statements cached
// outside the transaction: each read gives its own schema's value and type.
// The helpers here are shared with the Pool's search_path tests.

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/pgline/pgline/internal/session"
)

// pathSetup runs setup (a multi-statement text) on c and drops the schemas
// and public tables listed in cleanup afterwards.
func pathSetup(t *testing.T, c *Conn, setup, cleanup string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, cleanup); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), cleanup) })
}

// inLocalPathTx runs fn in a transaction of c whose first statement is set
// (SET LOCAL search_path = ...), and commits it.
func inLocalPathTx(t *testing.T, c *Conn, set string, fn func(ctx context.Context, tx *Tx) error) error {
	t.Helper()
	ctx := testCtx(t)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if set != "" {
		if _, err := tx.Exec(ctx, set); err != nil {
			return err
		}
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// pathTypesSetup: lp_t is int4 (7) in public, text ('schema') in lp_s.
const pathTypesSetup = `CREATE SCHEMA lp_s; CREATE TABLE lp_s.lp_t (v text); INSERT INTO lp_s.lp_t VALUES ('schema');
	CREATE TABLE public.lp_t (v int4); INSERT INTO public.lp_t VALUES (7)`

const pathTypesCleanup = `DROP SCHEMA IF EXISTS lp_s CASCADE; DROP TABLE IF EXISTS public.lp_t`

const pathQ = "SELECT v FROM lp_t WHERE $1::int4 = 1"

func checkOutsidePath(t *testing.T, c *Conn) {
	t.Helper()
	var v any
	if err := c.QueryRow(testCtx(t), pathQ, 1).Scan(&v); err != nil || v != int32(7) {
		t.Fatalf("outside: %#v, %v; want int32 7", v, err)
	}
}

// TestSearchPathLocalSavepoints: SET LOCAL search_path inside a savepoint
// (tx.Begin), read there, in the parent after RELEASE, and after a
// ROLLBACK TO (search_path back to the session's): each read gives its
// own schema's value and type, in both cache modes, with the statement
// cached outside before and used outside after.
func TestSearchPathLocalSavepoints(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			ctx := testCtx(t)
			checkOutsidePath(t, c)
			read := func(tx *Tx, want any, what string) {
				t.Helper()
				var v any
				if err := tx.QueryRow(ctx, pathQ, 1).Scan(&v); err != nil || v != want {
					t.Fatalf("%s: %#v, %v; want %#v", what, v, err, want)
				}
			}
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			read(tx, int32(7), "in the transaction, before any SET")
			sp, err := tx.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sp.Exec(ctx, "SET LOCAL search_path = lp_s"); err != nil {
				t.Fatal(err)
			}
			read(sp, "schema", "in the savepoint after SET LOCAL")
			if err := sp.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			read(tx, int32(7), "after ROLLBACK TO SAVEPOINT")
			sp2, err := tx.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sp2.Exec(ctx, "SELECT set_config('search_path', 'lp_s', true)"); err != nil {
				t.Fatal(err)
			}
			if err := sp2.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			read(tx, "schema", "after RELEASE of a savepoint that set search_path")
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			checkOutsidePath(t, c)
		})
	}
}

// TestSearchPathLocalSetRole: SET LOCAL ROLE to a role whose schema
// ("$user" in the default search_path) has lp_t as text.
func TestSearchPathLocalSetRole(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			cleanup := `DROP SCHEMA IF EXISTS lp_role CASCADE; DROP TABLE IF EXISTS public.lp_t;
				DO $$BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'lp_role') THEN
					EXECUTE 'DROP OWNED BY lp_role'; EXECUTE 'DROP ROLE lp_role'; END IF; END$$`
			pathSetup(t, c, `CREATE ROLE lp_role; CREATE SCHEMA lp_role AUTHORIZATION lp_role;
				CREATE TABLE lp_role.lp_t (v text); INSERT INTO lp_role.lp_t VALUES ('schema');
				ALTER TABLE lp_role.lp_t OWNER TO lp_role;
				CREATE TABLE public.lp_t (v int4); INSERT INTO public.lp_t VALUES (7);
				GRANT SELECT ON public.lp_t TO lp_role`, cleanup)
			for i := range 2 {
				checkOutsidePath(t, c)
				var v any
				err := inLocalPathTx(t, c, "SET LOCAL ROLE lp_role", func(ctx context.Context, tx *Tx) error {
					return tx.QueryRow(ctx, pathQ, 1).Scan(&v)
				})
				if err != nil || v != "schema" {
					t.Fatalf("attempt %d, SET LOCAL ROLE lp_role: %#v, %v; want \"schema\"", i, v, err)
				}
			}
			checkOutsidePath(t, c)
		})
	}
}

// TestSearchPathSetConfigArgs: search_path set with set_config whose
// setting name is an argument ($1), which the SQL scanner cannot see: the
// statement cached outside (int4) must still read the schema's text. The
// scanner takes the word set_config as a change of search_path; before
// it did, in prepare mode the transaction's statements kept binding the
// named statement, which the server refused (0A000, aborting the
// transaction) on every attempt.
func TestSearchPathSetConfigArgs(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			for i := range 2 {
				checkOutsidePath(t, c)
				var v any
				err := inLocalPathTx(t, c, "", func(ctx context.Context, tx *Tx) error {
					if _, err := tx.Exec(ctx, "SELECT set_config($1, $2, true)", "search_path", "lp_s"); err != nil {
						return err
					}
					return tx.QueryRow(ctx, pathQ, 1).Scan(&v)
				})
				if err != nil || v != "schema" {
					t.Errorf("attempt %d: %#v, %v; want \"schema\"", i, v, err)
				}
			}
		})
	}
}

// TestSearchPathLocalBatches: in a transaction, an all-or-nothing batch
// [SET LOCAL search_path, the statement] fails before it is sent (the
// statement was described under the old search_path); after a SET LOCAL
// of its own, an independent batch and a Query of the statement read the
// schema's text, while the statement is used outside between
// transactions.
func TestSearchPathLocalBatches(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			for i := range 2 {
				checkOutsidePath(t, c)
				err := inLocalPathTx(t, c, "", func(ctx context.Context, tx *Tx) error {
					// The statement after the SET in the same batch was
					// described under the session's search_path: the
					// batch fails before anything is sent (see
					// Conn.boundLocked), and the SET is sent alone.
					b := &Batch{AllOrNothing: true}
					b.Queue("SET LOCAL search_path = lp_s")
					b.Queue(pathQ, 1)
					if err := tx.SendBatch(ctx, b).Close(); !errors.Is(err, session.ErrPathChanged) {
						return errors.Join(err, errors.New("all-or-nothing batch [SET, q]: want errPathChanged"))
					}
					if _, err := tx.Exec(ctx, "SET LOCAL search_path = lp_s"); err != nil {
						return err
					}
					b2 := &Batch{}
					b2.Queue(pathQ, 1)
					b2.Queue(pathQ, 1)
					br2 := tx.SendBatch(ctx, b2)
					for range 2 {
						var v any
						if err := br2.QueryRow().Scan(&v); err != nil || v != "schema" {
							br2.Close()
							return errors.Join(err, errors.New("batch read "+anyString(v)))
						}
					}
					if err := br2.Close(); err != nil {
						return err
					}
					rows, err := tx.Query(ctx, pathQ, 1)
					if err != nil {
						return err
					}
					defer rows.Close()
					if !rows.Next() {
						return errors.Join(rows.Err(), errors.New("no row"))
					}
					vals, err := rows.Values()
					if err != nil || vals[0] != "schema" {
						return errors.Join(err, errors.New("Query read "+anyString(vals)))
					}
					rows.Close()
					return rows.Err()
				})
				if err != nil {
					t.Fatalf("attempt %d: %v", i, err)
				}
			}
			checkOutsidePath(t, c)
		})
	}
}

func anyString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "<nil>"
	}
	return "non-string value"
}

// TestSearchPathLocalConcurrentTxAndOutside: goroutines run the statement
// on the same Tx (which set search_path) and on the Conn outside at once:
// the transaction's reads give the schema's text, the outside reads
// (which run before or after the transaction) the session's int4.
func TestSearchPathLocalConcurrentTxAndOutside(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			pathSetup(t, c, pathTypesSetup, pathTypesCleanup)
			ctx := testCtx(t)
			checkOutsidePath(t, c)
			for round := range 3 {
				errs := make(chan error, 64)
				var outWG, txWG sync.WaitGroup
				for range 4 {
					outWG.Add(1)
					go func() {
						defer outWG.Done()
						for range 3 {
							var v any
							if err := c.QueryRow(ctx, pathQ, 1).Scan(&v); err != nil || v != int32(7) {
								errs <- errors.Join(err, errors.New("outside read "+anyString(v)))
								return
							}
						}
					}()
				}
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for g := range 4 {
					txWG.Add(1)
					go func() {
						defer txWG.Done()
						if g == 0 {
							if _, err := tx.Exec(ctx, "SET LOCAL search_path = lp_s"); err != nil {
								errs <- err
							}
						}
						for range 5 {
							var v any
							err := tx.QueryRow(ctx, pathQ, 1).Scan(&v)
							// before the SET (another goroutine's), the
							// session's value; after it, the schema's
							if err != nil || v != "schema" && v != int32(7) {
								errs <- errors.Join(err, errors.New("tx read "+anyString(v)))
								return
							}
						}
					}()
				}
				txWG.Wait()
				var v any
				if err := tx.QueryRow(ctx, pathQ, 1).Scan(&v); err != nil || v != "schema" {
					t.Fatalf("round %d: after the SET: %#v, %v", round, v, err)
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatalf("round %d: commit: %v", round, err)
				}
				outWG.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("round %d: %v", round, err)
				}
				checkOutsidePath(t, c)
			}
		})
	}
}
