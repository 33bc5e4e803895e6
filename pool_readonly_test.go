package pgline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestPoolReadOnlyErrorReroutes: a Pool over two hosts, for writes
// (target_session_attrs=read-write), its role checks an hour apart; the
// second host's sessions are read-only (ALTER SYSTEM SET
// default_transaction_read_only). Then the roles swap, as when an old
// primary is fenced and another takes over: whichever
// call meets the 25006 error first — a statement, rows, a batch, a
// transaction — has the roles checked at once, and the writes go to the
// other host within seconds, not at the next check.
func TestPoolReadOnlyErrorReroutes(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	A, B := startPrimary(t), startPrimary(t)
	for _, s := range []*pgtest.Server{A, B} {
		if err := s.Exec("CREATE TABLE ro_t (n int)"); err != nil {
			t.Fatal(err)
		}
	}
	setReadOnly := func(s *pgtest.Server, on bool) {
		t.Helper()
		sql := "ALTER SYSTEM RESET default_transaction_read_only"
		if on {
			sql = "ALTER SYSTEM SET default_transaction_read_only = on"
		}
		if err := s.Exec(sql); err != nil {
			t.Fatal(err)
		}
		if err := s.Exec("SELECT pg_reload_conf()"); err != nil {
			t.Fatal(err)
		}
	}
	direct, err := Connect(testCtx(t), B.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	// Each write reports the port of the server it ran on.
	const ins = "INSERT INTO ro_t VALUES (1) RETURNING inet_server_port()"
	writes := []struct {
		name  string
		write func(ctx context.Context, p *Pool) (int, error)
	}{
		{"Exec", func(ctx context.Context, p *Pool) (int, error) {
			// Exec returns no rows: the second host's count tells.
			var before, after int
			if err := direct.QueryRow(ctx, "SELECT count(*)::int FROM ro_t").Scan(&before); err != nil {
				return 0, err
			}
			if _, err := p.Exec(ctx, "INSERT INTO ro_t VALUES (1)"); err != nil {
				return 0, err
			}
			if err := direct.QueryRow(ctx, "SELECT count(*)::int FROM ro_t").Scan(&after); err != nil {
				return 0, err
			}
			if after > before {
				return B.Port, nil
			}
			return A.Port, nil
		}},
		{"Query", func(ctx context.Context, p *Pool) (int, error) {
			rows, err := p.Query(ctx, ins)
			if err != nil {
				return 0, err
			}
			defer rows.Close()
			port := 0
			for rows.Next() {
				if err := rows.Scan(&port); err != nil {
					return 0, err
				}
			}
			return port, rows.Err()
		}},
		{"Batch", func(ctx context.Context, p *Pool) (int, error) {
			b := &Batch{}
			b.Queue(ins)
			br := p.SendBatch(ctx, b)
			defer br.Close()
			var port int
			return port, br.QueryRow().Scan(&port)
		}},
		{"Tx", func(ctx context.Context, p *Pool) (int, error) {
			tx, err := p.Begin(ctx)
			if err != nil {
				return 0, err
			}
			defer tx.Rollback(ctx)
			var port int
			if err := tx.QueryRow(ctx, ins).Scan(&port); err != nil {
				return 0, err
			}
			return port, tx.Commit(ctx)
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			ctx := testCtx(t)
			// Writes go to the first host: the second is read-only.
			setReadOnly(A, false)
			setReadOnly(B, true)
			p, err := NewPool(ctx, twoHostDSN(A, B, "target_session_attrs=read-write", "pool_health_check_period=1h", "pool_max_conns=2"))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if port, err := w.write(ctx, p); err != nil || port != A.Port {
				t.Fatalf("before: wrote on port %d, %v; want the first host's %d", port, err, A.Port)
			}
			// The roles swap; the Pool is not told.
			setReadOnly(B, false)
			setReadOnly(A, true)
			start := time.Now()
			refused := 0
			for {
				port, err := w.write(ctx, p)
				var pgErr *PgError
				if errors.As(err, &pgErr) && pgErr.Code == "25006" {
					refused++
					if time.Since(start) > 5*time.Second {
						t.Fatalf("writes still refused (25006) after %v, %d of them: the Pool did not check the roles", time.Since(start), refused)
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if err == nil && port == A.Port {
					// Before the reload reached the session.
					if time.Since(start) > 5*time.Second {
						t.Fatalf("writes still on the first host after %v", time.Since(start))
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if err != nil || port != B.Port {
					t.Fatalf("after: wrote on port %d, %v; want the second host's %d", port, err, B.Port)
				}
				break
			}
			t.Logf("%d writes refused; writes on the second host after %v", refused, time.Since(start))
			if refused == 0 {
				// The reload reached the first host's sessions after the
				// Pool had checked the roles anyway: nothing was tested.
				t.Log("no write was refused")
			}
		})
	}
}
