package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/pgtest"
)

// TestStrayCancelHitsDescribe: a regression test for a bug found here.
//
// A statement whose ctx ends is answered at once; pgline drains its reply
// and sends a CancelRequest. A statement queued behind it on the same
// connection (database/sql hands the connection out again at once) is
// already in the server's input, and PostgreSQL signals a canceled
// backend twice (its pid and its process group): the second signal can
// land on that next statement. pgline's rule for this (Conn.strayCancel:
// "sent again when none of its reply reached its caller; otherwise its
// error wraps ErrCanceledByOther") is applied to statements, but not to
// the Parse/Describe that prepares a SQL text seen for the first time on
// the connection (readDescribe stores the bare 57014 in the statement's
// error). The caller, whose ctx was alive, got "canceling statement due
// to user request (SQLSTATE 57014)". Now such a describe fails with
// ErrCanceledByOther and is sent again (it runs nothing).
//
// The race needs the second signal to come late; pinning the server to
// one CPU (taskset, when present) makes that likely. The test stops at
// the first hit.
func TestStrayCancelHitsDescribe(t *testing.T) {
	t.Parallel()
	if srv == nil {
		t.Skip(noServer)
	}
	if srv.External {
		t.Skip("needs a server of its own, pinned to one CPU")
	}
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pinErr := s.PinCPU("0")
	if pinErr != nil {
		t.Logf("the server is not pinned, and the race is rarer: %v", pinErr)
	}
	pinned := pinErr == nil
	dsn := s.DSN()

	// Each round opens a connection (its caches cold, which makes the hit
	// likelier), lets a pg_sleep(5) run into a 100 ms deadline, and at
	// once runs a SQL text new to the connection: it is prepared first.
	const rounds = 30
	round := func(t *testing.T, i int, query func(ctx context.Context, sql string) (int, error)) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := query(ctx, "SELECT 0 FROM pg_sleep(5)")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: pg_sleep(5) with a 100 ms deadline: %v", i, err)
		}
		got, err := query(testCtx(t), fmt.Sprintf("SELECT %d + count(*)::int FROM information_schema.columns WHERE false", i))
		if err != nil {
			t.Fatalf("round %d of %d (server pinned to one CPU: %v): the statement after a canceled one, "+
				"whose own ctx is alive, failed: %v (wraps ErrCanceledByOther: %v)",
				i, rounds, pinned, err, errors.Is(err, pgline.ErrCanceledByOther))
		}
		if got != i {
			t.Fatalf("round %d: got %d", i, got)
		}
	}
	t.Run("database/sql", func(t *testing.T) {
		for i := range rounds {
			db, err := sql.Open("pgline", dsn)
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			round(t, i, func(ctx context.Context, sql string) (n int, err error) {
				err = db.QueryRowContext(ctx, sql).Scan(&n)
				return n, err
			})
			db.Close()
		}
	})
	t.Run("native", func(t *testing.T) {
		for i := range rounds {
			c, err := pgline.Connect(testCtx(t), dsn)
			if err != nil {
				t.Fatal(err)
			}
			round(t, i, func(ctx context.Context, sql string) (n int, err error) {
				err = c.QueryRow(ctx, sql).Scan(&n)
				return n, err
			})
			c.Close()
		}
	})
}
