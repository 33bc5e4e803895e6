package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline"
)

// TestFromPgxDoc checks that docs/from-pgx.md shows the snippets of this
// file verbatim (see checkDocSnippets).
func TestFromPgxDoc(t *testing.T) {
	t.Parallel()
	if tests := checkDocSnippets(t, "from-pgx.md"); len(tests) != 2 {
		t.Errorf("found %d snippets for docs/from-pgx.md in the test files, want 2: %v", len(tests), tests)
	}
}

// from-pgx.md: TestFromPgxPrepareConn
// countPrepares shows when PrepareConn runs: for a connection handed to
// the caller (Acquire, Begin), not for the Pool's own statements.
func countPrepares(ctx context.Context, dsn string) (afterExecs, afterAcquire int64, err error) {
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		return 0, 0, err
	}
	var prepared atomic.Int64
	cfg.PrepareConn = func(ctx context.Context, c *pgline.Conn) (bool, error) {
		prepared.Add(1)
		return true, nil
	}
	pool, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		return 0, 0, err
	}
	defer pool.Close()
	for range 5 {
		if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
			return 0, 0, err
		}
	}
	afterExecs = prepared.Load() // 0: pgx's BeforeAcquire would have run 5 times
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	conn.Release()
	return afterExecs, prepared.Load(), nil // 1
}

// from-pgx.md: end

func TestFromPgxPrepareConn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	execs, acquired, err := countPrepares(ctx, newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	if execs != 0 || acquired != 1 {
		t.Fatalf("PrepareConn ran %d times for 5 Execs and %d after an Acquire; want 0 and 1", execs, acquired)
	}
}

// from-pgx.md: TestFromPgxReleaseResets
// timeoutAfterRelease sets statement_timeout on an acquired connection,
// releases it and acquires it again: Release reset the session to what
// AfterConnect made.
func timeoutAfterRelease(ctx context.Context, dsn string) (string, error) {
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	cfg.Pool.MaxConns = 1 // the same connection both times
	cfg.AfterConnect = func(ctx context.Context, c *pgline.Conn) error {
		_, err := c.Exec(ctx, "SET statement_timeout = '30s'")
		return err
	}
	pool, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "SET statement_timeout = '5s'"); err != nil {
		conn.Release()
		return "", err
	}
	conn.Release() // pgx's Release would keep 5s
	conn, err = pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	var timeout string
	err = conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&timeout)
	return timeout, err // "30s"
}

// from-pgx.md: end

func TestFromPgxReleaseResets(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := timeoutAfterRelease(ctx, newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	if got != "30s" {
		t.Fatalf("statement_timeout after Release and Acquire: %s, want AfterConnect's 30s", got)
	}
}
